// Where a file's bytes live in R2. The server chooses every key; a client never names one.

/** `u/<user id>/<sanitized prefix>/<file id>`: one user's objects share a listable prefix. */
export function objectKey(userId: string, fileId: string, prefix = ''): string {
  return prefix ? `u/${userId}/${prefix}/${fileId}` : `u/${userId}/${fileId}`
}
