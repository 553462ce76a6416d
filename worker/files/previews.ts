// Preview objects in R2 and their rows in D1: the files module writes and deletes them as it writes and deletes
// files, so a preview is counted in its owner's quota and never outlives its file or the content it shows.
import { and, eq, sql } from 'drizzle-orm'
import type { Config } from '../config'
import type { Database } from '../db/client'
import { previews } from '../db/schema'
import type { FileRow } from './records'
import { holdQuota } from './quota'

/**
 * `p/<user id>/<file id>/<content hash>/<variant>`: the content hash and the preview's parameters name it, so a
 * replaced content never serves an old preview, and one file's previews share a listable prefix.
 */
export function previewKey(file: Pick<FileRow, 'userId' | 'id' | 'hash'>, variant: string): string {
  return `p/${file.userId}/${file.id}/${file.hash}/${variant}`
}

/** Whether the preview under `key` is stored for this file. */
export async function hasPreview(db: Database, file: Pick<FileRow, 'id'>, key: string): Promise<boolean> {
  const row = await db.query.previews.findFirst({ columns: { key: true }, where: and(eq(previews.fileId, file.id), eq(previews.key, key)) })
  return row !== undefined
}

/**
 * Stores a preview's bytes and row; 413 when the owner's quota has no room for them. The row is written only
 * while the file still exists with the same content: a preview made while its file was deleted or replaced is
 * removed again (answers false) instead of being left behind.
 */
export async function storePreview(deps: { db: Database; bucket: R2Bucket; config: Config }, file: FileRow, key: string, bytes: Uint8Array, contentType: string): Promise<boolean> {
  // Reserved before the object is written, like every other writer of the user's bytes (worker/files/quota.ts).
  const hold = await holdQuota(deps.db, deps.config.FILES_QUOTA_BYTES, file.userId, { bytes: bytes.byteLength })
  try {
    await deps.bucket.put(key, bytes, { httpMetadata: { contentType } })
    await deps.db.run(sql`
      INSERT INTO previews (file_id, user_id, key, size, created_at)
      SELECT ${file.id}, ${file.userId}, ${key}, ${bytes.byteLength}, ${Date.now()}
      WHERE EXISTS (SELECT 1 FROM files WHERE id = ${file.id} AND hash = ${file.hash})
      ON CONFLICT DO NOTHING`)
    // The bytes count through the row from here (a holder dying in between is counted twice until the hold expires).
    await hold.commit()
  } catch (error) {
    await hold.release()
    await deps.bucket.delete(key).catch(() => {})
    throw error
  }
  if (await hasPreview(deps.db, file, key)) return true
  await deps.bucket.delete(key)
  return false
}
