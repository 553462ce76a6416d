// Previews from the location's cache (Cache API): a preview is immutable for its file's content and its parameters,
// so it is kept under a key of the owner, the content hash, the file's kind and the variant, and a repeat is answered
// without D1's preview row or R2. The owner is in the key so that no one learns from a fast answer that another
// account holds the same bytes. Only the route reads it, after it has authorized the caller on the file (bearer
// token, or a signed URL checked against the owner's current stamp). A revoked link or a deleted file answers 401
// or 404 before the cache is asked; a replaced file has another hash, so another key.
import type { FileRow } from '../files/records'
import { type PreviewParams, variantName } from './params'

/** A host that resolves nowhere: the cache is keyed by URL, and no request ever goes there. */
const CACHE_ORIGIN = 'https://preview-cache.edgefloor.invalid'
/** The cached copy lives as long as the location keeps it; what the client sees is set by the route. */
const CACHED_FOR = 'public, max-age=31536000, immutable'

export function previewCacheKey(
  file: Pick<FileRow, 'userId' | 'hash' | 'extension' | 'contentType'>,
  params: PreviewParams,
): Request {
  return new Request(
    `${CACHE_ORIGIN}/${file.userId}/${file.hash}/${encodeURIComponent(file.extension)}/${encodeURIComponent(file.contentType)}/${variantName(params)}`,
  )
}

export interface CachedPreview {
  body: ReadableStream
  contentType: string
  size: number
}

export async function cachedPreview(key: Request): Promise<CachedPreview | undefined> {
  const hit = await caches.default.match(key)
  if (!hit?.body) return undefined
  return {
    body: hit.body,
    contentType: hit.headers.get('content-type') ?? 'application/octet-stream',
    size: Number(hit.headers.get('content-length')),
  }
}

/** Keeps a copy of the preview's bytes while they go to the client: the answer is `body`'s other half. */
export function keepPreview(
  waitUntil: (promise: Promise<unknown>) => void,
  key: Request,
  body: ReadableStream,
  contentType: string,
  size: number,
): ReadableStream {
  const [toClient, toCache] = body.tee()
  const headers = { 'content-type': contentType, 'content-length': String(size), 'cache-control': CACHED_FOR }
  waitUntil(caches.default.put(key, new Response(toCache, { headers })).catch(() => {}))
  return toClient
}
