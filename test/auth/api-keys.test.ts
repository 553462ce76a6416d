// API keys for servers: made once, stored hashed, held to their scopes, ended by revocation, expiry, a password
// reset, "sign out everywhere" or the user's deletion. RFC 6750 §3.1: a token lacking the scope a request needs
// answers 403 with `WWW-Authenticate: Bearer error="insufficient_scope"`.
import { env } from 'cloudflare:test'
import { inspectRoutes } from 'hono/dev'
import { describe, expect, it } from 'vitest'
import { createApp } from '../../worker/app'
import { sha256Hex } from '../support/bytes'
import { MAX_API_KEYS_PER_USER, ROUTE_SCOPES } from '../../worker/auth/api-keys'
import { bodyAt, call, callJson } from '../support/api'
import { signUp, tokenIn, waitForEmail, type TestUser } from '../support/accounts'
import { multipartBody, uploaded } from '../support/files'

async function makeKey(user: TestUser, scopes: string[], extra: Record<string, unknown> = {}) {
  const res = await callJson('POST', '/auth/api-keys', {
    token: user.token,
    json: { name: 'server', scopes, ...extra },
  })
  return bodyAt(res, 201)
}

const upload = (token: string) =>
  callJson('POST', '/files', {
    token,
    body: multipartBody('from-a-key.txt', 'hello'),
    headers: { 'x-edgefloor-name': 'from-a-key.txt' },
  })

describe('API keys', () => {
  it('answers the key once, with a recognisable prefix, and stores only its SHA-256', async () => {
    const user = await signUp()
    const made = await makeKey(user, ['files:read', 'convert'], {})
    expect(made.key).toMatch(/^efk_[A-Za-z0-9_-]{43}$/)
    expect(made).toMatchObject({ prefix: made.key.slice(0, 12), scopes: ['convert', 'files:read'], last_used_at: null })
    const row = await env.DB.prepare('select * from api_keys where id = ?')
      .bind(made._id)
      .first<Record<string, unknown>>()
    expect(row?.key_hash).toBe(await sha256Hex(made.key))
    expect(JSON.stringify(row)).not.toContain(made.key)
    const list = await callJson('GET', '/auth/api-keys', { token: user.token })
    expect(list.status).toBe(200)
    expect(list.body).toEqual([
      {
        _id: made._id,
        name: 'server',
        prefix: made.prefix,
        scopes: ['convert', 'files:read'],
        created_at: expect.any(String),
        expires_at: null,
        last_used_at: null,
      },
    ])
    expect(JSON.stringify(list.body)).not.toContain(made.key)
  })

  it('with files:read lists files, is refused an upload (403) and key management, and stops working when revoked', async () => {
    const user = await signUp()
    const file = await uploaded(user, 'report.txt', 'quarterly')
    const { _id, key } = await makeKey(user, ['files:read'])

    const listed = await callJson('GET', '/files', { token: key })
    expect(listed.status).toBe(200)
    expect(JSON.stringify(listed.body)).toContain(file._id)
    const download = await call('GET', `/files/${file._id}/download`, { token: key })
    expect(download.status).toBe(200)
    expect(await download.text()).toBe('quarterly')

    const refused = await upload(key)
    expect(refused.status).toBe(403)
    expect(refused.headers.get('www-authenticate')).toBe('Bearer error="insufficient_scope", scope="files:write"')
    expect(refused.body).toEqual({
      message: 'this API key lacks the scope files:write',
      code: 'INSUFFICIENT_SCOPE',
      scope: 'files:write',
    })
    expect((await callJson('GET', '/files', { token: user.token })).body.length ?? 0).toBeGreaterThan(0)

    for (const [method, path, json] of [
      ['POST', '/auth/api-keys', { name: 'escalate', scopes: ['files:write'] }],
      ['GET', '/auth/api-keys', undefined],
      ['DELETE', `/auth/api-keys/${_id}`, undefined],
      ['GET', '/auth/user', undefined],
      ['POST', '/auth/logout', { all: true }],
      ['GET', '/auth/sessions', undefined],
    ] as const) {
      const res = await callJson(method, path, { token: key, json })
      expect(res.status, `${method} ${path}`).toBe(403)
      expect(res.body).toEqual({
        message: 'API keys cannot be used on this route; sign in as the user',
        code: 'INSUFFICIENT_SCOPE',
      })
    }
    expect((await callJson('GET', '/auth/api-keys', { token: user.token })).body).toHaveLength(1)

    expect((await callJson('GET', '/auth/api-keys', { token: user.token })).body[0]!.last_used_at).toEqual(
      expect.any(String),
    )
    const revoked = await callJson('DELETE', `/auth/api-keys/${_id}`, { token: user.token })
    expect(revoked).toMatchObject({ status: 200, body: { message: 'API key revoked' } })
    const after = await callJson('GET', '/files', { token: key })
    expect(after).toMatchObject({ status: 401, body: { code: 'TOKEN_INVALID' } })
    expect((await callJson('GET', '/auth/api-keys', { token: user.token })).body).toEqual([])
    expect((await callJson('DELETE', `/auth/api-keys/${_id}`, { token: user.token })).body).toEqual({
      message: 'no API key with this id',
      code: 'API_KEY_NOT_FOUND',
    })
  })

  it('with files:write uploads, and with convert converts; each only its own', async () => {
    const user = await signUp()
    const writer = await makeKey(user, ['files:write'])
    const created = await upload(writer.key)
    expect(created.status).toBe(201)
    const fileId = created.body._id
    expect((await call('GET', `/files/${fileId}`, { token: writer.key })).status).toBe(403)
    const converter = await makeKey(user, ['convert'])
    const info = await callJson('GET', '/convert/txt', { token: converter.key })
    expect(info).toMatchObject({ status: 200, body: { extension: '.txt' } })
    const job = await call('POST', `/files/${fileId}/convert`, {
      token: converter.key,
      json: {},
      headers: { prefer: 'respond-async' },
    })
    expect(job.status).toBe(202)
    expect((await call('DELETE', `/files/${fileId}`, { token: converter.key })).status).toBe(403)
  })

  it('ends with a password reset, with "sign out everywhere" and with its user', async () => {
    const user = await signUp()
    const { key } = await makeKey(user, ['files:read'])
    await callJson('POST', '/auth/forgot', { json: { email: user.email } })
    const reset = await callJson('POST', '/auth/reset', {
      json: { token: tokenIn(await waitForEmail(user.email, 2)), password: 'a brand new password' },
    })
    expect(reset.status).toBe(200)
    expect(await callJson('GET', '/files', { token: key })).toMatchObject({
      status: 401,
      body: { code: 'TOKEN_REVOKED' },
    })

    const other = await signUp()
    const second = await makeKey(other, ['files:read'])
    expect((await call('POST', '/auth/logout', { token: other.token, json: { all: true } })).status).toBe(200)
    expect(await callJson('GET', '/files', { token: second.key })).toMatchObject({
      status: 401,
      body: { code: 'TOKEN_REVOKED' },
    })

    const third = await signUp()
    const doomed = await makeKey(third, ['files:read'])
    await env.DB.prepare('delete from users where id = ?').bind(third.id).run()
    expect(await env.DB.prepare('select count(*) as n from api_keys where id = ?').bind(doomed._id).first('n')).toBe(0)
    expect((await callJson('GET', '/files', { token: doomed.key })).status).toBe(401)
  })

  it('ends at its expiry, and refuses an expiry in the past', async () => {
    const user = await signUp()
    const past = await callJson('POST', '/auth/api-keys', {
      token: user.token,
      json: { name: 'late', scopes: ['files:read'], expires_at: '2020-01-01T00:00:00Z' },
    })
    expect(past).toMatchObject({
      status: 400,
      body: {
        code: 'VALIDATION_FAILED',
        message: 'invalid request: expires_at: must be in the future and within 10 years',
      },
    })
    const soon = await makeKey(user, ['files:read'], { expires_at: new Date(Date.now() + 3_600_000).toISOString() })
    expect((await call('GET', '/files', { token: soon.key })).status).toBe(200)
    await env.DB.prepare('update api_keys set expires_at = ? where id = ?')
      .bind(Date.now() - 1, soon._id)
      .run()
    expect(await callJson('GET', '/files', { token: soon.key })).toMatchObject({
      status: 401,
      body: { code: 'TOKEN_INVALID' },
    })
    expect((await callJson('GET', '/auth/api-keys', { token: user.token })).body).toEqual([])
  })

  it('refuses hostile input with 4xx: made-up and malformed keys, bad names and scopes, a key too many', async () => {
    const user = await signUp()
    const madeUp = `efk_${'A'.repeat(43)}`
    for (const token of [madeUp, 'efk_', 'efk_short', `efk_${'A'.repeat(4000)}`, `efk_${'é'.repeat(43)}`]) {
      const res = await callJson('GET', '/files', { token })
      expect(res.status, token.slice(0, 20)).toBe(401)
      expect(res.body.code).toBe('TOKEN_INVALID')
    }
    for (const json of [
      { name: 'x', scopes: ['admin'] },
      { name: 'x', scopes: [] },
      { name: '', scopes: ['files:read'] },
      { name: 'bell\u0007', scopes: ['files:read'] },
      { name: 'x'.repeat(101), scopes: ['files:read'] },
      { name: 'x', scopes: ['files:read'], expires_at: 'tomorrow' },
      { name: 'x', scopes: ['files:read'], user_id: user.id },
      { name: 'x', scopes: 'files:read' },
    ]) {
      const res = await callJson('POST', '/auth/api-keys', { token: user.token, json })
      expect(res.status, JSON.stringify(json)).toBe(400)
      expect(res.body.code).toBe('VALIDATION_FAILED')
    }
    const inserts = Array.from({ length: MAX_API_KEYS_PER_USER }, (_, i) =>
      env.DB.prepare(
        "insert into api_keys (id, user_id, name, prefix, key_hash, scopes, security_stamp, created_at) select ?, id, 'filler', 'efk_filler00', ?, '[\"files:read\"]', security_stamp, 0 from users where id = ?",
      ).bind(`${user.id.slice(0, 12)}${i.toString(16).padStart(12, '0')}`, `${user.id}-${i}`, user.id),
    )
    await env.DB.batch(inserts)
    const over = await callJson('POST', '/auth/api-keys', {
      token: user.token,
      json: { name: 'one more', scopes: ['files:read'] },
    })
    expect(over).toMatchObject({
      status: 409,
      body: { code: 'API_KEY_LIMIT_REACHED', max_keys: MAX_API_KEYS_PER_USER },
    })
  })

  it('names only mounted routes in its scope table', () => {
    const mounted = new Set(
      inspectRoutes(createApp())
        .filter((route) => !route.isMiddleware)
        .map((route) => `${route.method} ${route.path}`),
    )
    expect(Object.keys(ROUTE_SCOPES).filter((route) => !mounted.has(route))).toEqual([])
  })
})
