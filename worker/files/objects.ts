// Objects in R2: reading and writing whole objects (previews; uploads stream through store.ts), the one batched
// delete every module calls (R2 takes at most 1000 keys a call), and the record of what failed to delete
// (pending_deletes), retried by the scheduled sweep, so an object that outlived its record is never lost track of.
import { eq, inArray, sql } from 'drizzle-orm'
import type { Database } from '../db/client'
import { pendingDeletes } from '../db/schema'
import { describeError } from '../errors'

/** One object's bytes and metadata, or null when it is gone. */
export function readObject(bucket: R2Bucket, key: string): Promise<R2ObjectBody | null> {
  return bucket.get(key)
}

/** Writes a small object whose bytes are all in hand (a preview). */
export async function writeObject(
  bucket: R2Bucket,
  key: string,
  bytes: Uint8Array,
  contentType: string,
): Promise<void> {
  await bucket.put(key, bytes, { httpMetadata: { contentType } })
}

/** R2's limit: "delete … up to 1000 keys" per call (R2 Workers API, `R2Bucket.delete`). */
export const R2_DELETE_MAX_KEYS = 1000
// D1 binds at most 100 parameters a statement: 4 a row.
const ROWS_PER_INSERT = 20

function chunk<T>(items: readonly T[], size: number): T[][] {
  const chunks: T[][] = []
  for (let start = 0; start < items.length; start += size) chunks.push(items.slice(start, start + size))
  return chunks
}

/**
 * Deletes the objects in calls of at most 1000 keys. Never throws: the keys of a call that failed are recorded in
 * pending_deletes for the sweep. Answers how many keys could not be deleted now.
 */
export async function deleteObjects(db: Database, bucket: R2Bucket, keys: readonly string[]): Promise<number> {
  const failed: string[] = []
  let cause: unknown
  for (const batch of chunk([...new Set(keys)], R2_DELETE_MAX_KEYS)) {
    try {
      await bucket.delete(batch)
    } catch (error) {
      failed.push(...batch)
      cause = error
    }
  }
  if (failed.length > 0) await recordPendingDeletes(db, failed, cause)
  return failed.length
}

async function recordPendingDeletes(db: Database, keys: readonly string[], cause: unknown): Promise<void> {
  const now = Date.now()
  const error = describeError(cause).slice(0, 500)
  try {
    const inserts = chunk(keys, ROWS_PER_INSERT).map((batch) =>
      db
        .insert(pendingDeletes)
        .values(batch.map((key) => ({ key, attempts: 1, createdAt: now, error })))
        .onConflictDoUpdate({
          target: pendingDeletes.key,
          set: { attempts: sql`${pendingDeletes.attempts} + 1`, error: sql`excluded.error` },
        }),
    )
    await db.batch(inserts as [(typeof inserts)[number], ...typeof inserts])
  } catch (recordError) {
    // Nowhere left to remember them: the log is the last record of these keys.
    console.error(
      JSON.stringify({
        level: 'error',
        message: 'objects left undeleted',
        keys,
        error,
        recordError: describeError(recordError),
      }),
    )
  }
}

/** For the batch that writes a record at `key`: a delete of that key still pending must not remove its bytes. */
export function forgetPendingDelete(db: Database, key: string) {
  return db.delete(pendingDeletes).where(eq(pendingDeletes.key, key))
}

/**
 * The scheduled sweep: deletes the keys that failed before, except any a record points at again (a conversion
 * output's key is the same for every delivery of its step). Answers how many were deleted.
 */
export async function retryPendingDeletes(
  db: Database,
  bucket: R2Bucket,
  limit = 5 * R2_DELETE_MAX_KEYS,
): Promise<number> {
  const pending = await db.all<{ key: string; is_referenced: number }>(sql`
    SELECT key, EXISTS (SELECT 1 FROM files WHERE files.key = pending_deletes.key) AS is_referenced
    FROM pending_deletes ORDER BY created_at LIMIT ${limit}`)
  const referenced = pending.filter((row) => row.is_referenced).map((row) => row.key)
  const doomed = pending.filter((row) => !row.is_referenced).map((row) => row.key)
  let deleted = 0
  for (const batch of chunk(doomed, R2_DELETE_MAX_KEYS)) {
    try {
      await bucket.delete(batch)
      deleted += batch.length
      referenced.push(...batch)
    } catch (error) {
      await recordPendingDeletes(db, batch, error)
    }
  }
  for (const batch of chunk(referenced, 90)) await db.delete(pendingDeletes).where(inArray(pendingDeletes.key, batch))
  return deleted
}
