// Preview objects in R2 and their rows in D1: the files module writes and deletes them as it writes and deletes
// files, so a preview is counted in its owner's quota and never outlives its file or the content it shows.
// A row goes queued (asked for, the consumer Worker has not drawn it yet) → ready (its object stored) or failed
// (the reason kept for a while, so a hostile file is not drawn again on every request).
import { and, eq, lt, or, sql } from 'drizzle-orm'
import type { Config } from '../config'
import type { Database } from '../db/client'
import { previews } from '../db/schema'
import { ERRORS, type ErrorCode } from '../errors'
import type { FileRow } from './records'
import { deleteObjects, forgetPendingDelete, writeObject } from './objects'
import { holdQuota } from './quota'

export type PreviewRow = typeof previews.$inferSelect

/**
 * `p/<user id>/<file id>/<content hash>/<variant>`: the content hash and the preview's parameters name it, so a
 * replaced content never serves an old preview, and one file's previews share a listable prefix.
 */
export function previewKey(file: Pick<FileRow, 'userId' | 'id' | 'hash'>, variant: string): string {
  return `p/${file.userId}/${file.id}/${file.hash}/${variant}`
}

/** The preview's row under `key`, whatever its state. */
export async function findPreview(
  db: Database,
  file: Pick<FileRow, 'id'>,
  key: string,
): Promise<PreviewRow | undefined> {
  return db.query.previews.findFirst({ where: and(eq(previews.fileId, file.id), eq(previews.key, key)) })
}

/** SQL: the file still exists and holds the content the preview shows. */
const currentContent = (file: Pick<FileRow, 'id' | 'hash'>) =>
  sql`EXISTS (SELECT 1 FROM files WHERE id = ${file.id} AND hash = ${file.hash})`

/**
 * Writes the row `queued` while the file still holds this content and its owner has fewer than `maxQueued`
 * drawings queued. Both are checked in the same statement, so requests at once cannot pass the bound together.
 * Answers whether this call wrote it (the caller then sends the drawing to the queue). A row already there is left.
 */
export async function queuePreview(
  db: Database,
  file: Pick<FileRow, 'id' | 'userId' | 'hash'>,
  key: string,
  now = Date.now(),
  maxQueued = Number.MAX_SAFE_INTEGER,
): Promise<boolean> {
  const result = await db.run(sql`
    INSERT INTO previews (file_id, user_id, key, size, status, created_at, updated_at)
    SELECT ${file.id}, ${file.userId}, ${key}, 0, 'queued', ${now}, ${now}
    WHERE ${currentContent(file)}
      AND (SELECT count(*) FROM previews WHERE user_id = ${file.userId} AND status = 'queued') < ${maxQueued}
    ON CONFLICT DO NOTHING`)
  return result.meta.changes > 0
}

/** How many of the user's previews are queued (asked for, not drawn yet). */
export async function queuedPreviews(db: Database, userId: string): Promise<number> {
  const [row] = await db
    .select({ n: sql<number>`count(*)` })
    .from(previews)
    .where(and(eq(previews.userId, userId), eq(previews.status, 'queued')))
  return row?.n ?? 0
}

/**
 * Queues the row again: a failure that may not happen again (quota, an unavailable engine) or has expired, or a
 * drawing whose message was lost. Only the request that sees the row as `seen` wins (answers true).
 */
export async function requeuePreview(db: Database, seen: PreviewRow, now = Date.now()): Promise<boolean> {
  const rows = await db
    .update(previews)
    .set({ status: 'queued', error: null, errorCode: null, errorStatus: null, size: 0, updatedAt: now })
    .where(
      and(
        eq(previews.fileId, seen.fileId),
        eq(previews.key, seen.key),
        eq(previews.status, seen.status),
        eq(previews.updatedAt, seen.updatedAt),
      ),
    )
    .returning({ key: previews.key })
  return rows.length > 0
}

/** Forgets a queued row whose drawing could not be sent (the next request queues it again). */
export async function unqueuePreview(db: Database, file: Pick<FileRow, 'id'>, key: string): Promise<void> {
  await db
    .delete(previews)
    .where(and(eq(previews.fileId, file.id), eq(previews.key, key), eq(previews.status, 'queued')))
}

/** A queued drawing's failure, with the code its conversion answers; false when the row is gone or settled. */
export async function failPreview(
  db: Database,
  file: Pick<FileRow, 'id'>,
  key: string,
  reason: { message: string; code: ErrorCode },
): Promise<boolean> {
  const rows = await db
    .update(previews)
    .set({
      status: 'failed',
      error: reason.message,
      errorCode: reason.code,
      errorStatus: ERRORS[reason.code].status,
      updatedAt: Date.now(),
    })
    .where(and(eq(previews.fileId, file.id), eq(previews.key, key), eq(previews.status, 'queued')))
    .returning({ key: previews.key })
  return rows.length > 0
}

/**
 * Stores a queued preview's bytes and marks its row ready; 413 when the owner's quota has no room for them. The row
 * changes only while the file still exists with the same content and the row is still queued. A preview drawn
 * while its file was deleted or replaced (the row went with it) is removed again (answers false), not left behind.
 */
export async function storePreview(
  deps: { db: Database; bucket: R2Bucket; config: Config },
  file: FileRow,
  key: string,
  bytes: Uint8Array,
  contentType: string,
): Promise<boolean> {
  // Reserved before the object is written, like every other writer of the user's bytes (worker/files/quota.ts).
  const hold = await holdQuota(deps.db, deps.config.FILES_QUOTA_BYTES, file.userId, { bytes: bytes.byteLength })
  let stored: boolean
  try {
    await writeObject(deps.bucket, key, bytes, contentType)
    const [updated] = await deps.db.batch([
      deps.db
        .update(previews)
        .set({
          status: 'ready',
          size: bytes.byteLength,
          error: null,
          errorCode: null,
          errorStatus: null,
          updatedAt: Date.now(),
        })
        .where(
          and(eq(previews.fileId, file.id), eq(previews.key, key), eq(previews.status, 'queued'), currentContent(file)),
        )
        .returning({ key: previews.key }),
      // The bytes count through the row from here, in the same transaction.
      hold.commit(),
      // A delete of this key that failed earlier must not remove these bytes.
      forgetPendingDelete(deps.db, key),
    ])
    stored = updated.length > 0
  } catch (error) {
    await hold.release()
    await deleteObjects(deps.db, deps.bucket, [key])
    throw error
  }
  if (stored) return true
  // An object exists only beside a ready row: the row went with its file or content, or was failed meanwhile (its
  // messages ran out while this delivery still drew). Another delivery's ready row keeps the object, which this one
  // rewrote byte for byte.
  if ((await findPreview(deps.db, file, key))?.status !== 'ready') await deleteObjects(deps.db, deps.bucket, [key])
  return false
}

/**
 * The scheduled sweep's part: failed rows older than PREVIEW_FAILURE_TTL (asked again, they would be drawn again
 * anyway) and queued rows whose drawing has waited longer than `queuedTtlMs` (its messages ran out). Neither has an
 * object: only a ready row does (storePreview).
 */
export async function sweepPreviewRows(
  db: Database,
  config: Pick<Config, 'PREVIEW_FAILURE_TTL'>,
  now = Date.now(),
  queuedTtlMs = 24 * 60 * 60 * 1000,
): Promise<number> {
  const rows = await db
    .delete(previews)
    .where(
      or(
        and(eq(previews.status, 'failed'), lt(previews.updatedAt, now - config.PREVIEW_FAILURE_TTL * 1000)),
        and(eq(previews.status, 'queued'), lt(previews.updatedAt, now - queuedTtlMs)),
      ),
    )
    .returning({ key: previews.key })
  return rows.length
}
