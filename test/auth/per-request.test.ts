// What one authenticated request costs in D1 (issue 23): the access token's check is one read that brings the
// account and the session together, prepared once per isolate, and a token that fails verification reads nothing.
// The statement is reused, its answers are not: a logout still ends the token on the very next request (issue 18).
import { createExecutionContext, env, waitOnExecutionContext } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { createApp } from '../../worker/app'
import { signUp } from '../support/accounts'
import { call, requestFor } from '../support/api'

type Statement = D1PreparedStatement

/** The real D1 binding, counting the statements run through it (prepared once or not). */
function countingD1(real: D1Database) {
  const run: string[] = []
  const counted = (statement: Statement, sql: string): Statement =>
    new Proxy(statement, {
      get(target, property) {
        const value = Reflect.get(target, property, target)
        if (typeof value !== 'function') return value
        if (property === 'bind') return (...values: unknown[]) => counted(value.apply(target, values), sql)
        if (['first', 'all', 'raw', 'run'].includes(String(property))) {
          return (...args: unknown[]) => {
            run.push(sql)
            return value.apply(target, args)
          }
        }
        return value.bind(target)
      },
    })
  // The binding and the D1 sessions opened on it (every request runs in one, worker/db/replicas.ts).
  const countingTarget = <T extends object>(binding: T): T =>
    new Proxy(binding, {
      get(target, property) {
        const value = Reflect.get(target, property, target) as (...args: unknown[]) => never
        if (property === 'prepare') return (sql: string) => counted(value.call(target, sql), sql)
        if (property === 'withSession') return (...args: unknown[]) => countingTarget(value.apply(target, args))
        if (property === 'batch' || property === 'exec') {
          return (...args: unknown[]) => {
            run.push(String(property))
            return value.apply(target, args)
          }
        }
        return typeof value === 'function' ? value.bind(target) : value
      },
    })
  return { d1: countingTarget(real), run }
}

describe('the per-request cost of an authenticated route (issue 23)', () => {
  const app = createApp()
  const { d1, run } = countingD1(env.DB)
  const countingEnv = { ...env, DB: d1 }

  async function getUser(token: string): Promise<Response> {
    const ctx = createExecutionContext()
    const response = await app.fetch(requestFor('GET', '/auth/user', { token }), countingEnv, ctx)
    await waitOnExecutionContext(ctx)
    return response
  }

  it('answers GET /auth/user from one D1 read that carries the account and the session check', async () => {
    const user = await signUp()
    for (let request = 0; request < 3; request++) {
      run.length = 0
      const res = await getUser(user.token)
      expect(res.status).toBe(200)
      expect(await res.json()).toMatchObject({ _id: user.id, email: user.email, email_verified: false })
      expect(run).toHaveLength(1)
      expect(run[0]).toMatch(/from "users" left join "sessions"/)
      expect(run[0]).not.toMatch(/password_hash/)
    }
  })

  it('ends the token on the request right after logout, though the statement is prepared once', async () => {
    const user = await signUp()
    expect((await getUser(user.token)).status).toBe(200)
    expect((await call('POST', '/auth/logout', { token: user.token })).status).toBe(200)
    const res = await getUser(user.token)
    expect(res.status).toBe(401)
    expect(await res.json()).toEqual({ message: 'token was revoked', code: 'TOKEN_REVOKED' })
  })

  it('reads nothing from D1 for a token that fails verification (tampered, or no token at all)', async () => {
    const user = await signUp()
    const [header, payload, signature] = user.token.split('.')
    const tampered = `${header}.${payload}.${signature!.slice(0, -2)}${signature!.endsWith('AA') ? 'BB' : 'AA'}`
    run.length = 0
    for (const token of [tampered, 'not-a-jwt', `${header}.${payload}.`])
      expect((await getUser(token)).status).toBe(401)
    expect(run).toEqual([])
  })
})
