// The security matrix: every mounted route is either listed as public here or refuses requests without a valid
// bearer token. A new route fails this suite until it is classified.
import { inspectRoutes } from 'hono/dev'
import { describe, expect, it } from 'vitest'
import { createApp } from '../../worker/app'
import { call } from '../support/api'
import { signUp } from '../support/accounts'

/** Routes anyone may call (they authenticate by other means, or need no identity). */
const PUBLIC = new Set([
  'GET /',
  'GET /openapi.json',
  // The API reference and the console pages with their static files: they hold no data; the console signs in.
  'GET /docs',
  'GET /console',
  'GET /static/:file',
  'POST /auth/register',
  'POST /register',
  'POST /auth/login',
  'POST /login',
  'POST /auth/verify',
  'POST /user/verify',
  'POST /auth/forgot',
  'POST /user/reset/password',
  'POST /auth/reset',
  'PUT /user/reset/password',
  'POST /auth/refresh',
  // A signed URL (?token=…) stands in for the bearer token; without either it answers 401 (tested in files).
  'GET /files/:id/download',
  // tus discovery (Tus-Version, Tus-Extension, limits): no data, and browsers send CORS preflights without tokens.
  'OPTIONS /files/tus',
])

const routes = inspectRoutes(createApp())
  .filter((route) => !route.isMiddleware && route.method !== 'ALL')
  .map((route) => ({ method: route.method, path: route.path, key: `${route.method} ${route.path}` }))
const unique = [...new Map(routes.map((route) => [route.key, route])).values()]
const concrete = (path: string) => path.replace(/:[A-Za-z_]+(\{[^}]*\})?/g, '0123456789abcdef01234567')

describe('security matrix', () => {
  it('finds the mounted routes', () => {
    expect(unique.length).toBeGreaterThan(10)
  })

  const protectedRoutes = unique.filter((route) => !PUBLIC.has(route.key))

  it.each(protectedRoutes)('$key refuses a request without a token', async ({ method, path }) => {
    const res = await call(method, concrete(path), { headers: { 'content-type': 'application/json' }, body: method === 'GET' || method === 'HEAD' ? undefined : '{}' })
    expect(res.status).toBe(401)
    expect(await res.json()).toMatchObject({ message: expect.any(String) })
  })

  it.each(protectedRoutes)('$key refuses a forged token', async ({ method, path }) => {
    const res = await call(method, concrete(path), { token: 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.', body: method === 'GET' ? undefined : '{}' })
    expect(res.status).toBe(401)
  })

  it.each(protectedRoutes.filter((route) => route.path.includes(':')))('$key answers another user 404 for an id that is not theirs (or 403 from a rule that needs no record)', async ({ method, path }) => {
    const stranger = await signUp()
    const res = await call(method, concrete(path), { token: stranger.token, headers: { 'content-type': 'application/json' }, body: method === 'GET' ? undefined : '{}' })
    // 403 only from a rule that refuses whatever the record holds (it names the rule, never the data).
    expect([400, 403, 404]).toContain(res.status)
    if (res.status === 403) expect((await res.json()) as object).toHaveProperty('rule')
  })
})
