// Streaming a stored file back: R2 answers ranges and conditions itself; this sets the headers clients and
// caches rely on, and a Content-Disposition no file name can break out of.
import { ApiError } from '../errors'
import type { FileRow } from './records'

/** RFC 6266: an ASCII fallback plus the exact UTF-8 name in filename*. */
export function contentDisposition(kind: 'inline' | 'attachment', name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]|["\\%;]/g, '_')
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`)
  return `${kind}; filename="${fallback}"; filename*=UTF-8''${encoded}`
}

export async function streamDownload(bucket: R2Bucket, file: FileRow, request: Request, asAttachment: boolean): Promise<Response> {
  const headers = new Headers({
    'accept-ranges': 'bytes',
    'content-disposition': contentDisposition(asAttachment ? 'attachment' : 'inline', file.name),
    'x-content-type-options': 'nosniff',
    // Uploaded HTML or SVG shown inline must not run script on the API's origin.
    'content-security-policy': "sandbox; default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'",
    'cache-control': 'private, max-age=0, must-revalidate',
  })
  let object: R2Object | R2ObjectBody | null
  try {
    object = await bucket.get(file.key, { range: request.headers, onlyIf: request.headers })
  } catch (error) {
    if (request.headers.has('range')) throw new ApiError(416, 'the requested range is not satisfiable', { code: 'range_not_satisfiable', headers: { 'content-range': `bytes */${file.size}` } })
    throw error
  }
  if (!object) throw new ApiError(404, 'file not found', { code: 'not_found' })
  headers.set('etag', object.httpEtag)
  headers.set('last-modified', object.uploaded.toUTCString())
  headers.set('content-type', file.contentType)
  if (!('body' in object)) return new Response(null, { status: 304, headers })
  const range = object.range as { offset?: number; length?: number; suffix?: number } | undefined
  if (range && request.headers.has('range')) {
    const offset = range.suffix !== undefined ? object.size - range.suffix : (range.offset ?? 0)
    const length = range.suffix !== undefined ? range.suffix : (range.length ?? object.size - offset)
    headers.set('content-range', `bytes ${offset}-${offset + length - 1}/${object.size}`)
    headers.set('content-length', String(length))
    return new Response(object.body, { status: 206, headers })
  }
  headers.set('content-length', String(object.size))
  return new Response(object.body, { status: 200, headers })
}
