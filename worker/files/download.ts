// Streaming a stored file back with the headers clients and caches rely on. Validators come from the record
// (ETag = the SHA-256 of the bytes, Last-Modified = the record's update time), so conditional requests (RFC 9110
// §13) are decided before R2 is read: a 304, 412 or 416 costs no object read. Ranges are parsed here too, so
// the answer never depends on how the storage layer reads a header.
import { ApiError } from '../errors'
import { downloadName } from './naming'
import type { FileRow } from './records'

/** RFC 6266: an ASCII fallback plus the exact UTF-8 name in filename*. */
export function contentDisposition(kind: 'inline' | 'attachment', name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]|["\\%;]/g, '_')
  const encoded = encodeURIComponent(name).replace(
    /['()*]/g,
    (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`,
  )
  return `${kind}; filename="${fallback}"; filename*=UTF-8''${encoded}`
}

export interface ByteRange {
  readonly offset: number
  readonly length: number
}

/**
 * The one byte range a Range header asks of a file of `size` bytes (RFC 9110 §14.1.2). An end past the file is
 * clamped to its last byte; a suffix longer than the file is the whole file. 'unsatisfiable' when the range starts
 * past the end (→ 416). A missing, malformed or multi-range header answers undefined: the whole file (→ 200).
 */
export function requestedRange(header: string | null, size: number): ByteRange | 'unsatisfiable' | undefined {
  const match = header ? /^bytes=[ \t]*(\d*)-(\d*)[ \t]*$/i.exec(header) : null
  if (!match) return undefined
  const [, first = '', last = ''] = match
  if (first === '') {
    if (last === '') return undefined
    const length = Math.min(Number(last), size)
    return length === 0 ? 'unsatisfiable' : { offset: size - length, length }
  }
  const offset = Number(first)
  if (last !== '' && Number(last) < offset) return undefined
  if (offset >= size) return 'unsatisfiable'
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1)
  return { offset, length: end - offset + 1 }
}

export interface Validators {
  /** A strong entity tag with its quotes. */
  readonly etag: string
  /** Whole seconds, as Last-Modified carries it. */
  readonly lastModifiedMs: number
}

export type PreconditionOutcome = 'proceed' | 'precondition-failed' | 'not-modified'

/** The opaque tags of an If-Match / If-None-Match list; '*' as itself. */
function entityTags(header: string): Array<{ weak: boolean; tag: string }> | '*' {
  if (header.trim() === '*') return '*'
  return [...header.matchAll(/(W\/)?("[^"]*")/g)].map((match) => ({ weak: match[1] !== undefined, tag: match[2]! }))
}

const httpDate = (header: string | null) => (header ? Date.parse(header) : Number.NaN)

/**
 * RFC 9110 §13.2.2 for GET: If-Match, else If-Unmodified-Since (→ 412).
 * Then If-None-Match, else If-Modified-Since (→ 304).
 */
export function evaluatePreconditions(headers: Headers, current: Validators): PreconditionOutcome {
  const ifMatch = headers.get('if-match')
  if (ifMatch !== null) {
    const tags = entityTags(ifMatch)
    // Strong comparison: a weak tag never matches.
    if (tags !== '*' && !tags.some((tag) => !tag.weak && tag.tag === current.etag)) return 'precondition-failed'
  } else {
    const since = httpDate(headers.get('if-unmodified-since'))
    if (current.lastModifiedMs > since) return 'precondition-failed'
  }
  const ifNoneMatch = headers.get('if-none-match')
  if (ifNoneMatch !== null) {
    const tags = entityTags(ifNoneMatch)
    // Weak comparison.
    if (tags === '*' || tags.some((tag) => tag.tag === current.etag)) return 'not-modified'
  } else {
    const since = httpDate(headers.get('if-modified-since'))
    if (current.lastModifiedMs <= since) return 'not-modified'
  }
  return 'proceed'
}

/** If-Range (RFC 9110 §13.1.5): the range holds only while the validator still matches exactly. */
function rangeStillValid(headers: Headers, current: Validators): boolean {
  const ifRange = headers.get('if-range')
  if (ifRange === null) return true
  if (ifRange.trim().startsWith('"')) return ifRange.trim() === current.etag
  return httpDate(ifRange) === current.lastModifiedMs
}

export function validatorsOf(file: FileRow): Validators {
  return { etag: `"${file.hash}"`, lastModifiedMs: Math.floor(file.updatedAt / 1000) * 1000 }
}

export async function streamDownload(
  bucket: R2Bucket,
  file: FileRow,
  request: Request,
  asAttachment: boolean,
): Promise<Response> {
  const validators = validatorsOf(file)
  const headers = new Headers({
    'accept-ranges': 'bytes',
    etag: validators.etag,
    'last-modified': new Date(validators.lastModifiedMs).toUTCString(),
    'cache-control': 'private, max-age=0, must-revalidate',
  })
  const outcome = evaluatePreconditions(request.headers, validators)
  if (outcome === 'precondition-failed') {
    throw new ApiError('PRECONDITION_FAILED', { headers: Object.fromEntries(headers) })
  }
  if (outcome === 'not-modified') return new Response(null, { status: 304, headers })
  const range = rangeStillValid(request.headers, validators)
    ? requestedRange(request.headers.get('range'), file.size)
    : undefined
  if (range === 'unsatisfiable') {
    throw new ApiError('RANGE_NOT_SATISFIABLE', { headers: { 'content-range': `bytes */${file.size}` } })
  }
  const object = await bucket.get(file.key, range ? { range } : undefined)
  if (!object) throw new ApiError('FILE_NOT_FOUND')
  headers.set('content-type', file.contentType)
  headers.set('content-disposition', contentDisposition(asAttachment ? 'attachment' : 'inline', downloadName(file)))
  headers.set('x-content-type-options', 'nosniff')
  // Uploaded HTML or SVG shown inline must not run script on the API's origin.
  headers.set('content-security-policy', "sandbox; default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'")
  if (range) {
    headers.set('content-range', `bytes ${range.offset}-${range.offset + range.length - 1}/${file.size}`)
    headers.set('content-length', String(range.length))
    return new Response(object.body, { status: 206, headers })
  }
  headers.set('content-length', String(object.size))
  return new Response(object.body, { status: 200, headers })
}
