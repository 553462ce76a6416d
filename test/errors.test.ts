// Unexpected failures: whatever a handler throws that is not an ApiError answers 500 with the public
// `{ message: 'internal error', request_id }` and nothing of its internals; the cause goes to the log only, with
// the request id that ties the two together.
import { createExecutionContext, env, waitOnExecutionContext } from 'cloudflare:test'
import { HTTPException } from 'hono/http-exception'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createApp } from '../worker/app'
import { BASE, requestFor } from './support/api'

const SECRET = 'D1_ERROR: no such column: users.password_hash at /srv/edgefloor/worker/db/client.ts:42'

async function fetchFrom(
  app: { fetch: (request: Request, env: Env, ctx: ExecutionContext) => Response | Promise<Response> },
  request: Request,
  bindings: Env = env,
) {
  const ctx = createExecutionContext()
  const response = await app.fetch(request, bindings, ctx)
  await waitOnExecutionContext(ctx)
  return response
}

/** The real app with one more route that fails the way a bug would. */
function appThrowing(thrown: () => unknown) {
  const app = createApp()
  app.get('/failing', () => {
    throw thrown()
  })
  return app
}

function expectNoInternals(text: string) {
  expect(text).not.toContain('D1_ERROR')
  expect(text).not.toContain('password_hash')
  expect(text).not.toContain('/srv/edgefloor')
  expect(text).not.toMatch(/\bat .*:\d+/)
  expect(text).not.toContain('stack')
}

afterEach(() => {
  vi.restoreAllMocks()
})

describe('an unexpected exception in a handler', () => {
  it('answers 500 { message } JSON with the request id, and no message, stack or path of the cause', async () => {
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {})
    const response = await fetchFrom(
      appThrowing(() => new Error(SECRET)),
      new Request(`${BASE}/failing`, { headers: { 'cf-ray': 'ray-500-test' } }),
    )
    expect(response.status).toBe(500)
    expect(response.headers.get('content-type')).toContain('application/json')
    expect(response.headers.get('x-request-id')).toBe('ray-500-test')
    const text = await response.text()
    expect(JSON.parse(text)).toEqual({ message: 'internal error', code: 'INTERNAL_ERROR', request_id: 'ray-500-test' })
    expectNoInternals(text)
    // The private cause is logged, under the same request id.
    const lines = logged.mock.calls.map((call) => String(call[0]))
    expect(lines.some((line) => line.includes('ray-500-test') && line.includes('no such column'))).toBe(true)
  })

  it.each([
    ['a thrown string', () => SECRET],
    ['a TypeError from a bug', () => new TypeError(`Cannot read properties of undefined (reading 'id') ${SECRET}`)],
    ["Hono's HTTPException with a 5xx status", () => new HTTPException(503, { message: SECRET })],
  ])('treats %s the same way', async (_, thrown) => {
    vi.spyOn(console, 'error').mockImplementation(() => {})
    const response = await fetchFrom(appThrowing(thrown), new Request(`${BASE}/failing`))
    expect(response.status).toBe(500)
    const text = await response.text()
    expect(JSON.parse(text)).toEqual({
      message: 'internal error',
      code: 'INTERNAL_ERROR',
      request_id: expect.any(String),
    })
    expectNoInternals(text)
  })

  it('holds for a real route whose database fails under it (login with a broken D1 binding)', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {})
    const failingD1 = new Proxy(env.DB, {
      get(target, property) {
        if (property === 'prepare' || property === 'batch' || property === 'exec') {
          return () => {
            throw new Error(SECRET)
          }
        }
        // Every request reads through a D1 session (worker/db/replicas.ts): its statements fail the same way.
        if (property === 'withSession') {
          const fail = () => {
            throw new Error(SECRET)
          }
          return () => ({ prepare: fail, batch: fail, getBookmark: () => null })
        }
        return Reflect.get(target, property)
      },
    })
    const request = requestFor('POST', '/auth/login', {
      ip: '10.9.9.9',
      json: { email: 'someone@example.com', password: 'whatever it is' },
    })
    const response = await fetchFrom(createApp(), request, { ...env, DB: failingD1 })
    expect(response.status).toBe(500)
    const text = await response.text()
    expect(JSON.parse(text)).toEqual({
      message: 'internal error',
      code: 'INTERNAL_ERROR',
      request_id: expect.any(String),
    })
    expectNoInternals(text)
  })
})
