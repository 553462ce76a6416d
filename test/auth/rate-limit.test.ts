import { describe, expect, it } from 'vitest'
import { call, callJson, callWithSettings, randomIp } from '../support/api'
import { signUp, uniqueEmail } from '../support/accounts'

describe('rate limits', () => {
  it('answers 429 with Retry-After after 10 logins a minute from one address', async () => {
    const ip = randomIp()
    const email = uniqueEmail()
    const statuses: number[] = []
    for (let i = 0; i < 10; i++) statuses.push((await call('POST', '/auth/login', { ip, json: { email: uniqueEmail(), password: 'whatever' } })).status)
    expect(statuses.every((status) => status === 401)).toBe(true)
    const limited = await callJson('POST', '/auth/login', { ip, json: { email, password: 'whatever' } })
    expect(limited.status).toBe(429)
    expect(limited.body).toMatchObject({ message: 'too many attempts, try again later', code: 'rate_limited' })
    const retryAfter = Number(limited.headers.get('retry-after'))
    expect(retryAfter).toBeGreaterThanOrEqual(1)
    expect(retryAfter).toBeLessThanOrEqual(60)
  })

  it('limits attempts on one email from many addresses', async () => {
    const user = await signUp()
    for (let i = 0; i < 9; i++) await call('POST', '/auth/login', { json: { email: user.email, password: 'wrong password' } })
    const limited = await call('POST', '/auth/login', { json: { email: user.email, password: user.password } })
    expect(limited.status).toBe(429)
  })

  it.each([
    ['/auth/register', () => ({ email: uniqueEmail(), password: 'long enough' })],
    ['/auth/forgot', () => ({ email: uniqueEmail() })],
    ['/auth/verify', () => ({ token: 'not-a-real-token' })],
    ['/auth/refresh', () => ({ refresh_token: 'not-a-real-token' })],
  ])('limits %s per address', async (path, body) => {
    const ip = randomIp()
    for (let i = 0; i < 10; i++) expect((await call('POST', path, { ip, json: body() })).status).not.toBe(429)
    expect((await call('POST', path, { ip, json: body() })).status).toBe(429)
  })

  it('is off when AUTH_RATE_LIMIT_PER_MINUTE is 0', async () => {
    const ip = randomIp()
    for (let i = 0; i < 12; i++) {
      const res = await callWithSettings({ AUTH_RATE_LIMIT_PER_MINUTE: '0' }, 'POST', '/auth/forgot', { ip, json: { email: uniqueEmail() } })
      expect(res.status).toBe(200)
    }
  })
})
