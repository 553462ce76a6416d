// Where a file's bytes live in R2. The server chooses every key; a client never names one.

/** `u/<user id>/<sanitized prefix>/<name>`: one user's objects share a listable prefix. */
export function objectKey(userId: string, name: string, prefix = ''): string {
  return prefix ? `u/${userId}/${prefix}/${name}` : `u/${userId}/${name}`
}

/**
 * A conversion output's key, `u/<user id>/[<prefix>/]<step id>-<output index>`: the same for every delivery of
 * the step, so a redelivered step overwrites its objects instead of leaving orphans under fresh ids.
 */
export function outputKey(userId: string, stepId: string, index: number, prefix = ''): string {
  return objectKey(userId, `${stepId}-${index}`, prefix)
}
