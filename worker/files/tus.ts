// tus 1.0.0 (https://tus.io/protocols/resumable-upload) on the upload engine (resumable.ts): the headers read and
// written, and the bytes of a PATCH cut into R2 parts of the upload's fixed size. A PATCH can have any length, R2
// parts cannot, so what is left after the last full part is kept as its own object (the tail) and joined with the
// next PATCH's bytes, as tus's S3 stores keep their "incomplete part". Nothing of a PATCH counts until one D1
// batch records its parts and the new offset, on the condition that the offset is still the one it started from:
// of two PATCHes racing at one offset, one wins and the other answers 409 having changed nothing.
// A PATCH is two sequential D1 round trips: the session check's batch reads the upload and its parts,
// renews the quota hold and takes the part numbers; its second writes the offset, or, for the PATCH that completes
// the upload, the offset and the file record, after R2 has joined the parts. R2's join cannot be undone, so that
// PATCH holds the offset from the first batch (a lease): no other PATCH's claim moves it while the holder may join.
import { and, asc, eq, gt, isNull, type SQL, sql } from 'drizzle-orm'
import type { BatchResponse } from 'drizzle-orm/batch'
import type { Config } from '../config'
import type { Database } from '../db/client'
import { insertForUser, previousChanged } from '../db/guarded'
import { files, storageReservations, uploadParts, uploads } from '../db/schema'
import { ApiError } from '../errors'
import type { FileRow } from './records'
import { settleReservation } from './quota'
import {
  checkJoinable,
  completeUpload,
  completionReservation,
  dropJoined,
  explainFailure,
  joinedFileRow,
  joinParts,
  MAX_PARTS,
  ownedUpload,
  ownedUploadQuery,
  type PartRow,
  raceOutcome,
  renewUploadQuota,
  type UploadDeps,
  type UploadRow,
  uploadNotFound,
  uploadTtlMs,
} from './resumable'
import { readRequestBody } from './blocks'
import { parseModified } from './upload'

export const TUS_VERSION = '1.0.0'
export const TUS_EXTENSIONS = 'creation,creation-with-upload,termination,expiration,checksum'
/** Upload-Checksum algorithms: the names tus uses, and what workerd's DigestStream calls them. */
export const CHECKSUM_ALGORITHMS: Readonly<Record<string, string>> = {
  sha1: 'SHA-1',
  sha256: 'SHA-256',
  sha512: 'SHA-512',
  md5: 'MD5',
}

const invalid = (message: string) => new ApiError('VALIDATION_FAILED', { message })
const offsetMismatch = (message: string, offset?: number) =>
  new ApiError('UPLOAD_OFFSET_MISMATCH', { message, details: offset === undefined ? {} : { offset } })
const tooLarge = (message: string) => new ApiError('FILE_TOO_LARGE', { message })

/** A non-negative integer header (Upload-Offset, Upload-Length), or 400. */
export function byteCount(header: string | undefined, name: string): number | undefined {
  if (header === undefined) return undefined
  if (!/^\d{1,16}$/.test(header.trim())) throw invalid(`${name} must be a non-negative integer`)
  return Number(header.trim())
}

/**
 * Upload-Metadata: "key base64value" pairs separated by commas; keys unique, values may be empty. The keys this
 * API reads mean what the X-Edgefloor-* headers mean: `filename` (or Uppy's `name`), `filetype` (a hint: the bytes
 * decide the type), `prefix` and `modified` (epoch ms or ISO).
 */
export function parseUploadMetadata(header: string | undefined): Record<string, string> {
  const metadata: Record<string, string> = {}
  if (header === undefined || header.trim() === '') return metadata
  if (header.length > 4096) throw invalid('Upload-Metadata is longer than 4096 characters')
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false })
  for (const pair of header.split(',')) {
    const [key, value = '', extra] = pair.trim().split(' ')
    if (!key || extra !== undefined || key in metadata)
      throw invalid('Upload-Metadata must be unique "key base64value" pairs separated by commas')
    try {
      metadata[key] = decoder.decode(Uint8Array.fromBase64(value))
    } catch {
      throw invalid(`Upload-Metadata "${key}" is not Base64-encoded UTF-8`)
    }
  }
  return metadata
}

/** The upload's fields from its metadata (the X-Edgefloor-* meanings). */
export function uploadFields(metadata: Record<string, string>) {
  const modified = metadata.modified
  return {
    name: metadata.filename ?? metadata.name ?? 'file',
    prefix: metadata.prefix,
    modified: modified ? parseModified(modified) : undefined,
  }
}

/**
 * Upload-Checksum "algorithm base64digest": 400 for an algorithm this server does not have (tus: "400 Bad Request if
 * the checksum algorithm is not supported").
 */
export function parseChecksum(header: string | undefined): { algorithm: string; expected: string } | undefined {
  if (header === undefined) return undefined
  const [name = '', expected = '', extra] = header.trim().split(' ')
  const algorithm = CHECKSUM_ALGORITHMS[name]
  if (!algorithm || !expected || extra !== undefined) {
    throw new ApiError('CHECKSUM_UNSUPPORTED', {
      message: `Upload-Checksum must be "<algorithm> <base64 digest>" with one of ${Object.keys(CHECKSUM_ALGORITHMS).join(', ')}`,
    })
  }
  return { algorithm, expected }
}

export function expiresHeader(upload: Pick<UploadRow, 'expiresAt'>): string {
  return new Date(upload.expiresAt).toUTCString()
}

export interface AppendResult {
  readonly upload: UploadRow
  /** The file record, when these bytes completed the upload. */
  readonly file?: FileRow
  /** The body ended before its Content-Length: what arrived is stored, the client resumes from `upload.offset`. */
  readonly interrupted: boolean
}

export interface AppendRequest {
  readonly offset: number
  readonly body: ReadableStream<Uint8Array> | null
  /** Content-Length, when the client sent it. */
  readonly contentLength?: number
  readonly checksum?: { algorithm: string; expected: string }
}

/** How long a completing PATCH holds the offset from the session check's batch: its body, R2's join, its record. */
const LEASE_MS = 2 * 60_000
/**
 * What a holder must have left of its lease when R2 joins the parts (the join, the record's batch, and the skew
 * between two locations' clocks: a lease ends by the clock of the request that finds it ended).
 */
const JOIN_MARGIN_MS = 30_000
/** R2's read rate assumed when a completion reads the stored bytes back for their SHA-256: 10 MB/s. */
const READ_BACK_BYTES_PER_MS = 10_000

/** A claim that moves the offset without completing waits out every completing PATCH's lease. */
const leaseFree = (now: number) =>
  sql`(${uploads.leaseHolders} = 0 or ${uploads.leaseUntil} is null or ${uploads.leaseUntil} <= ${now})`
/** A holder joins under its lease, then counts once more, or once from a lease that had ended. */
const leaseHeldOnce = (now: number) =>
  sql`case when ${uploads.leaseUntil} > ${now} then ${uploads.leaseHolders} + 1 else 1 end`

/** What a PATCH states before its bytes: the offset it writes at and its Content-Length when sent. */
export interface PatchHead {
  readonly offset: number
  readonly contentLength?: number
}

/**
 * A PATCH's D1 work before its bytes, for the session check's batch. The upload, and its quota hold
 * renewed (completionReservation: its declared size, guarded by the check and the upload open). Then, after that
 * hold and only while the offset is `head.offset` and the bytes fit: the part numbers the bytes fill are taken and
 * the expiry moved; and when the bytes are what is left (they complete the upload), the lease is taken and the parts
 * stored so far are read for R2's join.
 */
export function patchQueries(
  db: Database,
  config: Config,
  userId: string,
  id: string,
  head: PatchHead,
  guard: SQL,
  now: number,
) {
  const bytes = head.contentLength ?? 0
  const left = sql`(${uploads.length} - ${uploads.offset})`
  const completes = sql`(${left} = ${bytes})`
  // The read back of the stored bytes for their hash, unless they arrive whole in this request.
  const readBackMs = head.offset === 0 ? sql`0` : sql`(${uploads.length} / ${READ_BACK_BYTES_PER_MS})`
  const [reserve, usage] = completionReservation(db, config, userId, id, guard, now)
  const take = db
    .update(uploads)
    .set({
      nextPart: sql`${uploads.nextPart} + (${uploads.tailBytes} + ${bytes} + case when ${completes} then ${uploads.partBytes} - 1 else 0 end) / ${uploads.partBytes}`,
      leaseUntil: sql`case when ${completes} then max(coalesce(${uploads.leaseUntil}, 0), ${now + LEASE_MS} + ${readBackMs}) else ${uploads.leaseUntil} end`,
      leaseHolders: sql`case when ${completes} then ${leaseHeldOnce(now)} else ${uploads.leaseHolders} end`,
      expiresAt: now + uploadTtlMs(config),
    })
    .where(
      and(
        eq(uploads.id, id),
        eq(uploads.userId, userId),
        eq(uploads.protocol, 'tus'),
        isNull(uploads.fileId),
        gt(uploads.expiresAt, now),
        eq(uploads.offset, head.offset),
        sql`${bytes} > 0 and ${left} >= ${bytes}`,
        guard,
        // Only once the hold is renewed: a PATCH refused 413 takes nothing.
        config.FILES_QUOTA_BYTES > 0 ? previousChanged : undefined,
      ),
    )
    .returning({ nextPart: uploads.nextPart, leaseUntil: uploads.leaseUntil })
  const parts = db
    .select()
    .from(uploadParts)
    .where(
      and(
        eq(uploadParts.uploadId, id),
        sql`exists (select 1 from ${uploads} where ${uploads.id} = ${id} and ${bytes} > 0 and ${completes})`,
      ),
    )
    .orderBy(asc(uploadParts.partNumber))
  return [ownedUploadQuery(db, userId, id), reserve, take, usage, parts] as const
}

/** What the session check's batch took for a PATCH (patchQueries). */
export interface PreparedPatch {
  /** The part numbers its bytes fill. */
  readonly numbers: number[]
  /** The lease, when its bytes complete the upload. */
  readonly leaseUntil: number | null
  /** The parts stored before it (when it completes the upload). */
  readonly parts: PartRow[]
  readonly held: readonly [ReadonlyArray<{ id: string; bytes: number }>, ReadonlyArray<{ used: number }>]
}

/** The upload (or 404) and what the batch took for the PATCH. */
export function preparedPatch(
  [rows, reserved, taken, usage, parts]: BatchResponse<ReturnType<typeof patchQueries>>,
  head: PatchHead,
  now: number,
): { upload: UploadRow; prepared: PreparedPatch } {
  const upload = ownedUpload(rows, now)
  // A parts upload's id is no tus upload URL: its part numbers are the client's.
  if (upload.protocol !== 'tus') throw uploadNotFound()
  const took = taken[0]
  const bytes = head.contentLength ?? 0
  const completes = (upload.length ?? 0) - upload.offset === bytes
  const numbers: number[] = []
  if (took) {
    const total = upload.tailBytes + bytes
    const count = completes ? Math.ceil(total / upload.partBytes) : Math.floor(total / upload.partBytes)
    for (let number = took.nextPart - count; number < took.nextPart; number++) numbers.push(number)
  }
  return {
    upload,
    prepared: {
      numbers,
      leaseUntil: took && completes ? took.leaseUntil : null,
      parts,
      held: [reserved, usage],
    },
  }
}

/**
 * The bytes of one PATCH (or a creation-with-upload POST), gathered into parts of `upload.partBytes`: one part
 * goes to R2 while the next one fills (two part buffers at most, reused), and the part numbers the request will
 * need are taken from D1 in one write when its length is known (in the session check's batch, for a PATCH).
 */
class PartWriter {
  readonly parts: { partNumber: number; etag: string; size: number }[] = []
  private piece: Uint8Array
  /** The other part buffer, free once R2 has taken its part. */
  private spare: Uint8Array | undefined
  private filled = 0
  private sending: Promise<void> = Promise.resolve()
  private numbers: number[]
  private numbersTaken: number

  constructor(
    private readonly deps: UploadDeps,
    private readonly upload: UploadRow,
    private readonly multipart: R2MultipartUpload,
    /** The parts this request's bytes make, when its length is known (0: take numbers one at a time). */
    private readonly plannedParts: number,
    /** Part numbers taken already (in the session check's batch). */
    taken: readonly number[] = [],
  ) {
    this.piece = new Uint8Array(upload.partBytes)
    this.numbers = [...taken]
    this.numbersTaken = taken.length
  }

  get pending(): Uint8Array {
    return this.piece.subarray(0, this.filled)
  }

  /** The previous PATCH's tail, first in the next part. */
  async loadTail(): Promise<void> {
    if (!this.upload.tailKey) return
    const tail = await this.deps.bucket.get(this.upload.tailKey)
    if (!tail || tail.size !== this.upload.tailBytes)
      throw new ApiError('INTERNAL_ERROR', {
        cause: new Error(`the tail ${this.upload.tailKey} of upload ${this.upload.id} is missing or changed`),
      })
    this.piece.set(new Uint8Array(await tail.arrayBuffer()))
    this.filled = this.upload.tailBytes
  }

  /** Copies the view into the parts (the view may be read over once this resolves). */
  async write(chunk: Uint8Array): Promise<void> {
    let at = 0
    while (at < chunk.byteLength) {
      const take = Math.min(chunk.byteLength - at, this.piece.byteLength - this.filled)
      this.piece.set(chunk.subarray(at, at + take), this.filled)
      this.filled += take
      at += take
      if (this.filled === this.piece.byteLength) await this.flushPart()
    }
  }

  /** Sends what is gathered as a part (full, or the upload's last) under a part number no other request has. */
  async flushPart(): Promise<void> {
    if (this.filled === 0) return
    const size = this.filled
    const partNumber = await this.takePartNumber()
    await this.sending
    const sent = this.piece
    this.sending = this.multipart.uploadPart(partNumber, sent.subarray(0, size)).then((part) => {
      this.parts.push({ partNumber, etag: part.etag, size })
      this.spare = sent
    })
    // Heard at the next flush or in sent().
    this.sending.catch(() => {})
    this.piece = this.spare ?? new Uint8Array(this.upload.partBytes)
    this.spare = undefined
    this.filled = 0
  }

  /** Every part flushed so far is in R2. */
  async sent(): Promise<void> {
    await this.sending
  }

  /** Part numbers are taken in D1 (next_part moves past them), so a racing or retried request uses fresh ones. */
  private async takePartNumber(): Promise<number> {
    if (this.numbers.length === 0) {
      const count = Math.max(1, this.plannedParts - this.numbersTaken)
      this.numbersTaken += count
      const [taken] = await this.deps.db
        .update(uploads)
        .set({ nextPart: sql`${uploads.nextPart} + ${count}` })
        .where(eq(uploads.id, this.upload.id))
        .returning({ next: uploads.nextPart })
      // The row went (terminated, expired, its user deleted) while the bytes were arriving.
      if (!taken) throw uploadNotFound()
      const end = taken.next
      for (let number = end - count; number < end; number++) this.numbers.push(number)
    }
    const partNumber = this.numbers.shift()!
    if (partNumber < 1 || partNumber > MAX_PARTS)
      throw new ApiError('INTERNAL_ERROR', {
        cause: new Error(`upload ${this.upload.id} has used all its part numbers`),
      })
    return partNumber
  }
}

/** Reads the body into the writer; answers how many bytes arrived and whether the body broke off. */
async function receive(
  body: ReadableStream<Uint8Array>,
  sinks: { writer: PartWriter; limit: number; hashes: WritableStreamDefaultWriter[] },
) {
  const source = readRequestBody(body)
  let received = 0
  for (;;) {
    let value: Uint8Array | undefined
    try {
      value = await source.read()
    } catch {
      // The client went away mid-body: keep what arrived (tus: "store as much of the received data as possible").
      return { received, interrupted: true }
    }
    if (!value) return { received, interrupted: false }
    received += value.byteLength
    if (received > sinks.limit) {
      await source.cancel()
      throw tooLarge(`the bytes go past the upload's length (Upload-Length); at most ${sinks.limit} more may be sent`)
    }
    // The block is read over at the next read: the writer copies it, the hashes take it, before then.
    await Promise.all([sinks.writer.write(value), ...sinks.hashes.map((hash) => hash.write(value))])
  }
}

/**
 * Applies a PATCH: the offset must be the upload's (409 otherwise, changing nothing), the bytes are stored as
 * full parts plus a new tail, the checksum (when sent) is checked before anything counts (460: nothing kept), and
 * the bytes that complete the upload turn it into a file record. `prepared`: what the session check's batch took
 * for it (preparedPatch); without it (creation-with-upload) the numbers are taken and the hold renewed on the way.
 */
export async function appendToUpload(
  deps: UploadDeps,
  upload: UploadRow,
  request: AppendRequest,
  prepared?: PreparedPatch,
): Promise<AppendResult> {
  if (upload.fileId) {
    if (request.offset === upload.offset && !request.contentLength) return { upload, interrupted: false }
    throw offsetMismatch('the upload is complete', upload.offset)
  }
  if (request.offset !== upload.offset) {
    throw offsetMismatch(`Upload-Offset is ${request.offset}; the upload's offset is ${upload.offset}`, upload.offset)
  }
  const length = upload.length ?? 0
  const limit = length - upload.offset
  if (request.contentLength !== undefined && request.contentLength > limit) {
    throw tooLarge(
      `the PATCH has ${request.contentLength} bytes; the upload has ${limit} left (Upload-Length ${length})`,
    )
  }
  // The hold renewed in the session check's batch: refused, nothing was taken (413 before any byte).
  if (prepared) settleReservation(prepared.held, deps.config.FILES_QUOTA_BYTES, { bytes: Math.max(1, length) })
  // A PATCH that would not complete the upload cannot claim the offset a completing one holds: 409 before its bytes.
  const isHeld = upload.leaseHolders > 0 && (upload.leaseUntil ?? 0) > Date.now()
  if (prepared && isHeld && request.contentLength !== undefined && request.contentLength < limit)
    throw offsetMismatch('a PATCH completing the upload is under way; ask HEAD for its offset', upload.offset)
  if (limit === 0) {
    // Nothing left to send (an empty file, or a completion refused after its claim): complete now.
    const file = await completeUpload(deps, upload)
    return { upload: { ...upload, fileId: file.id }, file, interrupted: false }
  }
  if (!request.body || request.contentLength === 0) return { upload, interrupted: false }
  const lease = prepared?.leaseUntil ? new OffsetLease(deps.db, upload, prepared.leaseUntil) : undefined
  try {
    return await storeBytes(deps, upload, request.body, request, prepared, lease)
  } catch (error) {
    // A holder that will not join gives the offset back (a join that failed, too: R2 joins once).
    if ((await lease?.release()) && (await recordOrphan(deps, upload)))
      throw offsetMismatch('another request completed the upload; HEAD names its file', length)
    // A termination, a user's deletion or another PATCH that came first answers 404 or 409, not the R2 or D1
    // failure it caused here.
    throw await explainFailure(deps, upload, error)
  }
}

/**
 * A completing PATCH that died between R2's join and its record left the joined object, and a multipart upload no
 * PATCH can add to. Once no other holder of the lease may still be joining (this one has given its count back, and
 * none is left, or the lease has ended), those bytes are the whole upload (R2 joins only a PATCH's whole, checked
 * bytes): this PATCH writes their record in the batch the dead one would have sent, guarded by the same offset.
 * True when it did.
 */
async function recordOrphan(deps: UploadDeps, upload: UploadRow): Promise<boolean> {
  const row = await deps.db.query.uploads.findFirst({ where: eq(uploads.id, upload.id) }).catch(() => undefined)
  if (!row || row.fileId || row.offset !== upload.offset) return false
  if (row.leaseHolders > 0 && (row.leaseUntil ?? 0) > Date.now()) return false
  const object = await deps.bucket.head(upload.key).catch(() => null)
  if (!object || object.size !== upload.length) return false
  try {
    const file = await joinedFileRow(deps.bucket, upload, object.size)
    const [claimed] = await deps.db.batch(completionStatements(deps, upload, file))
    return claimed.length > 0
  } catch {
    return false
  }
}

/**
 * A completing PATCH's hold on the offset (uploads.lease_until, lease_holders), taken in the session check's batch.
 * While it lasts, a claim that moves the offset without completing the upload is refused (409), so the offset R2's
 * join was made for is still the upload's when the record's batch runs. Completing PATCHes share it: of two, R2
 * joins one (Cloudflare: a multipart upload "can be completed or aborted at any time … by a parallel invocation of
 * your Worker", and its operations then fail), and the record's batch is guarded by the offset.
 */
class OffsetLease {
  private released = false

  constructor(
    private readonly db: Database,
    private readonly upload: UploadRow,
    private until: number,
  ) {}

  /**
   * Before R2's join: enough of the lease left for the join, the read-back and the record, or the lease renewed
   * (a round trip more, only for a body that took minutes or many bytes to read back); 409 when the offset moved.
   */
  async holdForJoin(readBackMs: number): Promise<void> {
    const now = Date.now()
    const need = JOIN_MARGIN_MS + readBackMs
    if (now + need <= this.until) return
    const [renewed] = await this.db
      .update(uploads)
      .set({
        leaseHolders: leaseHeldOnce(now),
        leaseUntil: sql`max(coalesce(${uploads.leaseUntil}, 0), ${now + need + JOIN_MARGIN_MS})`,
      })
      .where(and(eq(uploads.id, this.upload.id), eq(uploads.offset, this.upload.offset), isNull(uploads.fileId)))
      .returning({ leaseUntil: uploads.leaseUntil })
    if (!renewed?.leaseUntil)
      throw offsetMismatch('another request changed the upload meanwhile; ask HEAD for its offset')
    this.until = renewed.leaseUntil
  }

  /**
   * Gives its count back, while its lease lasts by this clock: once it has ended, another PATCH may have counted
   * holders from 1 again, and taking one off would take that one's (the lease then simply ends). True when it did.
   */
  async release(): Promise<boolean> {
    const now = Date.now()
    if (this.released || now + JOIN_MARGIN_MS >= this.until) return false
    this.released = true
    return this.db
      .update(uploads)
      .set({ leaseHolders: sql`max(0, ${uploads.leaseHolders} - 1)` })
      .where(and(eq(uploads.id, this.upload.id), gt(uploads.leaseUntil, now)))
      .then(
        () => true,
        () => false,
      )
  }
}

async function storeBytes(
  deps: UploadDeps,
  upload: UploadRow,
  body: ReadableStream<Uint8Array>,
  request: AppendRequest,
  prepared: PreparedPatch | undefined,
  lease: OffsetLease | undefined,
): Promise<AppendResult> {
  const length = upload.length ?? 0
  const limit = length - upload.offset
  const multipart = deps.bucket.resumeMultipartUpload(upload.key, upload.r2UploadId)
  const total = upload.tailBytes + (request.contentLength ?? 0)
  const completes = request.contentLength === limit
  const plannedParts =
    request.contentLength === undefined
      ? 0
      : completes
        ? Math.ceil(total / upload.partBytes)
        : Math.floor(total / upload.partBytes)
  const writer = new PartWriter(deps, upload, multipart, plannedParts, prepared?.numbers)
  await writer.loadTail()
  // Bytes arriving whole in one request are hashed on the way, so completing need not read them back.
  const whole = upload.offset === 0 ? new crypto.DigestStream('SHA-256') : undefined
  const checksum = request.checksum ? new crypto.DigestStream(request.checksum.algorithm as 'SHA-256') : undefined
  const hashes = [whole, checksum].filter((digest) => digest !== undefined).map((digest) => digest.getWriter())
  const { received, interrupted } = await receive(body, { writer, limit, hashes })
  await Promise.all(hashes.map((hash) => hash.close()))

  if (checksum && request.checksum) {
    // tus: "the uploaded chunk MUST be discarded, and the upload and its offset MUST NOT be updated". An
    // interrupted body cannot match its checksum either. Its parts in R2 are never recorded, so never joined.
    const actual = new Uint8Array(await checksum.digest).toBase64()
    if (interrupted || actual !== request.checksum.expected) {
      throw new ApiError('CHECKSUM_MISMATCH', {
        message: 'the bytes do not match Upload-Checksum; nothing of them was kept',
      })
    }
  }
  const newOffset = upload.offset + received
  const isComplete = newOffset === length
  if (isComplete) await writer.flushPart()
  await writer.sent()
  const hash = whole ? new Uint8Array(await whole.digest).toHex() : undefined
  if (isComplete && lease && prepared)
    return completeUnderLease(deps, upload, [...prepared.parts, ...writer.parts], lease, hash)
  // A completing PATCH cut short stores what arrived as any other PATCH, once it no longer holds the offset.
  await lease?.release()
  const tail = writer.pending
  const newTailKey = tail.byteLength > 0 ? `${upload.key}.tail-${newOffset}-${crypto.randomUUID()}` : null
  if (newTailKey) await deps.bucket.put(newTailKey, tail)
  const now = Date.now()
  const patchId = crypto.randomUUID()
  const [claimed] = await deps.db.batch([
    deps.db
      .update(uploads)
      .set({
        offset: newOffset,
        tailKey: newTailKey,
        tailBytes: tail.byteLength,
        patchId,
        expiresAt: now + uploadTtlMs(deps.config),
      })
      .where(and(eq(uploads.id, upload.id), eq(uploads.offset, upload.offset), isNull(uploads.fileId), leaseFree(now)))
      .returning(),
    // The parts count only if the update above claimed the offset (same transaction).
    ...writer.parts.map((part) =>
      deps.db.insert(uploadParts).select(
        deps.db
          .select({
            uploadId: uploads.id,
            partNumber: sql<number>`${part.partNumber}`.as('part_number'),
            etag: sql<string>`${part.etag}`.as('etag'),
            size: sql<number>`${part.size}`.as('size'),
          })
          .from(uploads)
          .where(and(eq(uploads.id, upload.id), eq(uploads.patchId, patchId))),
      ),
    ),
  ])
  const updated = claimed[0]
  if (!updated) {
    if (newTailKey) await deps.bucket.delete(newTailKey)
    throw (
      (await raceOutcome(deps, upload)) ??
      offsetMismatch('another request changed the upload meanwhile; ask HEAD for its offset')
    )
  }
  if (upload.tailKey) await deps.bucket.delete(upload.tailKey)
  if (!isComplete) {
    // The reservation lives as long as the upload (renewed in the session check's batch for a PATCH); failing to
    // extend it must not fail bytes already stored.
    if (!prepared) await renewUploadQuota(deps, updated).catch(() => {})
    return { upload: updated, interrupted }
  }
  // Completed without a lease (a body of unknown length, or creation-with-upload): claimed first, then joined.
  const file = await completeUpload(deps, updated, hash)
  return { upload: { ...updated, fileId: file.id }, file, interrupted }
}

/**
 * The PATCH that completes the upload, under its lease: R2 joins the parts stored before it and its own, the record
 * is read from the joined bytes, then one batch moves the offset (guarded by the offset it started from), writes the
 * record and ends the parts and the quota hold, each guarded by the one before. A record is never without its object:
 * the object comes first. Should the batch not claim the offset (the upload terminated, or its user deleted,
 * meanwhile), the object goes with the upload.
 */
async function completeUnderLease(
  deps: UploadDeps,
  upload: UploadRow,
  stored: ReadonlyArray<Pick<PartRow, 'partNumber' | 'etag' | 'size'>>,
  lease: OffsetLease,
  hash: string | undefined,
): Promise<AppendResult> {
  const length = upload.length ?? 0
  const parts = [...stored].sort((a, b) => a.partNumber - b.partNumber)
  checkJoinable(upload, parts)
  await lease.holdForJoin(hash ? 0 : Math.ceil(length / READ_BACK_BYTES_PER_MS))
  await joinParts(deps, upload, parts)
  // From here the join is done: a failure drops the upload with its object (dropJoined), as R2 has consumed it.
  let file: FileRow
  let claimed: unknown[]
  try {
    file = await joinedFileRow(deps.bucket, upload, length, hash)
    ;[claimed] = await deps.db.batch(completionStatements(deps, upload, file))
  } catch (error) {
    throw await dropJoined(deps, upload, error)
  }
  if (claimed.length === 0)
    throw await dropJoined(
      deps,
      upload,
      offsetMismatch('another request changed the upload meanwhile; ask HEAD for its offset'),
    )
  if (upload.tailKey) await deps.bucket.delete(upload.tailKey)
  const done: UploadRow = {
    ...upload,
    offset: length,
    tailKey: null,
    tailBytes: 0,
    fileId: file.id,
    leaseUntil: null,
    leaseHolders: 0,
  }
  return { upload: done, file, interrupted: false }
}

/** The completing batch: the offset claimed, then the record, the parts' rows and the hold's end, each only if it was. */
function completionStatements(deps: UploadDeps, upload: UploadRow, file: FileRow) {
  const recorded = sql`exists (select 1 from ${files} where ${files.id} = ${upload.id})`
  return [
    deps.db
      .update(uploads)
      .set({
        offset: file.size,
        tailKey: null,
        tailBytes: 0,
        fileId: file.id,
        leaseUntil: null,
        leaseHolders: 0,
        // HEAD answers the completed upload (tus: "even if … the upload is already considered completed") until then.
        expiresAt: Date.now() + uploadTtlMs(deps.config),
      })
      .where(and(eq(uploads.id, upload.id), eq(uploads.offset, upload.offset), isNull(uploads.fileId)))
      .returning({ id: uploads.id }),
    insertForUser(deps.db, files, file, upload.userId, previousChanged),
    deps.db.delete(uploadParts).where(and(eq(uploadParts.uploadId, upload.id), recorded)),
    deps.db.delete(storageReservations).where(and(eq(storageReservations.id, upload.id), recorded)),
  ] as const
}
