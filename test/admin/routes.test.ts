// The admin routes: finding users by part of their email or name, one user's files, jobs (with error codes) and
// sessions, and ending a session; every one refused 403 (naming the rule) to a user who is not an admin, and to
// an API key, whatever the id.
import { beforeAll, describe, expect, it } from 'vitest'
import { call, callJson, type ErrorAnswer } from '../support/api'
import { signUp, uniqueEmail, type TestUser } from '../support/accounts'
import { uploaded } from '../support/files'
import { grantRole } from '../support/roles'
import { registerChainConverters } from '../support/chain-converters'

let admin: TestUser
let alice: TestUser
let mallory: TestUser

beforeAll(async () => {
  registerChainConverters()
  admin = await signUp()
  await grantRole(admin, 'admin')
  alice = await signUp({ email: uniqueEmail('alice_x'), name: 'Alice 50% Liddell' })
  mallory = await signUp()
})

const ADMIN_PATHS = () => [
  ['GET', '/admin/users'],
  ['GET', `/admin/users/${alice.id}/files`],
  ['GET', `/admin/users/${alice.id}/jobs`],
  ['GET', `/admin/users/${alice.id}/sessions`],
  ['DELETE', `/admin/users/${alice.id}/sessions/0123456789abcdef01234567`],
]

describe('the admin routes refuse everyone but admins', () => {
  it('answers a user who is not an admin 403 naming the rule, on real ids, with nothing of Alice', async () => {
    for (const [method, path] of ADMIN_PATHS()) {
      const res = await callJson(method!, path!, { token: mallory.token })
      expect(res.status, `${method} ${path}`).toBe(403)
      expect(res.body).toEqual({ message: 'only an admin may do this', code: 'FORBIDDEN', rule: '@user.role=admin' })
    }
  })

  it("refuses an admin's API key: keys never reach admin routes", async () => {
    const key = (
      await callJson('POST', '/auth/api-keys', {
        token: admin.token,
        json: { name: 'admin key', scopes: ['files:read', 'files:write', 'convert'] },
      })
    ).body.key
    for (const [method, path] of ADMIN_PATHS()) {
      const res = await callJson<ErrorAnswer>(method!, path!, { token: key })
      expect(res.status, `${method} ${path}`).toBe(403)
      expect(res.body.code).toBe('INSUFFICIENT_SCOPE')
    }
  })
})

describe('GET /admin/users', () => {
  it('finds users by part of the email or the name, case-insensitive, with % and _ taken literally', async () => {
    const byEmail = await callJson(
      'GET',
      `/admin/users?q=${encodeURIComponent(alice.email.slice(0, 14).toUpperCase())}`,
      { token: admin.token },
    )
    expect(byEmail.status).toBe(200)
    expect(byEmail.body).toEqual([
      {
        _id: alice.id,
        email: alice.email,
        name: 'Alice 50% Liddell',
        role: 'user',
        email_verified: false,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      },
    ])
    const byName = await callJson('GET', `/admin/users?q=${encodeURIComponent('50% lidd')}`, { token: admin.token })
    expect(byName.body.map((user) => user._id)).toEqual([alice.id])
    // As wildcards "_x" would match the "ex" of every example.com address, and "0%l" every name with a 0 and an l.
    const underscore = await callJson('GET', `/admin/users?q=${encodeURIComponent('_x')}`, { token: admin.token })
    expect(underscore.body.length).toBeGreaterThan(0)
    expect(underscore.body.every((user) => user.email.includes('_x'))).toBe(true)
    expect((await callJson('GET', `/admin/users?q=${encodeURIComponent('0%l')}`, { token: admin.token })).body).toEqual(
      [],
    )
  })

  it('pages newest first through the Link header', async () => {
    const first = await callJson('GET', '/admin/users?limit=2', { token: admin.token })
    expect(first.body).toHaveLength(2)
    const next = first.headers.get('link')!
    expect(next).toMatch(/^<\/admin\/users\?.*cursor=[0-9a-f]{24}.*>; rel="next"$/)
    const second = await callJson<typeof first.body>('GET', /<([^>]+)>/.exec(next)![1]!, { token: admin.token })
    expect(second.body[0]!._id < first.body[1]!._id).toBe(true)
  })

  it('refuses a query longer than an email address with 400', async () => {
    const res = await callJson('GET', `/admin/users?q=${'a'.repeat(255)}`, { token: admin.token })
    expect(res.status).toBe(400)
    expect(res.body.code).toBe('VALIDATION_FAILED')
  })
})

describe("a user's files, jobs and sessions", () => {
  it("lists Alice's files without signed links, and her uploads alone with root=true", async () => {
    const source = await uploaded(alice, 'notes.tsplit', 'abcdwxyz')
    await callJson('POST', `/files/${source._id}/convert`, { token: alice.token })
    const all = await callJson('GET', `/admin/users/${alice.id}/files`, { token: admin.token })
    expect(all.status).toBe(200)
    expect(all.body).toHaveLength(5)
    for (const file of all.body) {
      expect(file).not.toHaveProperty('url')
      expect(file).not.toHaveProperty('preview_url')
    }
    const roots = await callJson('GET', `/admin/users/${alice.id}/files?root=true`, { token: admin.token })
    expect(roots.body).toMatchObject([{ _id: source._id, name: 'notes.tsplit', parent_file: null, size: 8 }])
  })

  it("lists Alice's jobs with their steps, state and error code, without signed links", async () => {
    const broken = await uploaded(alice, 'broken.tbroken', 'x')
    const failed = await callJson('POST', `/files/${broken._id}/convert`, { token: alice.token })
    expect(failed.status).toBe(422)
    const jobs = await callJson('GET', `/admin/users/${alice.id}/jobs`, { token: admin.token })
    expect(jobs.status).toBe(200)
    expect(jobs.body[0]).toMatchObject({
      file_id: broken._id,
      status: 'failed',
      error_code: failed.body.code,
      steps: [{ converter: 'test-broken', status: 'failed' }],
    })
    expect(jobs.body[0]).not.toHaveProperty('events_url')
    expect(jobs.body[0]).not.toHaveProperty('files')
    expect(jobs.body.some((job) => job.status === 'done' && job.error_code === null)).toBe(true)
  })

  it("lists Alice's sessions and ends one: its token stops working at once", async () => {
    const second = await callJson('POST', '/auth/login', { json: { email: alice.email, password: alice.password } })
    const sessions = await callJson('GET', `/admin/users/${alice.id}/sessions`, { token: admin.token })
    expect(sessions.status).toBe(200)
    expect(sessions.body.length).toBeGreaterThanOrEqual(2)
    expect(sessions.body[0]).toEqual({
      _id: expect.any(String),
      device: expect.any(String),
      address: expect.any(String),
      created_at: expect.any(String),
      last_used_at: expect.any(String),
    })
    const own = await callJson('GET', '/auth/sessions', { token: second.body.token })
    const current = own.body.find((session) => session.current)!._id
    expect(sessions.body.map((session) => session._id)).toContain(current)

    const ended = await callJson('DELETE', `/admin/users/${alice.id}/sessions/${current}`, { token: admin.token })
    expect(ended).toMatchObject({ status: 200, body: { message: 'session ended' } })
    expect((await call('GET', '/auth/user', { token: second.body.token })).status).toBe(401)
    expect((await call('GET', '/auth/user', { token: alice.token })).status).toBe(200)
    // Again, or under another user's id: not a live session of that user.
    expect(
      (await callJson('DELETE', `/admin/users/${alice.id}/sessions/${current}`, { token: admin.token })).body.code,
    ).toBe('SESSION_NOT_FOUND')
    const alicesOther = (await callJson('GET', `/admin/users/${alice.id}/sessions`, { token: admin.token })).body[0]!
      ._id
    expect(
      (await callJson('DELETE', `/admin/users/${mallory.id}/sessions/${alicesOther}`, { token: admin.token })).body
        .code,
    ).toBe('SESSION_NOT_FOUND')
  })

  it('answers 404 USER_NOT_FOUND for a user who does not exist', async () => {
    for (const kind of ['files', 'jobs', 'sessions']) {
      const res = await callJson<ErrorAnswer>('GET', `/admin/users/0123456789abcdef01234567/${kind}`, {
        token: admin.token,
      })
      expect(res.status, kind).toBe(404)
      expect(res.body.code).toBe('USER_NOT_FOUND')
    }
  })
})
