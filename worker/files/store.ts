// Writing file bytes and records together: bytes to R2 first (streamed, hashed and counted on the way), then
// the D1 record. A failure at any point removes what was written, so no record ever points at missing bytes
// and no object is left without a record. Uploads and the conversion pipeline both store files through here.
import { and, eq } from 'drizzle-orm'
import type { Database } from '../db/client'
import { newId } from '../db/ids'
import { files } from '../db/schema'
import { ApiError } from '../errors'
import { type BlockSource, readChunks } from './blocks'
import { objectKey } from './keys'
import { deleteObjects, forgetPendingDelete } from './objects'
import type { QuotaHold } from './quota'
import { deleteConversionsOf, deletePreviewsOfReplaced, type FileRow } from './records'

export interface StoreDeps {
  readonly db: Database
  readonly bucket: R2Bucket
}

export interface NewFile {
  readonly userId: string
  readonly parentId?: string | null
  readonly name: string
  readonly extension: string
  readonly contentType: string
  /** The bytes: whole, a stream (converter outputs), or an upload's reused blocks (blocks.ts). */
  readonly body: ReadableStream<Uint8Array> | Uint8Array | BlockSource
  /** The exact size when known (declared by the client): the stream must match it. */
  readonly size?: number
  /** Refuse (413) once the stream passes this many bytes. */
  readonly maxBytes?: number
  /**
   * The user's quota hold (worker/files/quota.ts): grown before bytes past it are written, committed with the
   * record, released on any failure. storeFile and replaceFileContent end it either way.
   */
  readonly quota?: QuotaHold
  readonly prefix?: string
  readonly fileModifiedAt?: number | null
  readonly partIndex?: number | null
  readonly partTotal?: number | null
  readonly metadata?: Record<string, unknown>
  readonly jobId?: string | null
  /** Idempotency: a second store with the same origin returns the first record (queue redelivery). */
  readonly originKey?: string | null
  /** The R2 key, when the caller makes it deterministic (conversion outputs); a fresh one from the id otherwise. */
  readonly key?: string
}

/** R2 multipart parts for streams of unknown length (R2's minimum part is 5 MiB). */
const PART_BYTES = 8 * 1024 * 1024

export interface Written {
  size: number
  hash: string
}

/**
 * The source's bytes, counted and hashed as they are read: `next()` answers the next view (undefined at the end)
 * or throws 413/400 when the bytes pass the limits or the declared size. The hashing (workerd's native
 * DigestStream) of one view runs while the caller writes it, and is awaited before the next read, which may
 * fill the same block again.
 */
function meteredReader(source: BlockSource, limits: { size?: number; maxBytes?: number; quota?: QuotaHold }) {
  const digest = new crypto.DigestStream('SHA-256')
  const hashing = digest.getWriter()
  // Rejects when the reading is cancelled: heard through next(), not as an unhandled rejection.
  digest.digest.catch(() => {})
  let hashed: Promise<void> = Promise.resolve()
  let size = 0
  const next = async (): Promise<Uint8Array | undefined> => {
    await hashed
    const value = await source.read()
    if (!value) {
      if (limits.size !== undefined && size !== limits.size) throw sizeMismatch(limits.size)
      await hashing.close()
      return undefined
    }
    size += value.byteLength
    if (limits.maxBytes !== undefined && size > limits.maxBytes) throw tooLarge(limits.maxBytes)
    if (limits.size !== undefined && size > limits.size) throw sizeMismatch(limits.size)
    await limits.quota?.ensure(size)
    hashed = hashing.write(value)
    hashed.catch(() => {})
    return value
  }
  const cancel = (reason: unknown) => {
    source.cancel(reason).catch(() => {})
    hashing.abort(reason).catch(() => {})
  }
  return {
    next,
    cancel,
    result: async (): Promise<Written> => ({ size, hash: new Uint8Array(await digest.digest).toHex() }),
  }
}

const tooLarge = (maxBytes: number) =>
  new ApiError('FILE_TOO_LARGE', {
    message: `the file is larger than ${maxBytes} bytes`,
    details: { max_bytes: maxBytes },
  })

const sizeMismatch = (declared: number) =>
  new ApiError('SIZE_MISMATCH', { message: `the file's size does not match the declared size of ${declared} bytes` })

type Next = () => Promise<Uint8Array | undefined>

async function putStream(deps: StoreDeps, key: string, source: BlockSource, file: NewFile): Promise<Written> {
  const { bucket } = deps
  const metered = meteredReader(source, file)
  let failure: unknown
  // Whatever stops the reading (limits, a broken body) is what the caller hears, not R2's complaint about it.
  const next: Next = async () => {
    try {
      return await metered.next()
    } catch (error) {
      failure ??= error
      metered.cancel(error)
      throw error
    }
  }
  const httpMetadata = { contentType: file.contentType }
  try {
    if (file.size !== undefined) await putKnownLength(bucket, key, next, file.size, httpMetadata)
    else await putInParts(bucket, key, next, httpMetadata)
  } catch (error) {
    await deleteObjects(deps.db, bucket, [key])
    throw failure ?? error
  }
  return metered.result()
}

/** One put of a FixedLengthStream, written chunk by chunk (R2 needs the length of a streamed body). */
async function putKnownLength(
  bucket: R2Bucket,
  key: string,
  next: Next,
  size: number,
  httpMetadata: R2HTTPMetadata,
): Promise<void> {
  const fixed = new FixedLengthStream(size)
  const writer = fixed.writable.getWriter()
  const put = bucket.put(key, fixed.readable, { httpMetadata })
  // A put that fails early must not leave the writing waiting, nor the writing's failure go unheard.
  put.catch(() => {})
  try {
    for (let chunk = await next(); chunk; chunk = await next()) await writer.write(chunk)
    await writer.close()
  } catch (error) {
    await writer.abort(error).catch(() => {})
    await put.catch(() => {})
    throw error
  }
  await put
}

async function putInParts(bucket: R2Bucket, key: string, next: Next, httpMetadata: R2HTTPMetadata): Promise<void> {
  let carry: Uint8Array | undefined
  let ended = false
  // One part in memory, filled again once R2 has taken it: PART_BYTES bounds what an upload of unknown length costs.
  const part = new Uint8Array(PART_BYTES)
  const nextPart = async (): Promise<Uint8Array> => {
    let filled = 0
    for (;;) {
      let chunk = carry
      carry = undefined
      if (!chunk) {
        chunk = ended ? undefined : await next()
        if (!chunk) {
          ended = true
          return part.subarray(0, filled)
        }
      }
      const take = Math.min(chunk.length, PART_BYTES - filled)
      part.set(chunk.subarray(0, take), filled)
      filled += take
      if (take < chunk.length) carry = chunk.subarray(take)
      if (filled === PART_BYTES) return part
    }
  }
  const first = await nextPart()
  if (first.length < PART_BYTES) {
    await bucket.put(key, first, { httpMetadata })
    return
  }
  const upload = await bucket.createMultipartUpload(key, { httpMetadata })
  try {
    const parts: R2UploadedPart[] = []
    for (let part = first; part.length > 0; part = await nextPart())
      parts.push(await upload.uploadPart(parts.length + 1, part))
    await upload.complete(parts)
  } catch (error) {
    await upload.abort().catch(() => {})
    throw error
  }
}

/** Writes the bytes under `key` and answers their size and SHA-256. */
async function writeObject(deps: StoreDeps, key: string, file: NewFile): Promise<Written> {
  if (file.body instanceof Uint8Array) {
    if (file.maxBytes !== undefined && file.body.byteLength > file.maxBytes) throw tooLarge(file.maxBytes)
    await file.quota?.ensure(file.body.byteLength)
    const hash = new Uint8Array(await crypto.subtle.digest('SHA-256', file.body)).toHex()
    await deps.bucket.put(key, file.body, { httpMetadata: { contentType: file.contentType } })
    return { size: file.body.byteLength, hash }
  }
  return putStream(deps, key, file.body instanceof ReadableStream ? readChunks(file.body) : file.body, file)
}

/** The D1 row of a file whose bytes are already under `key` (uploads, conversions, completed resumable uploads). */
export function fileRow(file: Omit<NewFile, 'body'>, id: string, key: string, written: Written, now: number): FileRow {
  return {
    id,
    userId: file.userId,
    parentId: file.parentId ?? null,
    name: file.name,
    extension: file.extension,
    contentType: file.contentType,
    size: written.size,
    hash: written.hash,
    key,
    prefix: file.prefix ?? '',
    fileModifiedAt: file.fileModifiedAt ?? null,
    partIndex: file.partIndex ?? null,
    partTotal: file.partTotal ?? null,
    metadata: file.metadata ?? {},
    jobId: file.jobId ?? null,
    originKey: file.originKey ?? null,
    createdAt: now,
    updatedAt: now,
  }
}

/** Stores bytes and record; returns the record. Idempotent on `originKey`. Ends `file.quota` either way. */
export async function storeFile(deps: StoreDeps, file: NewFile): Promise<FileRow> {
  try {
    return await writeFileAndRecord(deps, file)
  } finally {
    // Committed with the record, or never needed: a no-op after the commit, the release after a failure.
    await file.quota?.release()
  }
}

async function writeFileAndRecord(deps: StoreDeps, file: NewFile): Promise<FileRow> {
  if (file.originKey) {
    const existing = await deps.db.query.files.findFirst({ where: eq(files.originKey, file.originKey) })
    if (existing) {
      // Already stored by an earlier delivery: the bytes made again are not needed.
      if (!(file.body instanceof Uint8Array)) await file.body.cancel()
      return existing
    }
  }
  const now = Date.now()
  const id = newId(now)
  const key = file.key ?? objectKey(file.userId, id, file.prefix)
  const written = await writeObject(deps, key, file)
  try {
    const insert = deps.db
      .insert(files)
      .values(fileRow(file, id, key, written, now))
      .returning()
    const [[row]] = await deps.db.batch([
      insert,
      forgetPendingDelete(deps.db, key),
      ...(file.quota ? [file.quota.commit()] : []),
    ])
    file.quota?.committed()
    return row!
  } catch (error) {
    if (file.originKey) {
      // Two deliveries of one step raced: the first record wins, and its object is the one under this key.
      const existing = await deps.db.query.files.findFirst({ where: eq(files.originKey, file.originKey) })
      if (existing) {
        if (existing.key !== key) await deleteObjects(deps.db, deps.bucket, [key])
        return existing
      }
    }
    await deleteObjects(deps.db, deps.bucket, [key])
    throw error
  }
}

/**
 * Replaces a file's bytes (PUT /files/:id with a file). The new object goes under a new key. Then one D1 batch
 * points the record at it, removes every conversion of the old content (found in the same batch, so one a step
 * stored meanwhile goes too) and commits the quota hold. Only then are the old objects deleted; a failure there is
 * recorded for the sweep. Once the record is committed, its object is never deleted. Answers 409 when another
 * replace committed first (the record points at other bytes than this one read).
 */
export async function replaceFileContent(
  deps: StoreDeps,
  row: FileRow,
  file: Omit<NewFile, 'userId'>,
): Promise<FileRow> {
  try {
    return await replaceObjectAndRecord(deps, row, file)
  } finally {
    await file.quota?.release()
  }
}

async function replaceObjectAndRecord(deps: StoreDeps, row: FileRow, file: Omit<NewFile, 'userId'>): Promise<FileRow> {
  const now = Date.now()
  const key = objectKey(row.userId, newId(now), row.prefix)
  const written = await writeObject(deps, key, { ...file, userId: row.userId })
  let replaced: { row?: FileRow; staleKeys: string[] }
  try {
    const update = deps.db
      .update(files)
      .set({
        name: file.name,
        extension: file.extension,
        contentType: file.contentType,
        size: written.size,
        hash: written.hash,
        key,
        fileModifiedAt: file.fileModifiedAt ?? row.fileModifiedAt,
        metadata: {},
        updatedAt: now,
      })
      .where(and(eq(files.id, row.id), eq(files.key, row.key)))
      .returning()
    const [updated, stalePreviews, conversions] = await deps.db.batch([
      update,
      deletePreviewsOfReplaced(deps.db, row, key),
      deleteConversionsOf(deps.db, row, key),
      forgetPendingDelete(deps.db, key),
      ...(file.quota ? [file.quota.commit()] : []),
    ])
    replaced = { row: updated[0], staleKeys: [...conversions, ...stalePreviews].map((stale) => stale.key) }
  } catch (error) {
    await deleteObjects(deps.db, deps.bucket, [key])
    throw error
  }
  if (!replaced.row) {
    await deleteObjects(deps.db, deps.bucket, [key])
    throw new ApiError('FILE_REPLACED_MEANWHILE')
  }
  await deleteObjects(deps.db, deps.bucket, [row.key, ...replaced.staleKeys])
  return replaced.row
}
