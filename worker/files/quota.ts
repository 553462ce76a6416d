// The storage quota (FILES_QUOTA_BYTES): bytes are reserved in D1 before they are written, so parallel writers cannot
// pass the quota together. A user's usage is the sum of their files' sizes plus their unexpired reservations
// (storage_reservations) and previews, read and compared inside the one SQL statement that reserves: D1 runs a
// statement atomically, so two reservations never both see the same bytes free.
//
// Contract, for every writer of a user's bytes (POST /files, PUT /files/:id, conversion outputs, resumable parts):
//  1. Before the first byte: `const hold = await holdQuota(db, quotaBytes, userId, { bytes })`. It reserves
//     `bytes` (1 when the size is not known yet) or throws 413 `QUOTA_EXCEEDED` ("storage quota exceeded: …").
//     `reclaimBytes`: what the write frees once committed (a replace's old content): not counted as used.
//  2. Before writing past what is reserved: `await hold.ensure(totalBytes)` (the total so far, not the increment).
//     It grows the reservation (a little ahead, so a stream costs few round trips) or throws the same 413.
//  3. On success: put `hold.commit()` in the same D1 batch that writes the file record; the bytes then count
//     through the record, and the reservation ends in the same transaction.
//  4. On failure: `await hold.release()` (idempotent, never throws). A holder that dies instead stops counting
//     at `expiresAt` (ttlMs, 1 h by default); the scheduled sweep (sweepExpiredReservations) deletes the row.
// A resumable upload passes its upload id as `id` and its TTL as `ttlMs`: calling holdQuota again with the same id
// (each part, with the new total) resizes that one reservation; `releaseQuota(db, id)` ends it on abort or expiry
// and `commitQuota(db, id)` in the completing batch. With FILES_QUOTA_BYTES = 0 nothing is reserved or checked.
import { eq, lte, type SQL, sql } from 'drizzle-orm'
import type { Database } from '../db/client'
import { insertForUser } from '../db/guarded'
import { newId } from '../db/ids'
import { storageReservations, users } from '../db/schema'
import { ApiError } from '../errors'

const HOUR_MS = 60 * 60 * 1000
const MiB = 1024 * 1024

export interface QuotaHold {
  readonly id: string
  /** Makes sure `totalBytes` are reserved; throws 413 QUOTA_EXCEEDED when that would pass the quota. */
  ensure(totalBytes: number): Promise<void>
  /** The statement that ends the reservation, for the batch that writes the file record. */
  commit(): ReturnType<typeof commitQuota>
  /** Says the batch with `commit()` succeeded: `release` has nothing left to end (and costs no round trip). */
  committed(): void
  release(): Promise<void>
}

export interface HoldOptions {
  /** Bytes to reserve at once (a declared size); absent when unknown. */
  readonly bytes?: number
  /** Bytes the write frees when it commits (the content it replaces): not counted as used. */
  readonly reclaimBytes?: number
  /** A stable id (a resumable upload's) to resize the same reservation across requests. */
  readonly id?: string
  readonly ttlMs?: number
}

export function quotaExceeded(used: number, quota: number, size?: number): ApiError {
  const left = Math.max(0, quota - used)
  return new ApiError('QUOTA_EXCEEDED', {
    message: `storage quota exceeded: ${used} of ${quota} bytes used, ${left} left${size === undefined ? '' : `, the file has ${size}`}`,
    details: { used, quota },
  })
}

/** The bytes a user's files, their previews and unexpired reservations (but `exceptId`'s) take. */
function usedSql(userId: string, now: number, exceptId: string) {
  return sql`((SELECT COALESCE(SUM(size), 0) FROM files WHERE user_id = ${userId})
    + (SELECT COALESCE(SUM(size), 0) FROM previews WHERE user_id = ${userId})
    + (SELECT COALESCE(SUM(bytes), 0) FROM storage_reservations WHERE user_id = ${userId} AND expires_at > ${now} AND id != ${exceptId}))`
}

/** What the user has stored and reserved, less `reclaimBytes`, not counting reservation `exceptId`. */
export async function usedBytes(
  db: Database,
  userId: string,
  options: { exceptId?: string; reclaimBytes?: number } = {},
): Promise<number> {
  const [row] = await db.all<{ used: number }>(
    sql`SELECT ${usedSql(userId, Date.now(), options.exceptId ?? '')} AS used`,
  )
  return Math.max(0, Number(row?.used ?? 0) - (options.reclaimBytes ?? 0))
}

/** Sets reservation `id` to `bytes` if the user's usage leaves room for them: one statement, so atomic. */
async function tryReserve(
  db: Database,
  quota: number,
  userId: string,
  id: string,
  bytes: number,
  reclaimBytes: number,
  ttlMs: number,
): Promise<boolean> {
  const now = Date.now()
  const rows = await db.all<{ id: string }>(sql`
    INSERT INTO storage_reservations (id, user_id, bytes, expires_at)
    SELECT ${id}, ${userId}, ${bytes}, ${now + ttlMs}
    WHERE ${usedSql(userId, now, id)} - ${reclaimBytes} + ${bytes} <= ${quota}
    ON CONFLICT (id) DO UPDATE SET bytes = excluded.bytes, expires_at = excluded.expires_at
    RETURNING id`)
  return rows.length > 0
}

/**
 * A first reservation as statements for a batch (the session check's). The INSERT reserves `bytes` for `id` when
 * the user's usage leaves room and `guard` holds (callerIsLive: a refused token reserves nothing), and answers the
 * id. The read after it is what the user uses beside it, for the 413's message. Settle the batch's two results with
 * `settleReservation`. With FILES_QUOTA_BYTES = 0 nothing is reserved.
 */
export function reservationQueries(
  db: Database,
  quotaBytes: number,
  userId: string,
  options: HoldOptions & { readonly id: string; readonly guard: SQL; readonly sized?: SQL; readonly ahead?: number },
) {
  const now = Date.now()
  const used = sql`${usedSql(userId, now, options.id)} - ${options.reclaimBytes ?? 0}`
  // `sized`: the bytes as SQL, read in the statement itself (a resumable upload's declared size or its parts' sum).
  // `ahead`: an unknown size holds that much when the quota has room for it, else one byte (as ensure grows a hold).
  const bytes =
    options.sized ??
    (options.bytes === undefined && options.ahead
      ? sql`case when ${used} + ${options.ahead} <= ${quotaBytes} then ${options.ahead} else 1 end`
      : sql`${options.bytes ?? 1}`)
  const room = sql`${quotaBytes} > 0 and ${used} + ${options.bytes ?? 1} <= ${quotaBytes} and ${used} + ${bytes} <= ${quotaBytes}`
  // insertForUser takes SQL for a column's value (the bytes read in the statement).
  const row = { id: options.id, userId, bytes: bytes as unknown as number, expiresAt: now + (options.ttlMs ?? HOUR_MS) }
  return [
    // A reservation that is there already (a resumable upload's) is resized, as holdQuota does.
    insertForUser(db, storageReservations, row, userId, sql`${options.guard} and ${room}`)
      .onConflictDoUpdate({
        target: storageReservations.id,
        set: { bytes: sql`excluded.bytes`, expiresAt: sql`excluded.expires_at` },
      })
      .returning({ id: storageReservations.id, bytes: storageReservations.bytes }),
    db
      .select({ used: sql<number>`${usedSql(userId, now, options.id)}`.mapWith(Number) })
      .from(users)
      .where(eq(users.id, userId)),
  ] as const
}

/** The 413 QUOTA_EXCEEDED when `reservationQueries`' INSERT reserved nothing (and a quota is set). */
export function settleReservation(
  [reserved, [usage]]: readonly [ReadonlyArray<{ id: string; bytes: number }>, ReadonlyArray<{ used: number }>],
  quotaBytes: number,
  options: HoldOptions = {},
): void {
  if (quotaBytes === 0 || reserved.length > 0) return
  const used = Math.max(0, Number(usage?.used ?? 0) - (options.reclaimBytes ?? 0))
  throw quotaExceeded(used, quotaBytes, options.bytes)
}

export function commitQuota(db: Database, id: string) {
  return db.delete(storageReservations).where(eq(storageReservations.id, id))
}

export async function releaseQuota(db: Database, id: string): Promise<void> {
  await commitQuota(db, id).catch(() => {})
}

/** Reserves `options.bytes` for the user (413 when the quota has no room) and answers the hold to grow and end. */
export async function holdQuota(
  db: Database,
  quotaBytes: number,
  userId: string,
  options: HoldOptions = {},
): Promise<QuotaHold> {
  const { hold, reserve, exceeded } = quotaHold(db, quotaBytes, userId, { ...options, id: options.id ?? newId() }, 0)
  // An unknown size needs room for one byte at least: a user at the quota is refused before sending anything.
  if (quotaBytes > 0 && !(await reserve(options.bytes ?? 1))) throw await exceeded(options.bytes)
  return hold
}

/**
 * The hold that `reservationQueries` took in a batch (settled by `settleReservation`), to grow and end as holdQuota's:
 * `id` and the options are the ones the queries were built with.
 */
export function adoptedHold(
  db: Database,
  quotaBytes: number,
  userId: string,
  options: HoldOptions & { readonly id: string },
  held: readonly [ReadonlyArray<{ id: string; bytes: number }>, ReadonlyArray<{ used: number }>],
): QuotaHold {
  settleReservation(held, quotaBytes, options)
  return quotaHold(db, quotaBytes, userId, options, Number(held[0][0]?.bytes ?? 0)).hold
}

function quotaHold(
  db: Database,
  quotaBytes: number,
  userId: string,
  options: HoldOptions & { readonly id: string },
  alreadyReserved: number,
): { hold: QuotaHold; reserve(bytes: number): Promise<boolean>; exceeded(size?: number): Promise<ApiError> } {
  const id = options.id
  const reclaimBytes = options.reclaimBytes ?? 0
  const ttlMs = options.ttlMs ?? HOUR_MS
  let reserved = alreadyReserved
  let committed = false
  const exceeded = async (size?: number) =>
    quotaExceeded(await usedBytes(db, userId, { exceptId: id, reclaimBytes }), quotaBytes, size)
  const reserve = async (bytes: number) => {
    if (!(await tryReserve(db, quotaBytes, userId, id, bytes, reclaimBytes, ttlMs))) return false
    reserved = bytes
    return true
  }
  const hold: QuotaHold = {
    id,
    async ensure(totalBytes) {
      if (quotaBytes === 0 || totalBytes <= reserved) return
      // Ahead by a quarter of what is held (1-16 MiB): a 100 MB stream grows its hold a dozen times, not per chunk.
      const ahead = Math.min(16 * MiB, Math.max(MiB, Math.floor(reserved / 4)))
      if ((await reserve(totalBytes + ahead)) || (await reserve(totalBytes))) return
      throw await exceeded()
    },
    commit: () => commitQuota(db, id),
    committed: () => {
      committed = true
    },
    release: async () => {
      if (!committed) await releaseQuota(db, id)
    },
  }
  return { hold, reserve, exceeded }
}

/** The scheduled sweep: reservations whose holder died (they stopped counting at expiry) are removed. */
export async function sweepExpiredReservations(db: Database, now = Date.now()): Promise<number> {
  const removed = await db
    .delete(storageReservations)
    .where(lte(storageReservations.expiresAt, now))
    .returning({ id: storageReservations.id })
  return removed.length
}
