import { describe, expect, it } from 'vitest'
import { type Answer, call, callJson, type ErrorAnswer } from '../support/api'
import { emailsTo, signUp, tokenIn, uniqueEmail, waitForEmail } from '../support/accounts'

describe('register', () => {
  it('creates the account with the public fields, the default role and custom defaults', async () => {
    const email = uniqueEmail('ada')
    const res = await callJson('POST', '/auth/register', {
      json: { email, password: 'correct horse battery', name: 'Ada' },
    })
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({
      email_sent: true,
      message: expect.stringContaining('verification email was sent'),
    })
    expect(res.body.user).toEqual({
      _id: expect.stringMatching(/^[0-9a-f]{24}$/),
      email,
      name: 'Ada',
      role: 'user',
      email_verified: false,
      created_at: expect.any(String),
      updated_at: expect.any(String),
      preferences: {},
    })
    expect(JSON.stringify(res.body)).not.toContain('password')
  })

  it('lower-cases the email and refuses a duplicate with 409', async () => {
    const email = uniqueEmail('dup')
    expect(
      (await call('POST', '/auth/register', { json: { email: email.toUpperCase(), password: 'password-1' } })).status,
    ).toBe(201)
    const again = await callJson('POST', '/auth/register', { json: { email, password: 'password-2' } })
    expect(again.status).toBe(409)
    expect(again.body).toEqual({ message: 'an account with this email already exists', code: 'EMAIL_TAKEN' })
  })

  it.each([
    [{ email: 'not-an-email', password: 'long enough' }, 'email'],
    [{ email: uniqueEmail(), password: 'short' }, 'password'],
    [{ password: 'long enough' }, 'email'],
    [{ email: uniqueEmail(), password: 'long enough', role: 'admin' }, 'role'],
    [{ email: uniqueEmail(), password: 'long enough', email_verified: true }, 'email_verified'],
    [{ email: uniqueEmail(), password: 'long enough', password_hash: 'x' }, 'password_hash'],
  ])('refuses %j with 400 naming the field', async (json, field) => {
    const res = await callJson('POST', '/auth/register', { json })
    expect(res.status).toBe(400)
    expect(res.body.code).toBe('VALIDATION_FAILED')
    expect(res.body.message).toContain(field === 'email' || field === 'password' ? field : 'nrecognized')
    expect(JSON.stringify(res.body.issues)).toContain(field)
  })

  it('accepts a password of 200 bytes and does not truncate it', async () => {
    const password = 'é'.repeat(100)
    const user = await signUp({ password })
    const truncated = await call('POST', '/auth/login', {
      json: { email: user.email, password: password.slice(0, 36) },
    })
    expect(truncated.status).toBe(401)
  })

  it('sends the verification email through MailChannels with a link and the token', async () => {
    const user = await signUp()
    const [email] = await emailsTo(user.email)
    expect(email!.headers['x-api-key']).toBe('test-mailchannels-key')
    expect(email!.body.subject).toBe('Verify your email address')
    expect(email!.body.from).toEqual({ email: 'no-reply@edgefloor.local', name: 'Edgefloor' })
    const text = email!.body.content.find((c) => c.type === 'text/plain')!.value
    const html = email!.body.content.find((c) => c.type === 'text/html')!.value
    const token = tokenIn(email!)
    expect(text).toContain(`http://127.0.0.1:8787/verify?token=${token}`)
    expect(html).toContain('<a href="http://127.0.0.1:8787/verify?token=')
  })

  it('still creates the account when the email provider fails, and says so', async () => {
    const email = uniqueEmail('x+bounce')
    const res = await callJson('POST', '/auth/register', { json: { email, password: 'long enough' } })
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({
      email_sent: false,
      message: 'account created, but the verification email could not be sent',
    })
    expect((await call('POST', '/auth/login', { json: { email, password: 'long enough' } })).status).toBe(200)
  })

  it('answers 413 for a JSON body over 1 MiB', async () => {
    const res = await callJson('POST', '/auth/register', {
      json: { email: uniqueEmail(), password: 'x'.repeat(1024 * 1024 + 10) },
    })
    expect(res.status).toBe(413)
    expect(res.body.message).toContain('larger than')
  })

  it('answers 400 for malformed JSON', async () => {
    const res = await callJson('POST', '/auth/register', {
      body: '{"email":',
      headers: { 'content-type': 'application/json' },
    })
    expect(res.status).toBe(400)
    expect(res.body.message).toEqual(expect.any(String))
  })
})

describe('login', () => {
  it('returns token, refresh_token, expires_in and a user of exactly four keys', async () => {
    const user = await signUp({ name: 'Grace' })
    const res = await callJson('POST', '/auth/login', { json: { email: user.email, password: user.password } })
    expect(res.status).toBe(200)
    expect(Object.keys(res.body).sort()).toEqual(['expires_in', 'refresh_token', 'token', 'user'])
    expect(res.body.user).toEqual({ _id: user.id, email: user.email, name: 'Grace', role: 'user' })
    expect(res.body.expires_in).toBe(7 * 24 * 3600)
    expect(res.body.token.split('.')).toHaveLength(3)
  })

  it('answers 401 alike for a wrong password and an unknown email', async () => {
    const user = await signUp()
    const wrong = await callJson('POST', '/auth/login', { json: { email: user.email, password: 'wrong password' } })
    const unknown = await callJson('POST', '/auth/login', {
      json: { email: uniqueEmail(), password: 'wrong password' },
    })
    expect(wrong.status).toBe(401)
    expect(unknown.status).toBe(401)
    expect(wrong.body).toEqual(unknown.body)
    expect(wrong.body).toEqual({ message: 'invalid email or password', code: 'INVALID_CREDENTIALS' })
  })
})

describe('current user', () => {
  it('returns the public fields for a valid token (both layouts)', async () => {
    const user = await signUp({ name: 'Lin' })
    for (const path of ['/auth/user', '/user']) {
      const res = await callJson('GET', path, { token: user.token })
      expect(res.status).toBe(200)
      expect(res.body).toMatchObject({
        _id: user.id,
        email: user.email,
        name: 'Lin',
        role: 'user',
        email_verified: false,
      })
      expect(res.body).not.toHaveProperty('password_hash')
    }
  })

  it('answers 401 without a token', async () => {
    const res = await callJson('GET', '/auth/user')
    expect(res.status).toBe(401)
    expect(res.headers.get('www-authenticate')).toBe('Bearer')
    expect(res.body).toEqual({ message: 'missing bearer token', code: 'TOKEN_MISSING' })
  })
})

describe('health and unknown paths', () => {
  it('answers GET / with name and version', async () => {
    const res = await callJson('GET', '/')
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ name: 'edgefloor', version: expect.stringMatching(/^\d+\.\d+\.\d+/), status: 'ok' })
  })

  it('answers 404 JSON for an unknown path', async () => {
    const res = await callJson('GET', '/nope')
    expect(res).toMatchObject({ status: 404, body: { message: 'not found' } })
  })
})

describe('custom user fields (Users values map)', () => {
  it('stores fields with c on register, applies defaults and returns fields with r', async () => {
    const email = uniqueEmail()
    const res = await callJson('POST', '/auth/register', {
      json: { email, password: 'long enough', avatar_url: 'https://example.com/a.png' },
    })
    expect(res.body.user).toMatchObject({ avatar_url: 'https://example.com/a.png', preferences: {} })
    const login = await callJson('POST', '/auth/login', { json: { email, password: 'long enough' } })
    expect(Object.keys(login.body.user).sort()).toEqual(['_id', 'email', 'name', 'role'])
    const me = await callJson('GET', '/auth/user', { token: login.body.token })
    expect(me.body).toMatchObject({ avatar_url: 'https://example.com/a.png', preferences: {} })
  })

  it('refuses a custom field of the wrong type', async () => {
    const res = await callJson('POST', '/auth/register', {
      json: { email: uniqueEmail(), password: 'long enough', preferences: 'dark' },
    })
    expect(res.status).toBe(400)
    expect(res.body.message).toContain('preferences')
  })
})

describe('Layout B aliases (/register, /login, /user/reset/password)', () => {
  it('registers at /register and logs in at /login exactly as Layout A does', async () => {
    const email = uniqueEmail('layout-b')
    const registered = await callJson<Answer<'POST', '/auth/register'>>('POST', '/register', {
      json: { email, password: 'layout b password', name: 'Bea' },
    })
    expect(registered.status).toBe(201)
    expect(registered.body.user).toMatchObject({ email, name: 'Bea', role: 'user', email_verified: false })
    expect(JSON.stringify(registered.body)).not.toContain('password')
    expect((await emailsTo(email)).length).toBe(1)

    const login = await callJson<Answer<'POST', '/auth/login'>>('POST', '/login', {
      json: { email, password: 'layout b password' },
    })
    expect(login.status).toBe(200)
    expect(Object.keys(login.body).sort()).toEqual(['expires_in', 'refresh_token', 'token', 'user'])
    expect(login.body.user).toEqual({ _id: registered.body.user._id, email, name: 'Bea', role: 'user' })
    const me = await callJson('GET', '/auth/user', { token: login.body.token })
    expect(me.body).toMatchObject({ _id: registered.body.user._id, email })
  })

  it('validates and refuses at the aliases with the same errors', async () => {
    const taken = await signUp()
    expect(
      await callJson('POST', '/register', { json: { email: taken.email, password: 'another password' } }),
    ).toMatchObject({
      status: 409,
      body: { message: 'an account with this email already exists', code: 'EMAIL_TAKEN' },
    })
    const invalid = await callJson<ErrorAnswer>('POST', '/register', {
      json: { email: 'not-an-email', password: 'long enough' },
    })
    expect(invalid.status).toBe(400)
    expect(invalid.body.message).toContain('email')
    const wrong = await callJson('POST', '/login', { json: { email: taken.email, password: 'wrong password' } })
    expect(wrong).toMatchObject({
      status: 401,
      body: { message: 'invalid email or password', code: 'INVALID_CREDENTIALS' },
    })
  })

  it('requests a reset with POST /user/reset/password and sets the password with PUT', async () => {
    const user = await signUp()
    expect((await callJson('POST', '/user/reset/password', { json: { email: user.email } })).status).toBe(200)
    const token = tokenIn(await waitForEmail(user.email, 2))
    const reset = await callJson('PUT', '/user/reset/password', { json: { token, password: 'a brand new password' } })
    expect(reset.status).toBe(200)
    expect(
      (await call('POST', '/login', { json: { email: user.email, password: 'a brand new password' } })).status,
    ).toBe(200)
    expect((await call('POST', '/login', { json: { email: user.email, password: user.password } })).status).toBe(401)
  })
})
