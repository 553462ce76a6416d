// CORS on every route, so a browser app on any origin can call the API: preflights answered before routing, and the
// allowing headers on every answer, errors included. `*` by default: callers authenticate with a bearer token they
// send themselves, never a cookie, so a page on another origin has nothing ambient to borrow. CORS_ORIGINS narrows it.
import { createMiddleware } from 'hono/factory'
import type { AppEnv } from './api'

/** The headers a browser script may read besides the CORS-safelisted ones: what tus, downloads and jobs answer. */
export const EXPOSED_HEADERS = [
  'Location',
  'Link',
  'ETag',
  'Accept-Ranges',
  'Content-Disposition',
  'Content-Range',
  'Retry-After',
  'Preference-Applied',
  'WWW-Authenticate',
  'Upload-Offset',
  'Upload-Length',
  'Upload-Expires',
  'Upload-Metadata',
  'Tus-Resumable',
  'Tus-Version',
  'Tus-Extension',
  'Tus-Max-Size',
  'Tus-Checksum-Algorithm',
  'X-D1-Bookmark',
  'X-Request-Id',
  'X-Edgefloor-File-Id',
].join(', ')

const ALLOWED_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS'
/** Chromium caps a preflight's cache at 2 hours (Firefox at 24): a longer max-age buys nothing. */
export const PREFLIGHT_MAX_AGE_SECONDS = 7200

/** The Access-Control-Allow-Origin value for a request's Origin, or undefined when that origin is not allowed. */
function allowedOrigin(origins: readonly string[], origin: string | undefined): string | undefined {
  if (origins.length === 0) return '*'
  return origin && origins.includes(origin) ? origin : undefined
}

export const cors = createMiddleware<AppEnv>(async (c, next) => {
  const origins = c.var.config.CORS_ORIGINS
  const allowOrigin = allowedOrigin(origins, c.req.header('origin'))
  // Fetch standard, CORS-preflight request: "It uses `OPTIONS` as method and includes the following header:
  // `Access-Control-Request-Method`". Any other OPTIONS (tus discovery) goes to its route.
  if (c.req.method === 'OPTIONS' && c.req.header('access-control-request-method') !== undefined) {
    const headers = new Headers()
    if (origins.length > 0) headers.set('vary', 'Origin')
    if (allowOrigin) {
      headers.set('access-control-allow-origin', allowOrigin)
      headers.set('access-control-allow-methods', ALLOWED_METHODS)
      // Whatever the script asks to send: a bearer token, tus and upload headers, X-D1-Bookmark. Nothing in them
      // is ambient, so naming them one by one would protect nothing and break the next header a client adds.
      const requested = c.req.header('access-control-request-headers')
      if (requested) headers.set('access-control-allow-headers', requested)
      headers.set('access-control-max-age', String(PREFLIGHT_MAX_AGE_SECONDS))
    }
    return new Response(null, { status: 204, headers })
  }
  await next()
  if (origins.length > 0) c.header('vary', 'Origin', { append: true })
  if (!allowOrigin) return
  c.header('access-control-allow-origin', allowOrigin)
  c.header('access-control-expose-headers', EXPOSED_HEADERS)
})
