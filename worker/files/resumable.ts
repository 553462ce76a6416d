// The one upload engine under both resumable APIs (POST /files/uploads and tus at /files/tus): an R2 multipart
// upload under a server-chosen key whose part size is fixed when it starts, because R2 refuses a multipart upload
// whose parts (all but the last) differ in size (Cloudflare's R2 docs, "Multipart upload": "All parts except the
// last one must be the same size"); local R2 does not check that, so this module does. Completing joins the
// parts into a normal file record whose hash and type are read back from the stored bytes; aborting, expiring or
// deleting the user leaves nothing behind.
import { and, asc, eq, gt, lte, sql, type SQL } from 'drizzle-orm'
import type { BatchResponse } from 'drizzle-orm/batch'
import type { Config } from '../config'
import type { Database } from '../db/client'
import { newId } from '../db/ids'
import { files, uploadParts, uploads } from '../db/schema'
import { ApiError } from '../errors'
import { objectKey } from './keys'
import type { FileRow } from './records'
import { SNIFF_BYTES, sniffContentType } from './sniff'
import { fileRow } from './store'
import { commitQuota, holdQuota, releaseQuota, reservationQueries, settleReservation } from './quota'
import { cleanPrefix, extensionOf, safeFileName } from './upload'

export type UploadRow = typeof uploads.$inferSelect
export type PartRow = typeof uploadParts.$inferSelect

/** R2's bounds: every part but the last at least 5 MiB, at most 10,000 parts. */
export const MIN_PART_BYTES = 5 * 1024 * 1024
export const MAX_PARTS = 10_000
/** The part size when the client does not choose one. */
export const DEFAULT_PART_BYTES = 8 * 1024 * 1024
/** tus part sizes leave most part numbers free: a PATCH that loses a race or is retried uses fresh ones. */
const TUS_PART_BUDGET = 2_000
const MiB = 1024 * 1024

export interface UploadDeps {
  readonly db: Database
  readonly bucket: R2Bucket
  readonly config: Config
}

export interface UploadStart {
  readonly protocol: UploadRow['protocol']
  /** The display name (already decoded: a URI-encoded one is decoded by the caller). */
  readonly name: string
  readonly prefix?: string
  readonly modified?: number
  /** The declared total, when known. */
  readonly size?: number
  /** The part size the client asks for (the parts API); chosen from `size` otherwise. */
  readonly partBytes?: number
  /** tus: Upload-Metadata as sent. */
  readonly metadata?: string
}

export const uploadNotFound = () => new ApiError('UPLOAD_NOT_FOUND')
const completedMeanwhile = () => new ApiError('UPLOAD_COMPLETED')
const offsetMismatch = (message: string, offset: number) =>
  new ApiError('UPLOAD_OFFSET_MISMATCH', { message, details: { offset } })
const invalid = (message: string) => new ApiError('VALIDATION_FAILED', { message })
const unequalPart = (message: string, partBytes: number) =>
  new ApiError('PART_SIZE_MISMATCH', { message, details: { part_bytes: partBytes } })
const incomplete = (message: string) => new ApiError('UPLOAD_INCOMPLETE', { message })

/** The resumable size limit (FILES_MAX_RESUMABLE_BYTES) for an upload that has (or would have) `totalBytes`. */
function checkResumableTotal(config: Config, totalBytes: number | undefined) {
  const maxBytes = config.FILES_MAX_RESUMABLE_BYTES
  if (totalBytes !== undefined && totalBytes > maxBytes) {
    throw new ApiError('FILE_TOO_LARGE', {
      message: `the upload would have ${totalBytes} bytes; a resumable upload may have at most ${maxBytes}`,
      details: { max_bytes: maxBytes },
    })
  }
}

/**
 * The upload's quota reservation (worker/files/quota.ts), keyed by the upload id: its declared size, or the bytes
 * of its parts so far, so pending parts count against FILES_QUOTA_BYTES; 413 when they would pass it. Each call
 * also moves the reservation's expiry with the upload's. Committed with the file record, released on abort.
 */
async function holdUploadQuota(deps: UploadDeps, upload: Pick<UploadRow, 'id' | 'userId' | 'length'>, bytes?: number) {
  const reserve = upload.length ?? bytes
  await holdQuota(deps.db, deps.config.FILES_QUOTA_BYTES, upload.userId, {
    id: upload.id,
    bytes: reserve === undefined ? undefined : Math.max(1, reserve),
    ttlMs: ttlMs(deps.config),
  })
}

/**
 * The part size of a tus upload of `length` bytes: the default, or whole MiBs large enough to stay in the part budget.
 */
export function tusPartBytes(length: number, defaultPartBytes = DEFAULT_PART_BYTES): number {
  return Math.max(defaultPartBytes, Math.ceil(length / TUS_PART_BUDGET / MiB) * MiB)
}

function checkPartBytes(config: Config, partBytes: number, size: number | undefined) {
  const max = config.FILES_MAX_PART_BYTES
  if (!Number.isInteger(partBytes) || partBytes < MIN_PART_BYTES || partBytes > max) {
    throw new ApiError('VALIDATION_FAILED', {
      message: `part_bytes must be a whole number from ${MIN_PART_BYTES} to ${max} (FILES_MAX_PART_BYTES)`,
      details: { min_part_bytes: MIN_PART_BYTES, max_part_bytes: max },
    })
  }
  if (size !== undefined && Math.ceil(size / partBytes) > MAX_PARTS) {
    throw new ApiError('VALIDATION_FAILED', {
      message: `${size} bytes in parts of ${partBytes} would take more than ${MAX_PARTS} parts; choose a larger part_bytes`,
      details: { part_bytes: partBytes, max_parts: MAX_PARTS },
    })
  }
}

const ttlMs = (config: Config) => config.FILES_UPLOAD_TTL * 1000

/** The caller's upload as a query a route can batch (ownedUpload turns its rows into the upload or a 404). */
export function ownedUploadQuery(db: Database, userId: string, id: string) {
  return db
    .select()
    .from(uploads)
    .where(and(eq(uploads.id, id), eq(uploads.userId, userId)))
    .limit(1)
}

export function ownedUpload(rows: UploadRow[], now = Date.now()): UploadRow {
  const upload = rows[0]
  // An expired upload is gone for its owner at once, whether or not the sweep has removed it yet.
  if (!upload || upload.expiresAt <= now) throw uploadNotFound()
  return upload
}

/**
 * What another request did to the upload while this one worked on it, read back from D1 and R2 after a step
 * failed or lost its condition:
 * - gone (terminated, aborted, expired, its user deleted): 404;
 * - complete: 409 (tus's offset conflict, or UPLOAD_COMPLETED for the parts API);
 * - moved on by another PATCH: 409.
 * Undefined when the upload is as this request found it: the failure is its own.
 */
export async function raceOutcome(
  deps: Pick<UploadDeps, 'db' | 'bucket'>,
  upload: UploadRow,
  /** This request's own join made the upload's object: it says nothing of another request. */
  options: { joined?: boolean } = {},
): Promise<ApiError | undefined> {
  const [current, file] = await Promise.all([
    deps.db.query.uploads.findFirst({ where: eq(uploads.id, upload.id) }),
    // A completed upload's file record has the upload's id.
    deps.db.query.files.findFirst({ where: eq(files.id, upload.id), columns: { id: true } }),
  ])
  if (upload.protocol === 'tus' && current) {
    if (current.fileId) return offsetMismatch('the upload is complete', current.offset)
    if (current.offset !== upload.offset)
      return offsetMismatch('another request changed the upload meanwhile; ask HEAD for its offset', current.offset)
  }
  if (file) return completedMeanwhile()
  if (!current) return uploadNotFound()
  // R2 joined the parts for another complete (or completing PATCH) whose record is not written yet (an abort
  // removes the row first).
  if (!options.joined && (await deps.bucket.head(upload.key))) {
    return upload.protocol === 'tus'
      ? offsetMismatch('the upload is complete', current.length ?? current.offset)
      : completedMeanwhile()
  }
  return undefined
}

/**
 * The error to answer for a failure: the race it lost when there was one, else the failure itself
 * (a 4xx of its own stays).
 */
export async function explainFailure(
  deps: Pick<UploadDeps, 'db' | 'bucket'>,
  upload: UploadRow,
  error: unknown,
): Promise<unknown> {
  if (error instanceof ApiError && error.status < 500 && error.code !== 'UPLOAD_OFFSET_MISMATCH') return error
  return (await raceOutcome(deps, upload)) ?? error
}

export async function findOwnedUpload(db: Database, userId: string, id: string, now = Date.now()): Promise<UploadRow> {
  return ownedUpload(await ownedUploadQuery(db, userId, id), now)
}

/**
 * The session check still owed, for the quota hold to share its round trip (authorizedBatch, guarded by callerIsLive).
 */
export interface SharedCheck {
  readonly guard: SQL
  batch(queries: Reservation): Promise<BatchResponse<Reservation>>
}
type Reservation = ReturnType<typeof reservationQueries>

/** Two sequential D1 round trips: the session check with the quota hold, then R2, then the record. */
export async function startUpload(
  deps: UploadDeps,
  userId: string,
  start: UploadStart,
  check: SharedCheck,
): Promise<UploadRow> {
  checkResumableTotal(deps.config, start.size)
  const defaultPartBytes = Math.min(DEFAULT_PART_BYTES, deps.config.FILES_MAX_PART_BYTES)
  const partBytes =
    start.partBytes ??
    (start.protocol === 'tus' && start.size !== undefined
      ? tusPartBytes(start.size, defaultPartBytes)
      : defaultPartBytes)
  checkPartBytes(deps.config, partBytes, start.size)
  const now = Date.now()
  const id = newId(now)
  const name = safeFileName(start.name)
  const prefix = cleanPrefix(start.prefix, userId)
  const key = objectKey(userId, id, prefix)
  const quota = deps.config.FILES_QUOTA_BYTES
  const hold = { id, bytes: Math.max(1, start.size ?? 1), ttlMs: ttlMs(deps.config) }
  const held = await check.batch(reservationQueries(deps.db, quota, userId, { ...hold, guard: check.guard }))
  settleReservation(held, quota, { bytes: start.size === undefined ? undefined : hold.bytes })
  const multipart = await deps.bucket.createMultipartUpload(key).catch(async (error) => {
    await releaseQuota(deps.db, id)
    throw error
  })
  const row: UploadRow = {
    id,
    userId,
    r2UploadId: multipart.uploadId,
    key,
    name,
    extension: extensionOf(name),
    prefix,
    fileModifiedAt: start.modified ?? null,
    createdAt: now,
    protocol: start.protocol,
    partBytes,
    length: start.size ?? null,
    offset: 0,
    tailKey: null,
    tailBytes: 0,
    nextPart: 1,
    patchId: null,
    leaseUntil: null,
    leaseHolders: 0,
    metadata: start.metadata ?? null,
    fileId: null,
    expiresAt: now + ttlMs(deps.config),
  }
  try {
    await deps.db.insert(uploads).values(row)
  } catch (error) {
    await multipart.abort().catch(() => {})
    await releaseQuota(deps.db, id)
    throw error
  }
  return row
}

export function listParts(db: Database, upload: Pick<UploadRow, 'id'>) {
  return db.query.uploadParts.findMany({
    where: eq(uploadParts.uploadId, upload.id),
    orderBy: asc(uploadParts.partNumber),
  })
}

/**
 * R2's part rule for one part of the parts API, against the parts already stored: a part has `part_bytes`, except
 * the last, which has no more. With a declared size the last part's number and size are known; without one, a
 * smaller part is the last, so no part may follow it. Returns the refusal's message, or undefined.
 */
export function partRuleViolation(
  upload: Pick<UploadRow, 'partBytes' | 'length'>,
  partNumber: number,
  bytes: number,
  others: ReadonlyArray<Pick<PartRow, 'partNumber' | 'size'>>,
): string | undefined {
  const partBytes = upload.partBytes
  const rule = `every part but the last must have part_bytes (${partBytes}) bytes, and the last no more`
  if (bytes > partBytes) return `part ${partNumber} has ${bytes} bytes; ${rule}`
  if (upload.length !== null) {
    const lastPart = Math.max(1, Math.ceil(upload.length / partBytes))
    const lastBytes = upload.length - (lastPart - 1) * partBytes
    if (partNumber > lastPart)
      return `the upload's ${upload.length} bytes take ${lastPart} parts of part_bytes (${partBytes}) bytes; there is no part ${partNumber}`
    const expected = partNumber === lastPart ? lastBytes : partBytes
    if (bytes !== expected)
      return `part ${partNumber} has ${bytes} bytes; it needs ${expected} (${rule}, and the size is ${upload.length})`
    return undefined
  }
  const later = bytes < partBytes ? others.find((part) => part.partNumber > partNumber) : undefined
  if (later)
    return `part ${partNumber} has ${bytes} bytes, so it would be the last, but part ${later.partNumber} follows it; ${rule}`
  const shortBefore = others.find((part) => part.partNumber < partNumber && part.size < partBytes)
  if (shortBefore)
    return `part ${shortBefore.partNumber} has ${shortBefore.size} bytes, so it is the last; part ${partNumber} cannot follow it (${rule})`
  return undefined
}

/** What a part's request carries that its checks read (the body's presence and its Content-Length). */
function partRequestFits(config: Config, body: unknown, length: number): boolean {
  return !!body && Number.isFinite(length) && length > 0 && length <= config.FILES_MAX_PART_BYTES
}

/**
 * The hold a part renews, as statements for the session check's batch. It reserves what holdUploadQuota reserves
 * (the declared size, or the other parts' sum and this one), read in the statement. It does so only when
 * uploadPart's checks would pass (the upload the caller's, open, a parts upload; R2's part rule; the total
 * allowed), so a refused part changes no reservation.
 */
export function partReservation(
  db: Database,
  config: Config,
  userId: string,
  id: string,
  part: { readonly number: number; readonly body: unknown; readonly length: number },
  guard: SQL,
  now: number,
) {
  const fits = partRequestFits(config, part.body, part.length)
  const bytes = fits ? part.length : 0
  const n = part.number
  const others = sql`(select coalesce(sum(${uploadParts.size}), 0) from ${uploadParts} where ${uploadParts.uploadId} = ${id} and ${uploadParts.partNumber} != ${n})`
  const lastPart = sql`max(1, (${uploads.length} + ${uploads.partBytes} - 1) / ${uploads.partBytes})`
  // partRuleViolation, in SQL.
  const rule = sql`${bytes} <= ${uploads.partBytes} and case when ${uploads.length} is null then
      (${bytes} = ${uploads.partBytes} or not exists (select 1 from ${uploadParts} where ${uploadParts.uploadId} = ${id} and ${uploadParts.partNumber} > ${n}))
      and not exists (select 1 from ${uploadParts} where ${uploadParts.uploadId} = ${id} and ${uploadParts.partNumber} < ${n} and ${uploadParts.size} < ${uploads.partBytes})
    else ${n} <= ${lastPart} and ${bytes} = case when ${n} = ${lastPart} then ${uploads.length} - (${lastPart} - 1) * ${uploads.partBytes} else ${uploads.partBytes} end end`
  const open = sql`${fits ? 1 : 0} = 1 and exists (select 1 from ${uploads} where ${uploads.id} = ${id} and ${uploads.userId} = ${userId} and ${uploads.fileId} is null and ${uploads.expiresAt} > ${now} and ${uploads.protocol} = 'parts' and ${rule} and ${others} + ${bytes} <= ${config.FILES_MAX_RESUMABLE_BYTES})`
  const declared = sql`(select ${uploads.length} from ${uploads} where ${uploads.id} = ${id})`
  return reservationQueries(db, config.FILES_QUOTA_BYTES, userId, {
    id,
    sized: sql`max(1, coalesce(${declared}, ${others} + ${bytes}))`,
    ttlMs: ttlMs(config),
    guard: sql`${guard} and ${open}`,
  })
}

/** What the part route read in the session check's round trip: the parts, and the hold (partReservation). */
export interface PartRead {
  readonly parts: PartRow[]
  readonly held: BatchResponse<ReturnType<typeof partReservation>>
}

/** Stores one part of the parts API (sending a part number again replaces it). The body must have a known length. */
export async function uploadPart(
  deps: UploadDeps,
  upload: UploadRow,
  partNumber: number,
  body: ReadableStream<Uint8Array> | null,
  length: number,
  read?: PartRead,
) {
  if (!body || !Number.isFinite(length) || length <= 0) throw invalid('a part needs a body and its Content-Length')
  if (upload.protocol !== 'parts')
    throw invalid('this upload is a tus upload: send its bytes with PATCH /files/tus/:id')
  const maxPartBytes = deps.config.FILES_MAX_PART_BYTES
  if (length > maxPartBytes)
    throw new ApiError('FILE_TOO_LARGE', {
      message: `a part may have at most ${maxPartBytes} bytes; this one has ${length}`,
      details: { max_part_bytes: maxPartBytes },
    })
  // A part sent again replaces the earlier one: only the others count.
  const others = (read?.parts ?? (await listParts(deps.db, upload))).filter((part) => part.partNumber !== partNumber)
  const violation = partRuleViolation(upload, partNumber, length, others)
  if (violation) throw unequalPart(violation, upload.partBytes)
  const total = others.reduce((sum, part) => sum + part.size, length)
  checkResumableTotal(deps.config, total)
  const quota = deps.config.FILES_QUOTA_BYTES
  const held = read?.held
  if (!held || (quota > 0 && held[0].length === 0)) {
    // Held in the check's batch (partReservation) unless the quota had no room: the usage read beside the hold says
    // so. Should its SQL refuse a part these checks pass while there is room, the hold is taken here: a round trip
    // more, never a wrong 413.
    const bytes = Math.max(1, upload.length ?? total)
    if (held && Number(held[1][0]?.used ?? 0) + bytes > quota) settleReservation(held, quota, { bytes })
    else await holdUploadQuota(deps, upload, total)
  }
  try {
    // R2 takes a stream only with a known length; the fixed-length stream also refuses a body that differs from
    // its Content-Length.
    const sized = body.pipeThrough(new FixedLengthStream(length))
    const part = await deps.bucket.resumeMultipartUpload(upload.key, upload.r2UploadId).uploadPart(partNumber, sized)
    await deps.db.batch([
      deps.db
        .insert(uploadParts)
        .values({ uploadId: upload.id, partNumber, etag: part.etag, size: length })
        .onConflictDoUpdate({
          target: [uploadParts.uploadId, uploadParts.partNumber],
          set: { etag: part.etag, size: length },
        }),
      deps.db
        .update(uploads)
        .set({ expiresAt: Date.now() + ttlMs(deps.config) })
        .where(eq(uploads.id, upload.id)),
    ])
    return { part: partNumber, etag: part.etag, size: length }
  } catch (error) {
    const race = await raceOutcome(deps, upload)
    if (!race) throw error
    // The upload completed or went while this part was sending: the reservation this part renewed ends with it.
    await releaseQuota(deps.db, upload.id)
    throw race
  }
}

/** The SHA-256 of stored bytes, streamed back from R2 (for uploads that arrived over several requests). */
async function digestOf(bucket: R2Bucket, key: string): Promise<string> {
  const object = await bucket.get(key)
  if (!object)
    throw new ApiError('INTERNAL_ERROR', { cause: new Error(`the completed upload ${key} is missing from R2`) })
  const digest = new crypto.DigestStream('SHA-256')
  await object.body.pipeTo(digest)
  return new Uint8Array(await digest.digest).toHex()
}

/** Checks the parts against R2's rule once more before R2 is asked to join them. */
export function checkJoinable(upload: UploadRow, parts: ReadonlyArray<Pick<PartRow, 'partNumber' | 'size'>>) {
  if (parts.length === 0) throw incomplete('the upload has no parts yet')
  if (upload.protocol === 'parts') {
    const gap = parts.findIndex((part, index) => part.partNumber !== index + 1)
    if (gap >= 0) throw incomplete(`part ${gap + 1} is missing`)
  }
  const unequal = parts.find((part, index) =>
    index < parts.length - 1 ? part.size !== upload.partBytes : part.size > upload.partBytes,
  )
  if (unequal)
    throw unequalPart(
      `part ${unequal.partNumber} has ${unequal.size} bytes; every part but the last must have part_bytes (${upload.partBytes}) bytes, and the last no more`,
      upload.partBytes,
    )
  const size = parts.reduce((sum, part) => sum + part.size, 0)
  if (upload.length !== null && size !== upload.length)
    throw incomplete(`the parts have ${size} bytes; the upload declared ${upload.length}`)
  return size
}

/**
 * Joins the parts into the file; the record gets the size, the sniffed type and the SHA-256 of the stored bytes
 * (`knownHash` when the bytes were hashed on their way in, else read back). The upload row stays, pointing at
 * the file, until it expires: a tus client asking HEAD after a lost response still learns it is complete.
 */
/**
 * The hold a complete renews, as statements for the session check's batch: what holdUploadQuota reserves
 * (the declared size, or the parts' sum), read in the statement, and only while the upload is the caller's, unexpired
 * and unfinished. The parts it counts are the parts the same batch reads, so the size agrees with completeUpload's.
 */
export function completionReservation(
  db: Database,
  config: Config,
  userId: string,
  id: string,
  guard: SQL,
  now: number,
) {
  const partsSum = sql`(select coalesce(sum(${uploadParts.size}), 0) from ${uploadParts} where ${uploadParts.uploadId} = ${id})`
  const declared = sql`(select ${uploads.length} from ${uploads} where ${uploads.id} = ${id})`
  const open = sql`exists (select 1 from ${uploads} where ${uploads.id} = ${id} and ${uploads.userId} = ${userId} and ${uploads.fileId} is null and ${uploads.expiresAt} > ${now})`
  return reservationQueries(db, config.FILES_QUOTA_BYTES, userId, {
    id,
    sized: sql`max(1, coalesce(${declared}, ${partsSum}))`,
    ttlMs: ttlMs(config),
    guard: sql`${guard} and ${open}`,
  })
}

/** What the route read in the session check's round trip: the parts, and the hold (completionReservation). */
export interface CompletionRead {
  readonly parts: PartRow[]
  readonly held: BatchResponse<ReturnType<typeof completionReservation>>
}

/**
 * R2 joins the parts into the upload's object (an empty upload is an empty object). Another request that completed
 * or aborted the upload first answers as it (R2: "The specified multipart upload does not exist").
 */
export async function joinParts(
  deps: Pick<UploadDeps, 'db' | 'bucket'>,
  upload: UploadRow,
  parts: ReadonlyArray<Pick<PartRow, 'partNumber' | 'etag'>>,
): Promise<void> {
  const multipart = deps.bucket.resumeMultipartUpload(upload.key, upload.r2UploadId)
  try {
    if (parts.length === 0) {
      // An empty upload: R2 cannot complete a multipart upload without parts.
      await deps.bucket.put(upload.key, new Uint8Array(0))
      await multipart.abort().catch(() => {})
    } else {
      await multipart.complete(parts.map((part) => ({ partNumber: part.partNumber, etag: part.etag })))
    }
  } catch (error) {
    throw await explainFailure(deps, upload, error)
  }
}

/** The file record of a joined upload: its type sniffed from the stored bytes, its SHA-256 `knownHash` or read back. */
export async function joinedFileRow(
  bucket: R2Bucket,
  upload: UploadRow,
  size: number,
  knownHash?: string,
): Promise<FileRow> {
  // (A ranged get of an empty object fails in local R2: there is nothing to read anyway.)
  const head = size === 0 ? null : await bucket.get(upload.key, { range: { offset: 0, length: SNIFF_BYTES } })
  const contentType = sniffContentType(
    new Uint8Array(head ? await head.arrayBuffer() : new ArrayBuffer(0)),
    upload.extension,
  )
  const hash = knownHash ?? (await digestOf(bucket, upload.key))
  return fileRow(
    {
      userId: upload.userId,
      name: upload.name,
      extension: upload.extension,
      contentType,
      prefix: upload.prefix,
      fileModifiedAt: upload.fileModifiedAt,
    },
    upload.id,
    upload.key,
    { size, hash },
    Date.now(),
  )
}

export async function completeUpload(
  deps: UploadDeps,
  upload: UploadRow,
  knownHash?: string,
  read?: CompletionRead,
): Promise<FileRow> {
  const parts = read?.parts ?? (await listParts(deps.db, upload))
  // No parts at all: an abort may have removed the upload, its parts with it, since this request read it (404).
  if (parts.length === 0 && upload.length !== 0) {
    const raced = await raceOutcome(deps, upload)
    if (raced) throw raced
  }
  const size = upload.length === 0 && parts.length === 0 ? 0 : checkJoinable(upload, parts)
  checkResumableTotal(deps.config, size)
  // The reservation covers the size already (a parts upload without a declared size grew it part by part).
  if (read) settleReservation(read.held, deps.config.FILES_QUOTA_BYTES, { bytes: Math.max(1, upload.length ?? size) })
  else await holdUploadQuota(deps, upload, size)
  await joinParts(deps, upload, parts)
  try {
    const row = await joinedFileRow(deps.bucket, upload, size, knownHash)
    // The record is written only while the upload is still there and unfinished: its key comes from the upload's
    // row, and NULL (the row aborted, or its user deleted, meanwhile) fails the batch as a whole.
    const guardedKey = sql<string>`(select ${uploads.key} from ${uploads} where ${uploads.id} = ${upload.id} and ${uploads.fileId} is null)`
    // One batch: the file appears as the upload ends. A tus upload's row stays, marked complete, so that HEAD
    // still answers its offset (tus: "even if … the upload is already considered completed") until it expires.
    const ended =
      upload.protocol === 'tus'
        ? deps.db
            .update(uploads)
            .set({ fileId: row.id, offset: size, tailKey: null, tailBytes: 0 })
            .where(eq(uploads.id, upload.id))
        : deps.db.delete(uploads).where(eq(uploads.id, upload.id))
    await deps.db.batch([
      deps.db.insert(files).values({ ...row, key: guardedKey }),
      deps.db.delete(uploadParts).where(eq(uploadParts.uploadId, upload.id)),
      ended,
      commitQuota(deps.db, upload.id),
    ])
    return row
  } catch (error) {
    throw await dropJoined(deps, upload, error)
  }
}

/**
 * After this request's join, its record not written (the upload went, or another request moved it on, or D1 failed):
 * the joined object goes with the upload, whose multipart upload R2 has consumed, unless another request's record
 * has it. Answers the error to throw.
 */
export async function dropJoined(
  deps: Pick<UploadDeps, 'db' | 'bucket'>,
  upload: UploadRow,
  error: unknown,
): Promise<unknown> {
  const race = await raceOutcome(deps, upload, { joined: true })
  const recorded = await deps.db.query.files.findFirst({ where: eq(files.id, upload.id), columns: { id: true } })
  if (recorded) return race ?? completedMeanwhile()
  await deps.bucket.delete(upload.key)
  await deps.db.delete(uploads).where(eq(uploads.id, upload.id))
  await releaseQuota(deps.db, upload.id)
  return race ?? error
}

/**
 * Drops an upload: its row first (so a complete or PATCH racing it finds it gone, and its record is not written),
 * then what it held in R2 (the multipart upload and the tail as the row last named it). False when another request
 * removed the row first (a parts upload completed, or aborted twice).
 */
export async function abortUpload(deps: Pick<UploadDeps, 'db' | 'bucket'>, upload: UploadRow): Promise<boolean> {
  const [removed] = await deps.db.delete(uploads).where(eq(uploads.id, upload.id)).returning()
  if (!removed) return false
  await finishAbort(deps, removed)
  return true
}

/**
 * The user's upload read and, when it is theirs and unexpired, removed, in one batch with the session check
 * (`condition`: callerIsLive), so that an abort's D1 work before R2 is one round trip; finishAbort does the rest.
 */
export function uploadRemovalQueries(db: Database, userId: string, id: string, condition: SQL, now: number) {
  return [
    ownedUploadQuery(db, userId, id),
    db
      .delete(uploads)
      .where(and(eq(uploads.id, id), eq(uploads.userId, userId), gt(uploads.expiresAt, now), condition))
      .returning(),
  ] as const
}

/** After an upload's row was removed: its R2 side aborted, then its quota released. After, not with the row: a
 * completion racing the abort may have made the reservation again (test/files/races.test.ts). */
export async function finishAbort(deps: Pick<UploadDeps, 'db' | 'bucket'>, removed: UploadRow): Promise<void> {
  if (!removed.fileId) await abortObjects(deps.bucket, removed)
  if (removed.tailKey) await deps.bucket.delete(removed.tailKey)
  await releaseQuota(deps.db, removed.id)
}

/**
 * What an unfinished upload holds in R2 besides its tail: the multipart upload, and the object R2 joined for a
 * completing tus PATCH that never wrote its record (it died between R2's join and its batch). No record has the key
 * of an upload without a file: a record is written only in the batch that marks the upload complete.
 */
async function abortObjects(bucket: R2Bucket, upload: UploadRow): Promise<void> {
  await bucket
    .resumeMultipartUpload(upload.key, upload.r2UploadId)
    .abort()
    .catch(() => {})
  if (upload.protocol === 'tus') await bucket.delete(upload.key)
}

const SWEEP_BATCH = 100

/** The scheduled sweep: uploads past their expiry are aborted (a completed one's row just goes). */
export async function sweepExpiredUploads(deps: Pick<UploadDeps, 'db' | 'bucket'>, now = Date.now()): Promise<number> {
  const expired = await deps.db.query.uploads.findMany({ where: lte(uploads.expiresAt, now), limit: SWEEP_BATCH })
  for (const upload of expired) await abortUpload(deps, upload)
  return expired.length
}

/**
 * When a user is deleted: the delete of their uploads' rows, for the batch that deletes the account (their quota
 * reservations go with it, by cascade). And what aborts the R2 side of the rows it answers, after that batch, so no
 * R2 multipart upload outlives them.
 */
export function userUploadsRemoval(db: Database, userId: string) {
  return {
    statement: db.delete(uploads).where(eq(uploads.userId, userId)).returning(),
    async abortRemoved(bucket: R2Bucket, removed: UploadRow[]): Promise<void> {
      for (const upload of removed) {
        if (!upload.fileId) await abortObjects(bucket, upload)
        if (upload.tailKey) await bucket.delete(upload.tailKey)
      }
    },
  }
}

export { ttlMs as uploadTtlMs }

/** tus: a PATCH that arrived moves the reservation's expiry with the upload's. */
export async function renewUploadQuota(deps: UploadDeps, upload: UploadRow): Promise<void> {
  await holdUploadQuota(deps, upload)
}
