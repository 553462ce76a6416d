// tus 1.0.0 (https://tus.io/protocols/resumable-upload) on the upload engine (resumable.ts): the headers read and
// written, and the bytes of a PATCH cut into R2 parts of the upload's fixed size. A PATCH can have any length, R2
// parts cannot, so what is left after the last full part is kept as its own object (the tail) and joined with the
// next PATCH's bytes, as tus's S3 stores keep their "incomplete part". Nothing of a PATCH counts until one D1
// batch records its parts and the new offset, on the condition that the offset is still the one it started from:
// of two PATCHes racing at one offset, one wins and the other answers 409 having changed nothing.
import { and, eq, isNull, sql } from 'drizzle-orm'
import { uploadParts, uploads } from '../db/schema'
import { ApiError } from '../errors'
import type { FileRow } from './records'
import {
  completeUpload,
  explainFailure,
  MAX_PARTS,
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

/**
 * The bytes of one PATCH (or a creation-with-upload POST), gathered into parts of `upload.partBytes`. One part goes
 * to R2 while the next one fills (two part buffers at most, reused). When the request's length is known, the part
 * numbers it needs are taken from D1 in one write.
 */
class PartWriter {
  readonly parts: { partNumber: number; etag: string; size: number }[] = []
  private piece: Uint8Array
  /** The other part buffer, free once R2 has taken its part. */
  private spare: Uint8Array | undefined
  private filled = 0
  private sending: Promise<void> = Promise.resolve()
  private numbers: number[] = []
  private numbersTaken = 0

  constructor(
    private readonly deps: UploadDeps,
    private readonly upload: UploadRow,
    private readonly multipart: R2MultipartUpload,
    /** The parts this request's bytes make, when its length is known (0: take numbers one at a time). */
    private readonly plannedParts: number,
  ) {
    this.piece = new Uint8Array(upload.partBytes)
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
 * Applies a PATCH. The offset must be the upload's (409 otherwise, changing nothing). The bytes are stored as full
 * parts plus a new tail. The checksum, when sent, is checked before anything counts (460: nothing kept). The bytes
 * that complete the upload turn it into a file record.
 */
export async function appendToUpload(
  deps: UploadDeps,
  upload: UploadRow,
  request: AppendRequest,
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
  if (limit === 0) {
    // Nothing left to send (an empty file): complete at once.
    const file = await completeUpload(deps, upload)
    return { upload: { ...upload, fileId: file.id }, file, interrupted: false }
  }
  if (!request.body || request.contentLength === 0) return { upload, interrupted: false }
  try {
    return await storeBytes(deps, upload, request.body, request)
  } catch (error) {
    // A termination, a user's deletion or another PATCH that came first answers 404 or 409, not the R2 or D1
    // failure it caused here.
    throw await explainFailure(deps, upload, error)
  }
}

async function storeBytes(
  deps: UploadDeps,
  upload: UploadRow,
  body: ReadableStream<Uint8Array>,
  request: AppendRequest,
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
  const writer = new PartWriter(deps, upload, multipart, plannedParts)
  await writer.loadTail()
  // Bytes arriving whole in one request are hashed on the way, so completing need not read them back.
  const whole = upload.offset === 0 ? new crypto.DigestStream('SHA-256') : undefined
  const checksum = request.checksum ? new crypto.DigestStream(request.checksum.algorithm as 'SHA-256') : undefined
  const hashes = [whole, checksum].filter((digest) => digest !== undefined).map((digest) => digest.getWriter())
  const { received, interrupted } = await receive(body, { writer, limit, hashes })
  await Promise.all(hashes.map((hash) => hash.close()))

  let newTailKey: string | null = null
  const discard = async () => {
    if (newTailKey) await deps.bucket.delete(newTailKey)
  }
  if (checksum && request.checksum) {
    // tus: "the uploaded chunk MUST be discarded, and the upload and its offset MUST NOT be updated". An
    // interrupted body cannot match its checksum either.
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
  const tail = writer.pending
  if (tail.byteLength > 0) {
    newTailKey = `${upload.key}.tail-${newOffset}-${crypto.randomUUID()}`
    await deps.bucket.put(newTailKey, tail)
  }
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
      .where(and(eq(uploads.id, upload.id), eq(uploads.offset, upload.offset), isNull(uploads.fileId)))
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
    await discard()
    throw (
      (await raceOutcome(deps, upload)) ??
      offsetMismatch('another request changed the upload meanwhile; ask HEAD for its offset')
    )
  }
  if (upload.tailKey) await deps.bucket.delete(upload.tailKey)
  if (!isComplete) {
    // The reservation lives as long as the upload; failing to extend it must not fail bytes already stored.
    await renewUploadQuota(deps, updated).catch(() => {})
    return { upload: updated, interrupted }
  }
  const file = await completeUpload(deps, updated, whole ? new Uint8Array(await whole.digest).toHex() : undefined)
  return { upload: { ...updated, fileId: file.id }, file, interrupted }
}
