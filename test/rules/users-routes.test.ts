// /users(Users) with the shipped rules: admins manage every account; a user reads and updates their own name
// and custom fields, never role, email, email_verified or password_hash.
import { env } from 'cloudflare:test'
import { beforeAll, describe, expect, it } from 'vitest'
import { callJson, callWithResources, type ErrorAnswer, type ResourceRecord } from '../support/api'
import { signUp, uniqueEmail, type TestUser } from '../support/accounts'
import { grantRole } from '../support/roles'
import { usersRoute, type ResourceConfig } from '../../worker/models/resources'

let admin: TestUser
let alice: TestUser
let bob: TestUser

beforeAll(async () => {
  ;[admin, alice, bob] = await Promise.all([signUp(), signUp(), signUp()])
  await grantRole(admin, 'admin')
})

const storedUser = (id: string) =>
  env.DB.prepare('SELECT role, email, email_verified, password_hash, name FROM users WHERE id = ?').bind(id).first()

describe('/users read', () => {
  it('refuses the list to a non-admin and names the rule', async () => {
    const res = await callJson('GET', '/users', { token: alice.token })
    expect(res.status).toBe(403)
    expect(res.body).toEqual({
      message: 'not allowed',
      code: 'FORBIDDEN',
      rule: '/users(Users)._readAll: @user.role=admin',
    })
  })

  it('lists every account to an admin, newest first, paginated, without secrets', async () => {
    const first = await callJson<ResourceRecord[]>('GET', '/users?limit=2', { token: admin.token })
    expect(first.status).toBe(200)
    expect(first.body).toHaveLength(2)
    expect(first.body[0]!._id > first.body[1]!._id).toBe(true)
    for (const user of first.body)
      expect(Object.keys(user).sort()).toEqual(
        ['_id', 'avatar_url', 'created_at', 'email', 'email_verified', 'name', 'preferences', 'role', 'updated_at']
          .filter((key) => key in user)
          .sort(),
      )
    expect(JSON.stringify(first.body)).not.toContain('password')
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.get('link') ?? '')?.[1]
    expect(next).toContain('cursor=')
    const second = await callJson<ResourceRecord[]>('GET', next!, { token: admin.token })
    expect(second.body[0]!._id < first.body[1]!._id).toBe(true)
  })

  it('filters the list by a readable field', async () => {
    const res = await callJson<ResourceRecord[]>('GET', `/users?email=${encodeURIComponent(bob.email)}`, {
      token: admin.token,
    })
    expect(res.body.map((user) => user._id)).toEqual([bob.id])
  })

  it('lets a user read themself, and hides everyone else as not found', async () => {
    const self = await callJson('GET', `/users/${alice.id}`, { token: alice.token })
    expect(self.status).toBe(200)
    expect(self.body).toMatchObject({ _id: alice.id, email: alice.email, role: 'user', preferences: {} })
    const other = await callJson('GET', `/users/${bob.id}`, { token: alice.token })
    expect(other).toMatchObject({ status: 404, body: { message: 'user not found' } })
    const missing = await callJson('GET', '/users/0123456789abcdef01234567', { token: alice.token })
    expect(missing.body).toEqual(other.body)
  })

  it('lets an admin read anyone', async () => {
    const res = await callJson('GET', `/users/${bob.id}`, { token: admin.token })
    expect(res).toMatchObject({ status: 200, body: { _id: bob.id, email: bob.email } })
  })
})

describe('/users update', () => {
  it('lets a user change their name and custom fields', async () => {
    const res = await callJson('PUT', `/users/${alice.id}`, {
      token: alice.token,
      json: { name: 'Alice A.', avatar_url: 'https://example.com/a.png', preferences: { theme: 'dark' } },
    })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      name: 'Alice A.',
      avatar_url: 'https://example.com/a.png',
      preferences: { theme: 'dark' },
    })
  })

  it.each([
    [{ role: 'admin' }, 403, 'not allowed to set role'],
    [{ email: 'new@example.com' }, 403, 'not allowed to set email'],
    [{ email_verified: true }, 403, 'not allowed to set email_verified'],
    [{ password_hash: 'x' }, 400, 'password_hash'],
    [{ _id: '0123456789abcdef01234567' }, 400, '_id'],
    [{ name: 'ok', role: 'admin' }, 403, 'not allowed to set role'],
  ])('refuses a mass-assignment attempt %j and changes nothing', async (body, status, message) => {
    const before = await storedUser(alice.id)
    const res = await callJson<ErrorAnswer>('PUT', `/users/${alice.id}`, { token: alice.token, json: body })
    expect(res.status).toBe(status)
    expect(res.body.message).toContain(message)
    if (status === 403) expect(res.body.rule).toBe('/users(Users)._privileged: @user.role=admin')
    expect(await storedUser(alice.id)).toEqual(before)
  })

  it("answers 404 for someone else's account", async () => {
    const res = await callJson('PUT', `/users/${bob.id}`, { token: alice.token, json: { name: 'pwned' } })
    expect(res.status).toBe(404)
    expect((await storedUser(bob.id))!.name).toBe('Test User')
  })

  it('lets an admin change role and email, and refuses a taken email', async () => {
    const res = await callJson('PUT', `/users/${bob.id}`, {
      token: admin.token,
      json: { role: 'editor', email_verified: true },
    })
    expect(res).toMatchObject({ status: 200, body: { role: 'editor', email_verified: true } })
    const taken = await callJson('PUT', `/users/${bob.id}`, {
      token: admin.token,
      json: { email: alice.email.toUpperCase() },
    })
    expect(taken).toMatchObject({ status: 409, body: { message: 'an account with this email already exists' } })
  })
})

describe('/users create and delete', () => {
  it('refuses create to a non-admin', async () => {
    const res = await callJson('POST', '/users', {
      token: alice.token,
      json: { email: uniqueEmail(), password: 'long enough pw' },
    })
    expect(res).toMatchObject({ status: 403, body: { rule: '/users(Users)._create: @user.role=admin' } })
  })

  it('lets an admin create an account that can log in', async () => {
    const email = uniqueEmail('made')
    const res = await callJson('POST', '/users', {
      token: admin.token,
      json: { email, password: 'long enough pw', name: 'Made', role: 'editor' },
    })
    expect(res).toMatchObject({
      status: 201,
      body: { email, name: 'Made', role: 'editor', email_verified: false, preferences: {} },
    })
    const login = await callJson('POST', '/auth/login', { json: { email, password: 'long enough pw' } })
    expect(login.status).toBe(200)
  })

  it('refuses delete to a non-admin, even of themself', async () => {
    const res = await callJson('DELETE', `/users/${alice.id}`, { token: alice.token })
    expect(res).toMatchObject({ status: 403, body: { rule: '/users(Users)._delete: @user.role=admin' } })
    expect(await storedUser(alice.id)).not.toBeNull()
  })

  it("refuses a user's DELETE of another user's account with 403 naming the rule, and deletes nothing", async () => {
    const res = await callJson('DELETE', `/users/${bob.id}`, { token: alice.token })
    expect(res).toMatchObject({
      status: 403,
      body: { message: 'not allowed', rule: '/users(Users)._delete: @user.role=admin' },
    })
    expect(await storedUser(bob.id)).toMatchObject({ email: bob.email })
    expect((await callJson('GET', '/auth/user', { token: bob.token })).status).toBe(200)
  })

  it('deletes an account with its files: records first, then the stored bytes', async () => {
    const doomed = await signUp()
    const key = `u/${doomed.id}/doomed-file`
    await env.BUCKET.put(key, 'bytes')
    const now = Date.now()
    await env.DB.prepare(
      "INSERT INTO files (id, user_id, name, extension, content_type, size, hash, key, created_at, updated_at) VALUES (?, ?, 'a.txt', '.txt', 'text/plain', 5, 'h', ?, ?, ?)",
    )
      .bind(`${now.toString(16).padStart(12, '0')}aaaaaaaaaaaa`, doomed.id, key, now, now)
      .run()
    const res = await callJson('DELETE', `/users/${doomed.id}`, { token: admin.token })
    expect(res.status).toBe(204)
    expect(await storedUser(doomed.id)).toBeNull()
    expect(await env.DB.prepare('SELECT count(*) AS n FROM files WHERE user_id = ?').bind(doomed.id).first('n')).toBe(0)
    expect(await env.BUCKET.get(key)).toBeNull()
    const login = await callJson('POST', '/auth/login', { json: { email: doomed.email, password: doomed.password } })
    expect(login.status).toBe(401)
  })
})

describe('/users with a Users model of its own configuration', () => {
  // Not the shipped model: other fields, other defaults, and one field (`internal_note`) without `r`.
  const configured: ResourceConfig = {
    models: {
      Users: {
        values: {
          plan: ['String', 'cru', 'free'],
          quota: ['Number', 'r', 5],
          internal_note: ['String', 'cu', 'kept back'],
        },
      },
    },
    routes: [usersRoute],
  }
  const storedValues = async (id: string) =>
    JSON.parse(String(await env.DB.prepare('SELECT "values" FROM users WHERE id = ?').bind(id).first('values')))

  it("creates an account with that model's defaults, not the shipped model's", async () => {
    const email = uniqueEmail('configured')
    const res = await callWithResources(configured, 'POST', '/users', {
      token: admin.token,
      json: { email, password: 'long enough pw' },
    })
    expect(res.status).toBe(201)
    expect(await storedValues(res.body._id)).toEqual({ plan: 'free', quota: 5, internal_note: 'kept back' })
    expect(res.body).toMatchObject({ plan: 'free', quota: 5 })
    expect(res.body).not.toHaveProperty('preferences')
  })

  it('never returns a field without r, from any /users route', async () => {
    const email = uniqueEmail('hidden')
    const created = await callWithResources(configured, 'POST', '/users', {
      token: admin.token,
      json: { email, password: 'long enough pw', internal_note: 'the secret' },
    })
    expect(created.status).toBe(201)
    const id = created.body._id
    expect((await storedValues(id)).internal_note).toBe('the secret')
    const updated = await callWithResources(configured, 'PUT', `/users/${id}`, {
      token: admin.token,
      json: { internal_note: 'still secret' },
    })
    expect(updated.status).toBe(200)
    expect((await storedValues(id)).internal_note).toBe('still secret')
    const read = await callWithResources(configured, 'GET', `/users/${id}`, { token: admin.token })
    const list = await callWithResources<ResourceRecord[]>(
      configured,
      'GET',
      `/users?email=${encodeURIComponent(email)}`,
      {
        token: admin.token,
      },
    )
    expect(list.body).toHaveLength(1)
    for (const body of [created.body, updated.body, read.body, list.body[0]]) {
      expect(body).not.toHaveProperty('internal_note')
      expect(JSON.stringify(body)).not.toContain('secret')
    }
    // Not filterable either: the unreadable field is not a query parameter, so it narrows nothing.
    const filtered = await callWithResources<ResourceRecord[]>(
      configured,
      'GET',
      `/users?email=${encodeURIComponent(email)}&internal_note=nope`,
      { token: admin.token },
    )
    expect(filtered.body.map((user) => user._id)).toEqual([id])
  })
})
