// Sessions that really end, and the account hardening of issue 18, each tried the way an attacker would, through
// the Worker's fetch handler with real D1 and Durable Objects.
import { describe, expect, it } from 'vitest'
import { call, callJson, callWithSettings, randomIp } from '../support/api'
import { emailsTo, signUp, tokenIn, uniqueEmail, waitForEmail } from '../support/accounts'
import { uploaded } from '../support/files'
import { grantRole } from '../support/roles'

const me = (token: string) => call('GET', '/auth/user', { token })

describe('sessions: access tokens end with their session', () => {
  it('ends the access token at once on POST /auth/logout of its own session (no body needed), and only that session', async () => {
    const user = await signUp()
    const other = await callJson('POST', '/auth/login', { json: { email: user.email, password: user.password } })
    expect((await me(user.token)).status).toBe(200)
    expect((await callJson('POST', '/auth/logout', { token: user.token })).body).toEqual({ message: 'signed out' })
    expect(await (await me(user.token)).json()).toEqual({ message: 'token was revoked', code: 'TOKEN_REVOKED' })
    expect((await call('POST', '/auth/refresh', { json: { refresh_token: user.refreshToken } })).status).toBe(401)
    expect((await me(other.body.token)).status).toBe(200)
  })

  it('rotates a refresh token sent twice at once only once: the other is reuse, and the session ends', async () => {
    const user = await signUp()
    const answers = await Promise.all(
      [0, 1].map(() => callJson('POST', '/auth/refresh', { json: { refresh_token: user.refreshToken } })),
    )
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 401])
    expect(answers.find((answer) => answer.status === 401)?.body.code).toBe('REFRESH_TOKEN_REUSED')
    const rotated = answers.find((answer) => answer.status === 200)!
    expect((await call('POST', '/auth/refresh', { json: { refresh_token: rotated.body.refresh_token } })).status).toBe(
      401,
    )
  })

  it('ends the access tokens of a session whose refresh token was reused (stolen)', async () => {
    const user = await signUp()
    const rotated = await callJson('POST', '/auth/refresh', { json: { refresh_token: user.refreshToken } })
    expect(rotated.status).toBe(200)
    expect((await me(rotated.body.token)).status).toBe(200)
    expect((await callJson('POST', '/auth/refresh', { json: { refresh_token: user.refreshToken } })).body.code).toBe(
      'REFRESH_TOKEN_REUSED',
    )
    expect((await me(rotated.body.token)).status).toBe(401)
    expect((await me(user.token)).status).toBe(401)
  })

  it('lists the sessions with device, address, times and the current one marked; DELETE ends one at once', async () => {
    const user = await signUp()
    const phone = await callJson('POST', '/auth/login', {
      ip: '10.1.2.3',
      headers: { 'user-agent': 'Phone/1.0' },
      json: { email: user.email, password: user.password },
    })
    const list = await callJson('GET', '/auth/sessions', { token: user.token })
    expect(list.status).toBe(200)
    expect(list.headers.get('cache-control')).toBe('no-store')
    expect(list.body).toHaveLength(2)
    const current = list.body.find((session) => session.current)
    const phoneSession = list.body.find((session) => !session.current)
    expect(phoneSession).toMatchObject({
      device: 'Phone/1.0',
      address: '10.1.2.3',
      created_at: expect.any(String),
      last_used_at: expect.any(String),
    })
    expect(current!._id).not.toBe(phoneSession!._id)
    expect((await callJson('DELETE', `/auth/sessions/${phoneSession!._id}`, { token: user.token })).body).toEqual({
      message: 'session ended',
    })
    expect((await me(phone.body.token)).status).toBe(401)
    expect((await call('POST', '/auth/refresh', { json: { refresh_token: phone.body.refresh_token } })).status).toBe(
      401,
    )
    expect((await callJson('GET', '/auth/sessions', { token: user.token })).body.map((session) => session._id)).toEqual(
      [current!._id],
    )
  })

  it("answers 404 for another user's session id, exactly as for an unknown one, and ends nothing", async () => {
    const alice = await signUp()
    const mallory = await signUp()
    const [aliceSession] = (await callJson('GET', '/auth/sessions', { token: alice.token })).body
    const theirs = await callJson('DELETE', `/auth/sessions/${aliceSession!._id}`, { token: mallory.token })
    const unknown = await callJson('DELETE', '/auth/sessions/0123456789abcdef01234567', { token: mallory.token })
    expect(theirs).toMatchObject({ status: 404, body: { message: 'session not found', code: 'SESSION_NOT_FOUND' } })
    expect(unknown.body).toEqual(theirs.body)
    expect((await me(alice.token)).status).toBe(200)
  })
})

describe('signed file URLs', () => {
  it('stop working after logout-all and after a password reset', async () => {
    const user = await signUp()
    const file = await uploaded(user, 'note.txt', 'secret')
    const path = new URL(file.url).pathname + new URL(file.url).search
    expect((await call('GET', path)).status).toBe(200)
    await callJson('POST', '/auth/logout', { token: user.token, json: { all: true } })
    expect((await callJson('GET', path)).body).toEqual({
      message: 'the file link is invalid or has expired',
      code: 'FILE_LINK_INVALID',
    })

    const second = await callJson('POST', '/auth/login', { json: { email: user.email, password: user.password } })
    const fresh = await callJson('GET', `/files/${file._id}`, { token: second.body.token })
    const freshPath = new URL(fresh.body.url).pathname + new URL(fresh.body.url).search
    expect((await call('GET', freshPath)).status).toBe(200)
    await call('POST', '/auth/forgot', { json: { email: user.email } })
    const reset = await call('POST', '/auth/reset', {
      json: { token: tokenIn(await waitForEmail(user.email, 2)), password: 'a brand new password' },
    })
    expect(reset.status).toBe(200)
    expect((await call('GET', freshPath)).status).toBe(401)
  })

  it("answers ?token= for an unknown id exactly as for someone else's id", async () => {
    const alice = await signUp()
    const mallory = await signUp()
    const alicesFile = await uploaded(alice, 'a.txt', 'a')
    const mallorysFile = await uploaded(mallory, 'm.txt', 'm')
    const token = new URL(mallorysFile.url).searchParams.get('token')
    const theirs = await callJson('GET', `/files/${alicesFile._id}/download?token=${token}`)
    const unknown = await callJson('GET', `/files/0123456789abcdef01234567/download?token=${token}`)
    expect(theirs.status).toBe(401)
    expect(unknown).toEqual({ ...theirs, headers: unknown.headers })
  })
})

describe('answers are not cached', () => {
  it('sends Cache-Control: no-store on login, refresh, the current user and file lists', async () => {
    const user = await signUp()
    const login = await callJson('POST', '/auth/login', { json: { email: user.email, password: user.password } })
    const refreshed = await callJson('POST', '/auth/refresh', { json: { refresh_token: login.body.refresh_token } })
    await uploaded(user, 'x.txt', 'x')
    for (const res of [
      login,
      refreshed,
      await callJson('GET', '/auth/user', { token: user.token }),
      await callJson('GET', '/files', { token: user.token }),
    ]) {
      expect(res.status).toBe(200)
      expect(res.headers.get('cache-control')).toBe('no-store')
    }
  })
})

describe('client addresses', () => {
  it('ignores CF-Connecting-IP unless AUTH_TRUST_CF_CONNECTING_IP says Cloudflare is in front', async () => {
    // Untrusted, a forged header changes nothing: 10 logins from "different" addresses share one count.
    const untrusted = { AUTH_TRUST_CF_CONNECTING_IP: 'false', AUTH_RATE_LIMIT_PER_MINUTE: '2' }
    const email = uniqueEmail()
    const statuses = []
    for (let i = 0; i < 3; i++)
      statuses.push(
        (await callWithSettings(untrusted, 'POST', '/auth/login', { ip: randomIp(), json: { email, password: 'x' } }))
          .status,
      )
    expect(statuses.at(-1)).toBe(429)
    // Trusted (wrangler.toml, Cloudflare in front), the session records the address Cloudflare reported.
    const user = await signUp()
    await call('POST', '/auth/login', { ip: '10.77.0.1', json: { email: user.email, password: user.password } })
    const sessions = (await callJson('GET', '/auth/sessions', { token: user.token })).body
    expect(sessions.map((session) => session.address)).toContain('10.77.0.1')
  })
})

describe('password reset emails', () => {
  it('sends one per address per few minutes, however many addresses ask', async () => {
    const user = await signUp()
    for (let i = 0; i < 5; i++)
      expect((await call('POST', '/auth/forgot', { ip: randomIp(), json: { email: user.email } })).status).toBe(200)
    const resets = async () =>
      (await emailsTo(user.email)).filter((email) => email.body.subject === 'Reset your password')
    const deadline = Date.now() + 30_000
    while ((await resets()).length === 0) {
      if (Date.now() > deadline) throw new Error('no reset email within 30 s')
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    // The answers are all alike; the other requests decided after their response (waitUntil) to send nothing: look
    // again after one more request has surely finished its own.
    await call('POST', '/auth/forgot', { json: { email: uniqueEmail() } })
    expect(await resets()).toHaveLength(1)
  })
})

describe('text that reaches emails, headers and logs', () => {
  it.each(['Ada\u0000', 'Ada\u001b[31m', 'Ada\r\nBcc: victim@example.com', 'Ada\nLovelace', 'Ada\u2028'])(
    'refuses the name %j at registration and on update',
    async (name) => {
      const res = await callJson('POST', '/auth/register', {
        json: { email: uniqueEmail(), password: 'long enough', name },
      })
      expect(res).toMatchObject({ status: 400, body: { code: 'VALIDATION_FAILED' } })
      const user = await signUp()
      expect((await callJson('PUT', `/users/${user.id}`, { token: user.token, json: { name } })).status).toBe(400)
    },
  )

  it('keeps the name out of the verification email to an unverified address', async () => {
    const email = uniqueEmail()
    await call('POST', '/auth/register', {
      json: { email, password: 'long enough', name: 'Visit https://evil.example now' },
    })
    const sent = await waitForEmail(email)
    for (const part of sent.body.content) expect(part.value).not.toContain('evil.example')
  })
})

describe('email verification is bound to the address', () => {
  it("refuses the old address's token after an email change, resets email_verified and sends a new verification", async () => {
    const admin = await signUp()
    await grantRole(admin, 'admin')
    const user = await signUp()
    const oldToken = tokenIn(await waitForEmail(user.email))
    expect((await call('POST', '/auth/verify', { json: { token: oldToken } })).status).toBe(200)
    const newEmail = uniqueEmail('moved')
    const changed = await callJson('PUT', `/users/${user.id}`, { token: admin.token, json: { email: newEmail } })
    expect(changed).toMatchObject({ status: 200, body: { email: newEmail, email_verified: false } })
    const user2 = await signUp()
    const staleToken = tokenIn(await waitForEmail(user2.email))
    await callJson('PUT', `/users/${user2.id}`, { token: admin.token, json: { email: uniqueEmail('moved') } })
    expect((await callJson('POST', '/auth/verify', { json: { token: staleToken } })).body.code).toBe('TOKEN_INVALID')
    const fresh = tokenIn(await waitForEmail(newEmail))
    expect((await callJson('POST', '/auth/verify', { json: { token: fresh } })).body.user).toMatchObject({
      email: newEmail,
      email_verified: true,
    })
  })
})

describe('custom user fields', () => {
  it.each(['javascript:alert(1)', 'data:text/html,<script>alert(1)</script>', 'not a url', 'ftp://example.com/a.png'])(
    'refuses avatar_url %j (Url: http and https only)',
    async (avatar) => {
      const res = await callJson('POST', '/auth/register', {
        json: { email: uniqueEmail(), password: 'long enough', avatar_url: avatar },
      })
      expect(res).toMatchObject({ status: 400, body: { code: 'VALIDATION_FAILED' } })
    },
  )
})

describe('webhook callback URLs', () => {
  it.each([
    'https://127.0.0.1/hook',
    'https://169.254.169.254/latest/meta-data',
    'https://localhost/hook',
    'https://[::1]/hook',
    'https://10.0.0.5/hook',
    'https://192.168.1.1/',
    'https://0.0.0.0/',
    'https://[fe80::1]/',
    'https://2130706433/',
    'https://api.localhost/',
  ])('refuses %s', async (callbackUrl) => {
    const user = await signUp()
    const file = await uploaded(user, 'n.txt', 'hello')
    const res = await callWithSettings({ WEBHOOK_ALLOWED_HOSTS: '' }, 'POST', `/files/${file._id}/convert`, {
      token: user.token,
      json: { callback_url: callbackUrl },
    })
    expect(res.status).toBe(400)
    expect(await res.json()).toMatchObject({ code: 'CALLBACK_URL_REFUSED' })
  })
})
