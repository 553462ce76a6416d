// Self-service: PUT /auth/user and DELETE /auth/user (Layout B: PUT /user, DELETE /user). The caller changes their
// own name and custom fields freely; an email change, a password change and deleting the account need the current
// password (an account without one: a sign-in in the last 5 minutes). An API key can do none of it.
import { env } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { issueToken } from '../../worker/auth/tokens'
import { loadConfig } from '../../worker/config'
import { newId } from '../../worker/db/ids'
import { resourcesWithPosts } from '../../worker/models/resources'
import { callJson, callWithResources } from '../support/api'
import { emailsTo, signUp, tokenIn, uniqueEmail, waitForEmail, type TestUser } from '../support/accounts'
import { exchange, signInThrough } from '../support/oauth'
import { uploaded } from '../support/files'

const storedUser = (id: string) =>
  env.DB.prepare('SELECT email, name, role, email_verified, "values" FROM users WHERE id = ?')
    .bind(id)
    .first<Record<string, unknown>>()
const countOf = (table: string, id: string) =>
  env.DB.prepare(`SELECT count(*) AS n FROM ${table} WHERE user_id = ?`).bind(id).first<number>('n')

async function apiKey(user: TestUser): Promise<string> {
  const res = await callJson('POST', '/auth/api-keys', {
    token: user.token,
    json: { name: 'server', scopes: ['files:read', 'files:write', 'convert'] },
  })
  expect(res.status).toBe(201)
  return res.body.key
}

/** A session of an account without a password that began `ageMs` ago (as a provider's sign-in would have). */
async function passwordlessSession(ageMs: number) {
  const now = Date.now()
  const id = newId(now)
  const email = uniqueEmail('nopassword')
  const stamp = crypto.randomUUID()
  await env.DB.prepare(
    "INSERT INTO users (id, email, password_hash, name, role, email_verified, security_stamp, \"values\", created_at, updated_at) VALUES (?, ?, '!', 'No Password', 'user', 1, ?, '{}', ?, ?)",
  )
    .bind(id, email, stamp, now, now)
    .run()
  const sessionId = newId(now - ageMs)
  await env.DB.prepare(
    'INSERT INTO sessions (id, user_id, device, address, created_at, last_used_at) VALUES (?, ?, ?, ?, ?, ?)',
  )
    .bind(sessionId, id, 'test', 'direct', now - ageMs, now)
    .run()
  const { token } = await issueToken(loadConfig(env), 'auth', { id, securityStamp: stamp, email }, sessionId)
  return { id, email, token }
}

describe('PUT /auth/user', () => {
  it("changes the caller's name and custom fields, and answers the account as GET /auth/user does", async () => {
    const user = await signUp()
    const res = await callJson('PUT', '/auth/user', {
      token: user.token,
      json: { name: 'Ada Lovelace', preferences: { theme: 'dark' } },
    })
    expect(res).toMatchObject({
      status: 200,
      body: {
        message: 'account updated',
        user: { _id: user.id, name: 'Ada Lovelace', email: user.email, preferences: { theme: 'dark' } },
      },
    })
    expect(res.body).not.toHaveProperty('session')
    expect((await callJson('GET', '/auth/user', { token: user.token })).body).toEqual(res.body.user)
  })

  it('refuses the fields a user may not set (role, email_verified, _id) with 400 naming them, and changes nothing', async () => {
    const user = await signUp()
    for (const field of [
      { role: 'admin' },
      { email_verified: true },
      { _id: '0'.repeat(24) },
      { password_hash: 'x' },
    ]) {
      const res = await callJson('PUT', '/auth/user', { token: user.token, json: { name: 'Changed', ...field } })
      expect(res).toMatchObject({
        status: 400,
        body: { code: 'VALIDATION_FAILED', message: expect.stringContaining(Object.keys(field)[0]!) },
      })
    }
    expect(await storedUser(user.id)).toMatchObject({ name: 'Test User', role: 'user', email_verified: 0 })
    const empty = await callJson('PUT', '/auth/user', { token: user.token, json: {} })
    expect(empty).toMatchObject({
      status: 400,
      body: {
        code: 'VALIDATION_FAILED',
        message: 'invalid request: nothing to change; send one of name, email, password, avatar_url, preferences',
      },
    })
  })

  it('changes the email only with the current password: the new address is unverified and gets the link', async () => {
    const user = await signUp()
    const email = uniqueEmail('moved')
    expect(await callJson('PUT', '/auth/user', { token: user.token, json: { email } })).toMatchObject({
      status: 403,
      body: { code: 'CONFIRMATION_REQUIRED' },
    })
    expect(
      await callJson('PUT', '/auth/user', { token: user.token, json: { email, current_password: 'not the password' } }),
    ).toMatchObject({
      status: 403,
      body: { code: 'CURRENT_PASSWORD_INCORRECT', message: 'the current password is wrong' },
    })
    expect(await storedUser(user.id)).toMatchObject({ email: user.email })

    const res = await callJson('PUT', '/auth/user', {
      token: user.token,
      json: { email, current_password: user.password },
    })
    expect(res).toMatchObject({
      status: 200,
      body: {
        user: { email, email_verified: false },
        email_sent: true,
        message: 'account updated; a verification email was sent to the new address',
      },
    })
    const verified = await callJson('POST', '/auth/verify', { json: { token: tokenIn(await waitForEmail(email)) } })
    expect(verified).toMatchObject({ status: 200, body: { user: { email, email_verified: true } } })
    expect((await callJson('POST', '/auth/login', { json: { email, password: user.password } })).status).toBe(200)
  })

  it('refuses an address another account has with 409', async () => {
    const [user, other] = [await signUp(), await signUp()]
    const res = await callJson('PUT', '/auth/user', {
      token: user.token,
      json: { email: other.email.toUpperCase(), current_password: user.password },
    })
    expect(res).toMatchObject({ status: 409, body: { code: 'EMAIL_TAKEN' } })
    expect(await emailsTo(other.email)).toHaveLength(1) // its own verification email only
  })

  it('changes the password with the current one: every session ends, this device gets a new one', async () => {
    const user = await signUp()
    const elsewhere = (await callJson('POST', '/auth/login', { json: { email: user.email, password: user.password } }))
      .body
    const res = await callJson('PUT', '/auth/user', {
      token: user.token,
      json: { password: 'a brand new password', current_password: user.password },
    })
    expect(res).toMatchObject({
      status: 200,
      body: {
        message: 'account updated; every other session was signed out',
        session: { token: expect.any(String), refresh_token: expect.any(String), expires_in: expect.any(Number) },
      },
    })
    for (const token of [user.token, elsewhere.token])
      expect((await callJson('GET', '/auth/user', { token })).status).toBe(401)
    expect((await callJson('POST', '/auth/refresh', { json: { refresh_token: elsewhere.refresh_token } })).status).toBe(
      401,
    )
    expect((await callJson('GET', '/auth/user', { token: res.body.session!.token })).status).toBe(200)
    expect(
      (await callJson('POST', '/auth/login', { json: { email: user.email, password: user.password } })).status,
    ).toBe(401)
    expect(
      (await callJson('POST', '/auth/login', { json: { email: user.email, password: 'a brand new password' } })).status,
    ).toBe(200)
  })

  it("answers the same at Layout B's PUT /user", async () => {
    const user = await signUp()
    expect(await callJson('PUT', '/user', { token: user.token, json: { name: 'Basefloor Name' } })).toMatchObject({
      status: 200,
      body: { user: { name: 'Basefloor Name' } },
    })
    expect(await callJson('PUT', '/user', { token: user.token, json: { role: 'admin' } })).toMatchObject({
      status: 400,
    })
  })
})

describe('DELETE /auth/user', () => {
  it('deletes the account with its files only with the current password; its sessions, refresh tokens and API keys end', async () => {
    const user = await signUp()
    const key = await apiKey(user)
    const file = await uploaded(user, 'notes.txt', 'my notes')
    const objectKey = (await env.DB.prepare('SELECT key FROM files WHERE id = ?').bind(file._id).first<string>('key'))!
    expect(await env.BUCKET.head(objectKey)).not.toBeNull()

    expect(await callJson('DELETE', '/auth/user', { token: user.token })).toMatchObject({
      status: 403,
      body: { code: 'CONFIRMATION_REQUIRED' },
    })
    expect(
      await callJson('DELETE', '/auth/user', { token: user.token, json: { current_password: 'not the password' } }),
    ).toMatchObject({ status: 403, body: { code: 'CURRENT_PASSWORD_INCORRECT' } })
    expect(await storedUser(user.id)).not.toBeNull()

    const res = await callJson('DELETE', '/auth/user', { token: user.token, json: { current_password: user.password } })
    expect(res).toMatchObject({
      status: 200,
      body: { message: 'account deleted with its files; every session and API key ended' },
    })
    expect(await storedUser(user.id)).toBeNull()
    for (const table of ['files', 'sessions', 'refresh_tokens', 'api_keys'])
      expect([table, await countOf(table, user.id)]).toEqual([table, 0])
    expect(await env.BUCKET.head(objectKey)).toBeNull()
    expect((await callJson('GET', '/files', { token: user.token })).status).toBe(401)
    expect((await callJson('GET', '/files', { token: key })).status).toBe(401)
    expect((await callJson('POST', '/auth/refresh', { json: { refresh_token: user.refreshToken } })).status).toBe(401)
    expect(
      (await callJson('POST', '/auth/login', { json: { email: user.email, password: user.password } })).status,
    ).toBe(401)
  })

  it("takes the records of the relation routes under /users with it, as an admin's DELETE /users/:id does (Layout B: DELETE /user)", async () => {
    const [user, other] = [await signUp(), await signUp()]
    const mine = await callWithResources(resourcesWithPosts, 'POST', `/users/${user.id}/posts`, {
      token: user.token,
      json: { title: 'mine' },
    })
    const theirs = await callWithResources(resourcesWithPosts, 'POST', `/users/${other.id}/posts`, {
      token: other.token,
      json: { title: 'theirs' },
    })
    expect([mine.status, theirs.status]).toEqual([201, 201])
    const res = await callWithResources(resourcesWithPosts, 'DELETE', '/user', {
      token: user.token,
      json: { current_password: user.password },
    })
    expect(res.status).toBe(200)
    const posts = async (id: string) =>
      env.DB.prepare('SELECT count(*) AS n FROM records WHERE id = ?').bind(id).first<number>('n')
    expect([await posts(mine.body._id), await posts(theirs.body._id)]).toEqual([0, 1])
    expect(await storedUser(other.id)).not.toBeNull()
  })
})

describe('self-service and API keys', () => {
  it('refuses an API key, whatever its scopes, on PUT and DELETE /auth/user and /user', async () => {
    const user = await signUp()
    const key = await apiKey(user)
    for (const [method, path] of [
      ['PUT', '/auth/user'],
      ['DELETE', '/auth/user'],
      ['PUT', '/user'],
      ['DELETE', '/user'],
    ] as const) {
      const res = await callJson(method, path, { token: key, json: { name: 'Key', current_password: user.password } })
      expect([method, path, res.status, res.body.code]).toEqual([method, path, 403, 'INSUFFICIENT_SCOPE'])
    }
    expect(await storedUser(user.id)).toMatchObject({ name: 'Test User' })
  })
})

describe('an account without a password (signed up through a provider)', () => {
  it('is made without one: no password signs in to it', async () => {
    const email = uniqueEmail('oidc')
    const session = await exchange(
      (await signInThrough('loopback', { sub: crypto.randomUUID(), email, email_verified: true })).searchParams.get(
        'code',
      )!,
    )
    expect(session.status).toBe(200)
    expect(
      await env.DB.prepare('SELECT password_hash FROM users WHERE email = ?').bind(email).first('password_hash'),
    ).toBe('!')
    expect(await callJson('POST', '/auth/login', { json: { email, password: '!' } })).toMatchObject({
      status: 401,
      body: { code: 'INVALID_CREDENTIALS' },
    })
    // Signed in a moment ago: that confirms a first password.
    const set = await callJson('PUT', '/auth/user', {
      token: session.body.token,
      json: { password: 'a first password here' },
    })
    expect(set).toMatchObject({ status: 200, body: { session: { token: expect.any(String) } } })
    expect((await callJson('POST', '/auth/login', { json: { email, password: 'a first password here' } })).status).toBe(
      200,
    )
  })

  it('confirms with a sign-in in the last 5 minutes, not a password', async () => {
    const stale = await passwordlessSession(6 * 60 * 1000)
    const refused = await callJson('DELETE', '/auth/user', {
      token: stale.token,
      json: { current_password: 'anything' },
    })
    expect(refused).toMatchObject({
      status: 403,
      body: { code: 'CONFIRMATION_REQUIRED', message: expect.stringContaining('sign in again') },
    })
    expect(await callJson('PUT', '/auth/user', { token: stale.token, json: { email: uniqueEmail() } })).toMatchObject({
      status: 403,
      body: { code: 'CONFIRMATION_REQUIRED' },
    })
    expect(await callJson('PUT', '/auth/user', { token: stale.token, json: { name: 'Still Mine' } })).toMatchObject({
      status: 200,
      body: { user: { name: 'Still Mine' } },
    })
    expect(await storedUser(stale.id)).not.toBeNull()

    const fresh = await passwordlessSession(60 * 1000)
    expect(await callJson('DELETE', '/user', { token: fresh.token })).toMatchObject({ status: 200 })
    expect(await storedUser(fresh.id)).toBeNull()
  })
})
