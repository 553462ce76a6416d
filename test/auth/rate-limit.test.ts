import { describe, expect, it } from 'vitest'
import { call, callJson, callJsonWithSettings, callWithSettings, randomIp } from '../support/api'
import { emailsTo, signUp, tokenIn, uniqueEmail, waitForEmail, type TestUser } from '../support/accounts'

describe('rate limits', () => {
  it('answers 429 with Retry-After after 10 logins a minute from one address', async () => {
    // The 11 attempts in one window of the limiter (a clock minute): under load they can take seconds and cross one.
    const { statuses, limited } = await inOneWindow(async () => {
      const ip = randomIp()
      const statuses: number[] = []
      for (let i = 0; i < 10; i++)
        statuses.push(
          (await call('POST', '/auth/login', { ip, json: { email: uniqueEmail(), password: 'whatever' } })).status,
        )
      return {
        statuses,
        limited: await callJson('POST', '/auth/login', { ip, json: { email: uniqueEmail(), password: 'whatever' } }),
      }
    })
    expect(statuses.every((status) => status === 401)).toBe(true)
    expect(limited.status).toBe(429)
    expect(limited.body).toMatchObject({ message: 'too many attempts, try again later', code: 'RATE_LIMITED' })
    const retryAfter = Number(limited.headers.get('retry-after'))
    expect(retryAfter).toBeGreaterThanOrEqual(1)
    expect(retryAfter).toBeLessThanOrEqual(60)
  })

  it('locks one (email, address) out after 10 failures, and that address only', async () => {
    const statuses = await inOneWindow(async () => {
      const user = await signUp()
      const ip = randomIp()
      const results: number[] = []
      for (let i = 0; i < 10; i++)
        results.push(
          (await call('POST', '/auth/login', { ip, json: { email: user.email, password: 'wrong password' } })).status,
        )
      results.push(
        (await call('POST', '/auth/login', { ip, json: { email: user.email, password: user.password } })).status,
      )
      results.push((await call('POST', '/auth/login', { json: { email: user.email, password: user.password } })).status)
      return results
    })
    expect(statuses).toEqual([...Array(10).fill(401), 429, 200])
  })

  it("never refuses the owner's correct password from a new address, even after 40 failures from 40 addresses", async () => {
    const statuses = await inOneWindow(async () => {
      const user = await signUp()
      const attackers = Array.from({ length: 40 }, randomIp)
      const failures = new Set<number>()
      for (const ip of attackers)
        failures.add((await call('POST', '/auth/login', { ip, json: { email: user.email, password: 'guess' } })).status)
      // Over the per-email ceiling (3 × 10 a minute), an address that already failed for this email gets no second
      // try, while the owner, from an address of their own, logs in.
      const again = (
        await call('POST', '/auth/login', { ip: attackers[0], json: { email: user.email, password: 'another guess' } })
      ).status
      const owner = (await call('POST', '/auth/login', { json: { email: user.email, password: user.password } })).status
      return [...failures, again, owner]
    })
    expect(statuses).toEqual([401, 429, 200])
  })

  it.each([
    ['/auth/register', () => ({ email: uniqueEmail(), password: 'long enough' })],
    ['/auth/forgot', () => ({ email: uniqueEmail() })],
    ['/auth/verify', () => ({ token: 'not-a-real-token' })],
    ['/auth/refresh', () => ({ refresh_token: 'not-a-real-token' })],
  ])('limits %s per address', async (path, body) => {
    const statuses = await inOneWindow(async () => {
      const ip = randomIp()
      const results: number[] = []
      for (let i = 0; i < 11; i++) results.push((await call('POST', path, { ip, json: body() })).status)
      return results
    })
    expect(statuses.slice(0, 10)).not.toContain(429)
    expect(statuses[10]).toBe(429)
  })

  it('is off when AUTH_RATE_LIMIT_PER_MINUTE is 0', async () => {
    const ip = randomIp()
    for (let i = 0; i < 12; i++) {
      const res = await callWithSettings({ AUTH_RATE_LIMIT_PER_MINUTE: '0' }, 'POST', '/auth/forgot', {
        ip,
        json: { email: uniqueEmail() },
      })
      expect(res.status).toBe(200)
    }
  })

  it('keeps the reset-mail cap (one per address every 5 minutes) when AUTH_RATE_LIMIT_PER_MINUTE is 0: 12 requests, 1 email', async () => {
    const user = await signUp()
    for (let i = 0; i < 12; i++) {
      const res = await callWithSettings({ AUTH_RATE_LIMIT_PER_MINUTE: '0' }, 'POST', '/auth/forgot', {
        json: { email: user.email },
      })
      expect(res.status).toBe(200)
    }
    // callWithSettings waits for the Worker's waitUntil work, the email's delivery included.
    const resets = (await emailsTo(user.email)).filter((email) => email.body.subject === 'Reset your password')
    expect(resets).toHaveLength(1)
  })
})

describe('per-account guessing bounded whatever the addresses (N = 3 here: an hourly ceiling of 6N = 18 failures)', () => {
  const limited = { AUTH_RATE_LIMIT_PER_MINUTE: '3' }
  const login = (json: object, ip = randomIp()) => callWithSettings(limited, 'POST', '/auth/login', { ip, json })

  it('past the ceiling, fresh addresses do not buy fresh guesses: tries wait their turn (429 + Retry-After), the owner is emailed a reset link, and that link lets them in', async () => {
    const user = await signUp()
    // 18 wrong passwords, each from a new address: each is answered (no address failed twice).
    const first: number[] = []
    for (let i = 0; i < 18; i++) first.push((await login({ email: user.email, password: `guess ${i}` })).status)
    expect(first).toEqual(Array(18).fill(401))
    // Reaching the ceiling emailed the owner a password-reset link (callWithSettings waits for the delivery).
    const resets = (await emailsTo(user.email)).filter((email) => email.body.subject === 'Reset your password')
    expect(resets).toHaveLength(1)

    // Ten more guesses at once, each from a new address: one turn at a time for the whole account.
    const burst = await Promise.all(
      Array.from({ length: 10 }, (_, i) => login({ email: user.email, password: `burst ${i}` })),
    )
    const statuses = burst.map((res) => res.status)
    expect(statuses.filter((status) => status === 401).length).toBeLessThanOrEqual(2)
    expect(statuses.filter((status) => status === 429).length).toBeGreaterThanOrEqual(8)
    const refused = burst.find((res) => res.status === 429)!
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect(await refused.json()).toMatchObject({
      code: 'RATE_LIMITED',
      message: expect.stringContaining('POST /auth/forgot'),
    })

    // The owner's way in, whatever the guesser does: the emailed link sets a new password, and it signs in at once.
    const reset = await callJson('POST', '/auth/reset', {
      json: { token: tokenIn(resets[0]!), password: 'a brand new password' },
    })
    expect(reset.status).toBe(200)
    expect((await login({ email: user.email, password: 'a brand new password' })).status).toBe(200)
  })

  it('the turns grow apart: 1 s, then 2 s after N more failures past the ceiling', async () => {
    const { guardedDelayMs, GUARDED_MAX_DELAY_MS } = await import('../../worker/auth/rate-limit')
    expect([0, 2, 3, 5, 6, 9, 30, 1000].map((excess) => guardedDelayMs(excess, 3))).toEqual([
      1000,
      1000,
      2000,
      2000,
      4000,
      8000,
      300_000,
      GUARDED_MAX_DELAY_MS,
    ])
  })
})

/** Runs attempts inside one fixed one-minute window of the limiter; in the rare case that a minute boundary fell in
 * the middle (the count restarted), runs them again from scratch. */
async function inOneWindow<T>(attempts: () => Promise<T>): Promise<T> {
  for (;;) {
    const minute = Math.floor(Date.now() / 60_000)
    const seen = await attempts()
    if (Math.floor(Date.now() / 60_000) === minute) return seen
  }
}

describe('per-account rate limits on token endpoints (3 a minute here, each attempt from a new address)', () => {
  const limited = { AUTH_RATE_LIMIT_PER_MINUTE: '3' }
  const post = async (path: string, options: { json?: unknown; token?: string }) =>
    (await callWithSettings(limited, 'POST', path, options)).status

  it("limits verify per account: the attempts with one account's token count together", async () => {
    const statuses = await inOneWindow(async () => {
      const user = await signUp()
      const token = tokenIn(await waitForEmail(user.email))
      const results: number[] = []
      for (let i = 0; i < 4; i++) results.push(await post('/auth/verify', { json: { token } }))
      return results
    })
    expect(statuses).toEqual([200, 401, 401, 429])
  })

  it('limits refresh per account, across every address and every rotated token', async () => {
    const statuses = await inOneWindow(async () => {
      let refreshToken = (await signUp()).refreshToken
      const results: number[] = []
      for (let i = 0; i < 4; i++) {
        const res = await callJsonWithSettings(limited, 'POST', '/auth/refresh', {
          json: { refresh_token: refreshToken },
        })
        results.push(res.status)
        if (res.status === 200) refreshToken = res.body.refresh_token
      }
      return results
    })
    expect(statuses).toEqual([200, 200, 200, 429])
  })

  it('limits verify/resend per account, and another account is not held back by it', async () => {
    let other: TestUser | undefined
    const statuses = await inOneWindow(async () => {
      const user = await signUp()
      other = await signUp()
      const results: number[] = []
      for (let i = 0; i < 4; i++) results.push(await post('/auth/verify/resend', { token: user.token }))
      return results
    })
    expect(statuses).toEqual([200, 200, 200, 429])
    expect(await post('/auth/verify/resend', { token: other!.token })).toBe(200)
  })
})
