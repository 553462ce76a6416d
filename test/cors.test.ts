// CORS on every mounted route, as the Fetch standard (fetch.spec.whatwg.org, "CORS protocol") has a browser check it:
// - "A CORS-preflight request is a CORS request that checks to see if the CORS protocol is understood. It uses
//   `OPTIONS` as method and includes the following header: `Access-Control-Request-Method`".
// - "An HTTP response to a CORS-preflight request can include the following headers: `Access-Control-Allow-Methods`
//   … `Access-Control-Allow-Headers` … `Access-Control-Max-Age`", and "A successful HTTP response, i.e., one where
//   the server developer intends to share it, to a CORS request can use any status, as long as it includes the
//   headers stated above" (`Access-Control-Allow-Origin`), so an error's JSON is readable by the script too.
// - "`Access-Control-Expose-Headers`: Indicates which headers can be exposed as part of the response by listing
//   their names": tus clients read Location and Upload-Offset, downloads ETag and Content-Disposition.
import { inspectRoutes } from 'hono/dev'
import { describe, expect, it } from 'vitest'
import { createApp } from '../worker/app'
import { EXPOSED_HEADERS, PREFLIGHT_MAX_AGE_SECONDS } from '../worker/cors'
import { call, callWithSettings } from './support/api'
import { signUp } from './support/accounts'

const ORIGIN = 'http://app.example.test:5173'
const routes = [
  ...new Map(
    inspectRoutes(createApp())
      .filter((route) => !route.isMiddleware && route.method !== 'ALL')
      .map((route) => [
        `${route.method} ${route.path}`,
        {
          method: route.method,
          path: route.path.replace(/:[A-Za-z_]+(\{[^}]*\})?/g, (name) =>
            name.startsWith(':part') ? '1' : '0123456789abcdef01234567',
          ),
        },
      ]),
  ).values(),
]

const preflight = (
  method: string,
  headers = 'authorization, content-type, tus-resumable, upload-length, x-d1-bookmark',
) => ({
  headers: { origin: ORIGIN, 'access-control-request-method': method, 'access-control-request-headers': headers },
})

describe('CORS on every route (default: any origin)', () => {
  it('finds the routes', () => {
    expect(routes.length).toBeGreaterThan(30)
  })

  it.each(routes)('answers the preflight of $method $path', async ({ method, path }) => {
    const response = await call('OPTIONS', path, preflight(method === 'OPTIONS' ? 'GET' : method))
    expect(response.status).toBe(204)
    expect(Object.fromEntries(response.headers)).toMatchObject({
      'access-control-allow-origin': '*',
      'access-control-allow-methods': 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS',
      'access-control-allow-headers': 'authorization, content-type, tus-resumable, upload-length, x-d1-bookmark',
      'access-control-max-age': String(PREFLIGHT_MAX_AGE_SECONDS),
    })
    expect(await response.text()).toBe('')
  })

  it.each(routes.filter((route) => route.method !== 'OPTIONS'))(
    'lets a script read the answer of $method $path, an error included',
    async ({ method, path }) => {
      const response = await call(method, path, { headers: { origin: ORIGIN } })
      expect(response.headers.get('access-control-allow-origin')).toBe('*')
      expect(response.headers.get('access-control-expose-headers')).toBe(EXPOSED_HEADERS)
    },
  )

  it('exposes what tus, downloads and jobs answer', () => {
    const exposed = EXPOSED_HEADERS.toLowerCase().split(', ')
    for (const name of [
      'location',
      'upload-offset',
      'upload-length',
      'tus-resumable',
      'tus-version',
      'tus-max-size',
      'etag',
      'content-disposition',
      'retry-after',
      'x-d1-bookmark',
    ]) {
      expect(exposed).toContain(name)
    }
  })

  it('leaves tus discovery (OPTIONS without Access-Control-Request-Method) to its route, with CORS headers', async () => {
    const response = await call('OPTIONS', '/files/tus', { headers: { origin: ORIGIN } })
    expect(response.status).toBe(204)
    expect(response.headers.get('tus-version')).toBe('1.0.0')
    expect(response.headers.get('access-control-allow-origin')).toBe('*')
  })

  it('answers a signed-in call from another origin with its body readable', async () => {
    const user = await signUp()
    const response = await call('GET', '/auth/user', { token: user.token, headers: { origin: ORIGIN } })
    expect(response.status).toBe(200)
    expect(response.headers.get('access-control-allow-origin')).toBe('*')
    expect(await response.json()).toMatchObject({ email: user.email })
  })
})

describe('CORS_ORIGINS restricts the origins', () => {
  const settings = { CORS_ORIGINS: `https://one.example.com, ${ORIGIN}` }

  it('allows a listed origin by name, and varies on Origin', async () => {
    const answer = await callWithSettings(settings, 'OPTIONS', '/files', preflight('POST'))
    expect(answer.status).toBe(204)
    expect(answer.headers.get('access-control-allow-origin')).toBe(ORIGIN)
    expect(answer.headers.get('vary')).toBe('Origin')
    const read = await callWithSettings(settings, 'GET', '/', { headers: { origin: ORIGIN } })
    expect(read.headers.get('access-control-allow-origin')).toBe(ORIGIN)
    expect(read.headers.get('vary')).toContain('Origin')
  })

  it('gives an origin not listed no Access-Control-Allow-Origin, so the browser blocks it', async () => {
    const answer = await callWithSettings(settings, 'OPTIONS', '/files', {
      headers: { ...preflight('POST').headers, origin: 'https://evil.example.net' },
    })
    expect(answer.status).toBe(204)
    expect(answer.headers.get('access-control-allow-origin')).toBeNull()
    expect(answer.headers.get('access-control-allow-methods')).toBeNull()
    const read = await callWithSettings(settings, 'GET', '/', { headers: { origin: 'https://evil.example.net' } })
    expect(read.status).toBe(200)
    expect(read.headers.get('access-control-allow-origin')).toBeNull()
  })

  it('refuses a malformed origin at start-up, naming the setting', async () => {
    const { loadConfig } = await import('../worker/config')
    expect(() => loadConfig({ JWT_SECRET: 'x'.repeat(32), CORS_ORIGINS: 'app.example.com/path' })).toThrow(
      /CORS_ORIGINS: expected origins like/,
    )
  })
})
