// POST /files and content replacement: the client's X-Edgefloor-* headers read and checked, the file (a multipart
// part, or the raw request body) streamed to storage with its type sniffed from the first bytes, the quota enforced.
import type { SQL } from 'drizzle-orm'
import type { BatchResponse } from 'drizzle-orm/batch'
import type { Config } from '../config'
import type { Database } from '../db/client'
import { newId } from '../db/ids'
import { ApiError } from '../errors'
import { checkName } from '../names'
import { type BlockSource, concatBytes, prependBlock, readRequestBody } from './blocks'
import { dispositionParam, readMultipartFile } from './multipart'
import { adoptedHold, holdQuota, quotaExceeded, reservationQueries, usedBytes, type QuotaHold } from './quota'
import { SNIFF_BYTES, sniffContentType } from './sniff'

export interface UploadMeta {
  readonly name: string
  readonly extension: string
  readonly size?: number
  readonly modifiedAt?: number
  readonly prefix: string
}

export interface IncomingFile extends UploadMeta {
  readonly contentType: string
  readonly body: BlockSource
}

const bad = (message: string) => new ApiError('VALIDATION_FAILED', { message })

/** X-Edgefloor-<name>, or the Basefloor client's X-Basefloor-<name>. */
function uploadHeader(headers: Headers, name: string): string | undefined {
  return headers.get(`x-edgefloor-${name}`) ?? headers.get(`x-basefloor-${name}`) ?? undefined
}

/** A display name from a URI-encoded header: decoded, then made safe (safeFileName). */
export function cleanFileName(raw: string): string {
  let name = raw
  try {
    name = decodeURIComponent(raw)
  } catch {}
  return safeFileName(name)
}

/**
 * A display name: no path, no control characters, at most 255 characters; a format character (a bidi control) is 400
 * (worker/names.ts).
 */
export function safeFileName(raw: string): string {
  const name = raw
    .replace(/[\u0000-\u001f\u007f]/g, '')
    .split(/[\\/]/)
    .pop()!
    .trim()
  checkName('the file name', name)
  if (name === '' || name === '.' || name === '..') return 'file'
  // A joiner the cut leaves at the end would hide there.
  return name.slice(0, 255).replace(/[\u200c\u200d]+$/u, '')
}

export function extensionOf(name: string): string {
  const dot = name.lastIndexOf('.')
  return dot > 0 && dot < name.length - 1 ? name.slice(dot).toLowerCase() : ''
}

/**
 * A storage prefix of safe path segments; `@user._id` (and Basefloor's `@req_user._id`) expands to the caller.
 * Traversal is refused, not fixed.
 */
export function cleanPrefix(raw: string | undefined, userId: string): string {
  if (!raw) return ''
  let prefix = raw
  try {
    prefix = decodeURIComponent(raw)
  } catch {}
  prefix = prefix.replaceAll('@user._id', userId).replaceAll('@req_user._id', userId)
  if (/[\u0000-\u001f\u007f\\]/.test(prefix)) throw bad('the prefix may not contain control characters or backslashes')
  const segments = prefix.split('/').filter((segment) => segment !== '' && segment !== '.')
  if (segments.some((segment) => segment === '..')) throw bad('the prefix may not contain ".."')
  if (segments.some((segment) => !/^[\p{L}\p{N} ._@-]+$/u.test(segment)))
    throw bad('prefix segments may contain letters, digits, space, ".", "_", "@" and "-"')
  const clean = segments.join('/')
  if (clean.length > 512) throw bad('the prefix is longer than 512 characters')
  return clean
}

export function parseModified(raw: string | undefined): number | undefined {
  if (!raw) return undefined
  const ms = /^\d{1,15}$/.test(raw) ? Number(raw) : Date.parse(raw)
  if (!Number.isFinite(ms)) throw bad('X-Edgefloor-Modified must be epoch milliseconds or an ISO date')
  return ms
}

function parseSize(raw: string | undefined, header = 'X-Edgefloor-Size'): number | undefined {
  if (raw === undefined) return undefined
  if (!/^\d{1,15}$/.test(raw)) throw bad(`${header} must be a whole number of bytes`)
  return Number(raw)
}

/** The bytes with their first SNIFF_BYTES looked at: the sniffed type, and a source that still has them all. */
async function sniffBlocks(
  source: BlockSource,
  extension: string,
): Promise<{ contentType: string; body: BlockSource }> {
  let head: Uint8Array | undefined = await source.read()
  if (head && head.byteLength < SNIFF_BYTES) {
    // Short reads (a body made in JavaScript, or a small file): the first ones joined into a copy of their own.
    let joined: Uint8Array = head.slice()
    while (joined.byteLength < SNIFF_BYTES) {
      const next = await source.read()
      if (!next) break
      joined = concatBytes(joined, next)
    }
    head = joined
  }
  return {
    contentType: sniffContentType(head?.subarray(0, SNIFF_BYTES) ?? new Uint8Array(0), extension),
    body: prependBlock(head, source),
  }
}

/**
 * The file of a raw upload: the request body itself (any Content-Type but multipart/form-data), named by
 * X-Edgefloor-Name or Content-Disposition's filename, sized by X-Edgefloor-Size or Content-Length.
 */
function rawFile(
  request: Request,
  declaredSize: number | undefined,
  isNamed: boolean,
): { filename: string; size?: number; blocks: BlockSource } {
  const headers = request.headers
  const contentType = headers.get('content-type') ?? ''
  const contentLength = parseSize(headers.get('content-length') ?? undefined, 'Content-Length')
  const filenameParam = dispositionParam(headers.get('content-disposition') ?? '', 'filename')
  const named = isNamed || filenameParam !== undefined
  // An empty or JSON body is a file only when the client says so (a name, or a declared size of 0): otherwise it
  // is a request that forgot its file, or sent JSON where a file was expected, and storing it would hide that.
  if ((!request.body || contentLength === 0) && !named && declaredSize !== 0)
    throw new ApiError('FILE_MISSING', { message: `the request has no file: ${HOW_TO_SEND}` })
  if (/^application\/x-www-form-urlencoded/i.test(contentType)) {
    throw new ApiError('CONTENT_TYPE_UNSUPPORTED', {
      message: `a form-urlencoded body is not a file: ${HOW_TO_SEND}`,
      details: { accepted: ACCEPTED_UPLOAD_TYPES },
    })
  }
  if (/^(application|text)\/([\w.+-]+\+)?json\b/i.test(contentType) && !named) {
    throw new ApiError('CONTENT_TYPE_UNSUPPORTED', {
      message: `a JSON body is taken as a file only when named (X-Edgefloor-Name): ${HOW_TO_SEND}`,
      details: { accepted: ACCEPTED_UPLOAD_TYPES },
    })
  }
  if (!request.body)
    return { filename: filenameParam ?? 'file', size: 0, blocks: readRequestBody(new Blob([]).stream()) }
  if (declaredSize !== undefined && contentLength !== undefined && declaredSize !== contentLength) {
    throw new ApiError('SIZE_MISMATCH', {
      message: `the file's size does not match the declared size of ${declaredSize} bytes`,
    })
  }
  return {
    filename: filenameParam ?? 'file',
    size: declaredSize ?? contentLength,
    blocks: readRequestBody(request.body),
  }
}

/** What an upload may send, named in every refusal of its body. */
const ACCEPTED_UPLOAD_TYPES = [
  "application/octet-stream (or the file's own type) as the raw body",
  'multipart/form-data with the field "file"',
]
const HOW_TO_SEND =
  'send the file\'s bytes as the body (Content-Type: application/octet-stream or the file\'s own type, its name in X-Edgefloor-Name), or multipart/form-data with the file in the field "file"'

/** Reads an upload request: headers, then the file (the multipart `file` part, or the raw body) as a sniffed stream. */
export async function readUpload(request: Request, userId: string): Promise<IncomingFile> {
  const headers = request.headers
  const declaredSize = parseSize(uploadHeader(headers, 'size'))
  const modifiedAt = parseModified(uploadHeader(headers, 'modified'))
  const prefix = cleanPrefix(uploadHeader(headers, 'prefix'), userId)
  const contentType = headers.get('content-type') ?? undefined
  const file = /^multipart\//i.test(contentType ?? '')
    ? { ...(await readMultipartFile(request.body, contentType)).file, size: declaredSize }
    : rawFile(request, declaredSize, uploadHeader(headers, 'name') !== undefined)
  const name = cleanFileName(uploadHeader(headers, 'name') ?? file.filename)
  const extension = extensionOf(name)
  const sniffed = await sniffBlocks(file.blocks, extension)
  return { name, extension, size: file.size, modifiedAt, prefix, contentType: sniffed.contentType, body: sniffed.body }
}

export interface Allowance {
  /** The most bytes this upload may have (FILES_MAX_BYTES, or what is left of the quota). */
  readonly maxBytes: number
  readonly overLimit: () => ApiError
}

const tooLarge = (maxBytes: number) =>
  new ApiError('FILE_TOO_LARGE', {
    message: `the file is larger than ${maxBytes} bytes`,
    details: { max_bytes: maxBytes },
  })

export interface AllowanceOptions {
  /** The size limit of this kind of upload; FILES_MAX_BYTES unless given. */
  readonly maxBytes?: number
  /** Bytes the upload frees once it lands (the file it replaces and its conversions): not counted as used. */
  readonly reclaimedBytes?: number
}

/**
 * The size limit, then a quota hold for this upload (worker/files/quota.ts): 413 at once when the declared
 * size is over either; the hold grows as the bytes arrive and ends with storeFile or replaceFileContent.
 */
export async function reserveUpload(
  db: Database,
  config: Config,
  userId: string,
  declaredSize?: number,
  options: AllowanceOptions = {},
): Promise<{ maxBytes: number; quota: QuotaHold }> {
  const maxBytes = options.maxBytes ?? config.FILES_MAX_BYTES
  if (declaredSize !== undefined && declaredSize > maxBytes) throw tooLarge(maxBytes)
  const quota = await holdQuota(db, config.FILES_QUOTA_BYTES, userId, {
    bytes: declaredSize,
    reclaimBytes: options.reclaimedBytes,
  })
  return { maxBytes, quota }
}

/**
 * reserveUpload in the session check's round trip: the size limit, then the hold's statements in the
 * check's batch (guarded by callerIsLive). An unknown size holds 1 MiB ahead when the quota has room for it (as the
 * hold grows while the bytes arrive), so a small upload needs no round trip more.
 */
export async function reserveUploadWithCheck(
  db: Database,
  config: Config,
  userId: string,
  declaredSize: number | undefined,
  check: { readonly guard: SQL; batch(queries: Reservation): Promise<BatchResponse<Reservation>> },
): Promise<{ maxBytes: number; quota: QuotaHold }> {
  const maxBytes = config.FILES_MAX_BYTES
  if (declaredSize !== undefined && declaredSize > maxBytes) throw tooLarge(maxBytes)
  const options = { id: newId(), bytes: declaredSize }
  const held = await check.batch(
    reservationQueries(db, config.FILES_QUOTA_BYTES, userId, { ...options, guard: check.guard, ahead: MiB }),
  )
  return { maxBytes, quota: adoptedHold(db, config.FILES_QUOTA_BYTES, userId, options, held) }
}
type Reservation = ReturnType<typeof reservationQueries>
const MiB = 1024 * 1024

/**
 * What this user may still store in one file; 413 at once when the declared size is already too much. A check,
 * not a reservation: writers that must hold against parallel writers use holdQuota (worker/files/quota.ts).
 */
export async function uploadAllowance(
  db: Database,
  config: Config,
  userId: string,
  declaredSize?: number,
  options: AllowanceOptions = {},
): Promise<Allowance> {
  const sizeLimit = options.maxBytes ?? config.FILES_MAX_BYTES
  if (declaredSize !== undefined && declaredSize > sizeLimit) throw tooLarge(sizeLimit)
  const quota = config.FILES_QUOTA_BYTES
  if (quota === 0) return { maxBytes: sizeLimit, overLimit: () => tooLarge(sizeLimit) }
  const used = await usedBytes(db, userId, { reclaimBytes: options.reclaimedBytes })
  const left = quota - used
  if (left <= 0 || (declaredSize !== undefined && declaredSize > left)) throw quotaExceeded(used, quota, declaredSize)
  if (left >= sizeLimit) return { maxBytes: sizeLimit, overLimit: () => tooLarge(sizeLimit) }
  return { maxBytes: left, overLimit: () => quotaExceeded(used, quota) }
}
