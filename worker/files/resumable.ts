// Resumable uploads for files bigger than one request: an R2 multipart upload under a server-chosen key, parts
// sent one request each (any order, again after a failure), then completed into a normal file record whose hash
// and type are read back from the stored bytes. Aborting, or failing to complete, leaves nothing behind.
import { and, asc, eq } from 'drizzle-orm'
import type { Config } from '../config'
import type { Database } from '../db/client'
import { newId } from '../db/ids'
import { files, uploadParts, uploads } from '../db/schema'
import { ApiError } from '../errors'
import { objectKey } from './keys'
import type { FileRow } from './records'
import { SNIFF_BYTES, sniffContentType } from './sniff'
import { fileRow, hex } from './store'
import { cleanFileName, cleanPrefix, extensionOf, uploadAllowance } from './upload'

export type UploadRow = typeof uploads.$inferSelect

/** R2's rule: every part but the last at least 5 MiB; at most 10,000 parts. */
export const MIN_PART_BYTES = 5 * 1024 * 1024
export const MAX_PARTS = 10_000

export interface UploadDeps {
  readonly db: Database
  readonly bucket: R2Bucket
  readonly config: Config
}

const uploadNotFound = () => new ApiError('UPLOAD_NOT_FOUND')

/** The resumable size limit, then the quota, for an upload that has (or would have) `totalBytes`. */
async function checkResumableTotal(deps: UploadDeps, userId: string, totalBytes: number | undefined) {
  const maxBytes = deps.config.FILES_MAX_RESUMABLE_BYTES
  if (totalBytes !== undefined && totalBytes > maxBytes) {
    throw new ApiError('FILE_TOO_LARGE', { message: `the upload would have ${totalBytes} bytes; a resumable upload may have at most ${maxBytes}`, details: { max_bytes: maxBytes } })
  }
  return uploadAllowance(deps.db, deps.config, userId, totalBytes, { maxBytes })
}

export async function findOwnedUpload(db: Database, userId: string, id: string): Promise<UploadRow> {
  const upload = await db.query.uploads.findFirst({ where: and(eq(uploads.id, id), eq(uploads.userId, userId)) })
  if (!upload) throw uploadNotFound()
  return upload
}

export async function startUpload(deps: UploadDeps, userId: string, request: { name: string; prefix?: string; modified?: number; size?: number }): Promise<UploadRow> {
  await checkResumableTotal(deps, userId, request.size)
  const now = Date.now()
  const id = newId(now)
  const name = cleanFileName(request.name)
  const prefix = cleanPrefix(request.prefix, userId)
  const key = objectKey(userId, id, prefix)
  const multipart = await deps.bucket.createMultipartUpload(key)
  const row: UploadRow = { id, userId, r2UploadId: multipart.uploadId, key, name, extension: extensionOf(name), prefix, fileModifiedAt: request.modified ?? null, createdAt: now }
  try {
    await deps.db.insert(uploads).values(row)
  } catch (error) {
    await multipart.abort().catch(() => {})
    throw error
  }
  return row
}

export async function listParts(db: Database, upload: UploadRow) {
  return db.query.uploadParts.findMany({ where: eq(uploadParts.uploadId, upload.id), orderBy: asc(uploadParts.partNumber) })
}

/** Stores one part (sending a part number again replaces it). The body must have a known length. */
export async function uploadPart(deps: UploadDeps, upload: UploadRow, partNumber: number, body: ReadableStream<Uint8Array> | null, length: number) {
  if (!body || !Number.isFinite(length) || length <= 0) throw new ApiError('VALIDATION_FAILED', { message: 'a part needs a body and its Content-Length' })
  const maxPartBytes = deps.config.FILES_MAX_PART_BYTES
  if (length > maxPartBytes) throw new ApiError('FILE_TOO_LARGE', { message: `a part may have at most ${maxPartBytes} bytes; this one has ${length}`, details: { max_part_bytes: maxPartBytes } })
  // A part sent again replaces the earlier one: only the others count towards the total.
  const others = (await listParts(deps.db, upload)).filter((part) => part.partNumber !== partNumber)
  await checkResumableTotal(deps, upload.userId, others.reduce((sum, part) => sum + part.size, length))
  const part = await deps.bucket.resumeMultipartUpload(upload.key, upload.r2UploadId).uploadPart(partNumber, body)
  await deps.db
    .insert(uploadParts)
    .values({ uploadId: upload.id, partNumber, etag: part.etag, size: length })
    .onConflictDoUpdate({ target: [uploadParts.uploadId, uploadParts.partNumber], set: { etag: part.etag, size: length } })
  return { part: partNumber, etag: part.etag, size: length }
}

async function digestOf(bucket: R2Bucket, key: string): Promise<string> {
  const object = await bucket.get(key)
  if (!object) throw new ApiError('INTERNAL_ERROR', { cause: new Error(`the completed upload ${key} is missing from R2`) })
  const digest = new crypto.DigestStream('SHA-256')
  await object.body.pipeTo(digest)
  return hex(await digest.digest)
}

/** Joins the parts into the file; the record gets the size, hash and sniffed type of the stored bytes. */
export async function completeUpload(deps: UploadDeps, upload: UploadRow): Promise<FileRow> {
  const parts = await listParts(deps.db, upload)
  if (parts.length === 0) throw new ApiError('UPLOAD_INCOMPLETE', { message: 'the upload has no parts yet' })
  const gap = parts.findIndex((part, index) => part.partNumber !== index + 1)
  if (gap >= 0) throw new ApiError('UPLOAD_INCOMPLETE', { message: `part ${gap + 1} is missing` })
  const small = parts.slice(0, -1).find((part) => part.size < MIN_PART_BYTES)
  if (small) {
    throw new ApiError('UPLOAD_INCOMPLETE', { message: `part ${small.partNumber} has ${small.size} bytes; every part but the last needs at least ${MIN_PART_BYTES}` })
  }
  const size = parts.reduce((sum, part) => sum + part.size, 0)
  const allowance = await checkResumableTotal(deps, upload.userId, size)
  if (size > allowance.maxBytes) throw allowance.overLimit()
  const multipart = deps.bucket.resumeMultipartUpload(upload.key, upload.r2UploadId)
  await multipart.complete(parts.map((part) => ({ partNumber: part.partNumber, etag: part.etag })))
  try {
    const head = await deps.bucket.get(upload.key, { range: { offset: 0, length: SNIFF_BYTES } })
    const contentType = sniffContentType(new Uint8Array(head ? await head.arrayBuffer() : new ArrayBuffer(0)), upload.extension)
    const hash = await digestOf(deps.bucket, upload.key)
    const now = Date.now()
    const row = fileRow(
      { userId: upload.userId, name: upload.name, extension: upload.extension, contentType, prefix: upload.prefix, fileModifiedAt: upload.fileModifiedAt },
      upload.id,
      upload.key,
      { size, hash },
      now,
    )
    // One batch: the file appears and the upload disappears together.
    await deps.db.batch([deps.db.insert(files).values(row), deps.db.delete(uploads).where(eq(uploads.id, upload.id))])
    return row
  } catch (error) {
    await deps.bucket.delete(upload.key)
    await deps.db.delete(uploads).where(eq(uploads.id, upload.id))
    throw error
  }
}

export async function abortUpload(deps: UploadDeps, upload: UploadRow): Promise<void> {
  await deps.bucket
    .resumeMultipartUpload(upload.key, upload.r2UploadId)
    .abort()
    .catch(() => {})
  await deps.db.delete(uploads).where(eq(uploads.id, upload.id))
}
