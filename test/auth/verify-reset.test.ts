import { env } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { call, callJson, callJsonWithSettings, callWithSettings } from '../support/api'
import { emailsTo, signUp, tokenIn, uniqueEmail, waitForEmail } from '../support/accounts'

describe('email verification', () => {
  it('verifies with the emailed token, once (both layouts)', async () => {
    for (const path of ['/auth/verify', '/user/verify']) {
      const user = await signUp()
      const token = tokenIn(await waitForEmail(user.email))
      const res = await callJson('POST', path, { json: { token } })
      expect(res.status).toBe(200)
      expect(res.body).toMatchObject({
        message: 'email address verified',
        user: { _id: user.id, email_verified: true },
      })
      const again = await callJson('POST', path, { json: { token } })
      expect(again).toMatchObject({ status: 401, body: { message: 'invalid or expired token' } })
    }
  })

  it('resends the verification email to a signed-in unverified user, and refuses once verified', async () => {
    const user = await signUp()
    const res = await callJson('POST', '/auth/verify/resend', { token: user.token })
    expect(res).toMatchObject({ status: 200, body: { email_sent: true } })
    const second = await waitForEmail(user.email, 2)
    await call('POST', '/auth/verify', { json: { token: tokenIn(second) } })
    const after = await callJson('POST', '/auth/verify/resend', { token: user.token })
    expect(after).toMatchObject({ status: 409, body: { message: 'email address already verified' } })
  })

  it("resends it at Basefloor's POST /user/verify/email too", async () => {
    const user = await signUp()
    const res = await callJson('POST', '/user/verify/email', { token: user.token })
    expect(res).toMatchObject({ status: 200, body: { message: 'verification email sent', email_sent: true } })
    const resent = await waitForEmail(user.email, 2)
    expect(tokenIn(resent)).toMatch(/^eyJ/)
    expect((await callJson('POST', '/user/verify/email')).status).toBe(401)
  })

  it('makes login wait for verification when requireEmailVerification is on', async () => {
    const settings = { AUTH_REQUIRE_EMAIL_VERIFICATION: 'true' }
    const email = uniqueEmail()
    await callWithSettings(settings, 'POST', '/auth/register', { json: { email, password: 'long enough' } })
    const before = await callWithSettings(settings, 'POST', '/auth/login', { json: { email, password: 'long enough' } })
    expect(before.status).toBe(403)
    expect(await before.json()).toEqual({ message: 'email address not verified', code: 'EMAIL_NOT_VERIFIED' })
    await call('POST', '/auth/verify', { json: { token: tokenIn(await waitForEmail(email)) } })
    const after = await callWithSettings(settings, 'POST', '/auth/login', { json: { email, password: 'long enough' } })
    expect(after.status).toBe(200)
  })

  it('refuses registration with 403 when it is disabled, and creates nothing', async () => {
    const email = uniqueEmail()
    const res = await callWithSettings({ AUTH_REGISTRATION_ENABLED: 'false' }, 'POST', '/auth/register', {
      json: { email, password: 'long enough' },
    })
    expect(res.status).toBe(403)
    expect(await res.json()).toEqual({ message: 'registration is disabled', code: 'REGISTRATION_DISABLED' })
    expect(await env.DB.prepare('select count(*) as n from users where email = ?').bind(email).first('n')).toBe(0)
  })

  it('gives new users the configured default role', async () => {
    const email = uniqueEmail()
    const res = await callJsonWithSettings({ AUTH_DEFAULT_ROLE: 'member' }, 'POST', '/auth/register', {
      json: { email, password: 'long enough' },
    })
    expect(res.body.user.role).toBe('member')
  })
})

describe('password reset', () => {
  it('answers forgot identically for known and unknown addresses, and emails only the known one', async () => {
    const user = await signUp()
    const unknown = uniqueEmail()
    const known = await callJson('POST', '/auth/forgot', { json: { email: user.email } })
    const missing = await callJson('POST', '/auth/forgot', { json: { email: unknown } })
    expect(known).toMatchObject({ status: 200 })
    expect(missing.status).toBe(200)
    expect(missing.body).toEqual(known.body)
    const email = await waitForEmail(user.email, 2)
    expect(email.body.subject).toBe('Reset your password')
    expect(email.body.content[0]!.value).toContain('http://127.0.0.1:8787/reset?token=')
    expect(await emailsTo(unknown)).toEqual([])
  })

  it('resets the password once, ends every session and access token, and the new password works', async () => {
    const user = await signUp()
    await call('POST', '/user/reset/password', { json: { email: user.email } }) // Layout B forgot
    const token = tokenIn(await waitForEmail(user.email, 2))
    const res = await callJson('PUT', '/user/reset/password', { json: { token, password: 'a brand new password' } }) // Layout B reset
    expect(res).toMatchObject({ status: 200, body: { message: expect.stringContaining('password changed') } })

    expect((await callJson('POST', '/auth/reset', { json: { token, password: 'another password' } })).status).toBe(401)
    expect((await callJson('GET', '/auth/user', { token: user.token })).body).toEqual({
      message: 'token was revoked',
      code: 'TOKEN_REVOKED',
    })
    expect((await callJson('POST', '/auth/refresh', { json: { refresh_token: user.refreshToken } })).status).toBe(401)
    expect((await call('POST', '/auth/login', { json: { email: user.email, password: user.password } })).status).toBe(
      401,
    )
    expect(
      (await call('POST', '/auth/login', { json: { email: user.email, password: 'a brand new password' } })).status,
    ).toBe(200)
  })

  it('refuses a too-short new password with 400 and keeps the old one', async () => {
    const user = await signUp()
    await call('POST', '/auth/forgot', { json: { email: user.email } })
    const token = tokenIn(await waitForEmail(user.email, 2))
    const res = await callJson('POST', '/auth/reset', { json: { token, password: 'short' } })
    expect(res.status).toBe(400)
    expect((await call('POST', '/auth/login', { json: { email: user.email, password: user.password } })).status).toBe(
      200,
    )
  })
})
