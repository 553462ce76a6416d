// The security matrix. Every mounted route is either listed as public here or refuses requests without a valid
// bearer token; and every authenticated operation of the OpenAPI document is tried with a revoked session's token
// and by another user on Alice's *real* resources (her file, job, upload, session and account), with a valid
// request, so the answer can only come from ownership: 404 as if it did not exist, or 403 from a rule that refuses
// whatever the record holds (naming the rule). A new route fails this suite until it is classified, and a path
// parameter this file cannot fill with a real id fails it too.
import { env } from 'cloudflare:test'
import { inspectRoutes } from 'hono/dev'
import { beforeAll, describe, expect, it } from 'vitest'
import { createApp } from '../../worker/app'
import { requiredScope } from '../../worker/auth/api-keys'
import { call, callJson } from '../support/api'
import { signUp, type TestUser } from '../support/accounts'
import { uploaded } from '../support/files'
import { backToApp, loginAt, throughProvider } from '../support/oauth'

/** Routes anyone may call (they authenticate by other means, or need no identity). */
const PUBLIC = new Set([
  'GET /',
  'GET /openapi.json',
  // The API reference and the console pages with their static files: they hold no data; the console signs in.
  'GET /docs',
  'GET /console',
  'GET /static/:file',
  'POST /auth/register',
  'POST /register',
  'POST /auth/login',
  'POST /login',
  'POST /auth/verify',
  'POST /user/verify',
  'POST /auth/forgot',
  'POST /user/reset/password',
  'POST /auth/reset',
  'PUT /user/reset/password',
  'POST /auth/refresh',
  // A login's second step: its second_factor_token (from the password step) stands in for the bearer token.
  'POST /auth/login/totp',
  // Provider sign-in: the providers, the redirect to one, its callback (the stored state stands in for identity)
  // and the one-time code's exchange (the code does).
  'GET /auth/oauth',
  'GET /auth/oauth/:provider',
  'GET /auth/oauth/:provider/callback',
  'POST /auth/oauth/:provider/callback',
  'POST /auth/oauth/exchange',
  // Passkey sign-in: the authenticator's signature over a stored challenge stands in for the bearer token.
  'POST /auth/passkeys/login/options',
  'POST /auth/passkeys/login',
  // A signed URL (?token=…) stands in for the bearer token; without either it answers 401 (tested in files).
  'GET /files/:id/download',
  // tus discovery (Tus-Version, Tus-Extension, limits): no data, and browsers send CORS preflights without tokens.
  'OPTIONS /files/tus',
])

const routes = inspectRoutes(createApp())
  .filter((route) => !route.isMiddleware && route.method !== 'ALL')
  .map((route) => ({ method: route.method, path: route.path, key: `${route.method} ${route.path}` }))
const unique = [...new Map(routes.map((route) => [route.key, route])).values()]
const MADE_UP_ID = '0123456789abcdef01234567'
const concrete = (path: string) =>
  path.replace(/:[A-Za-z_]+(\{[^}]*\})?/g, (name) => (name.startsWith(':part') ? '1' : MADE_UP_ID))

describe('security matrix: mounted routes', () => {
  it('finds the mounted routes', () => {
    expect(unique.length).toBeGreaterThan(10)
  })

  const protectedRoutes = unique.filter((route) => !PUBLIC.has(route.key))

  it.each(protectedRoutes)('$key refuses a request without a token', async ({ method, path }) => {
    const res = await call(method, concrete(path), {
      headers: { 'content-type': 'application/json' },
      body: method === 'GET' || method === 'HEAD' ? undefined : '{}',
    })
    expect(res.status).toBe(401)
    expect(await res.json()).toMatchObject({ message: expect.any(String), code: expect.stringMatching(/^TOKEN_/) })
  })

  it.each(protectedRoutes)('$key refuses a forged token', async ({ method, path }) => {
    const res = await call(method, concrete(path), {
      token: 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.',
      body: method === 'GET' ? undefined : '{}',
    })
    expect(res.status).toBe(401)
  })
})

interface Operation {
  method: string
  path: string
  key: string
}

const document = (await (await call('GET', '/openapi.json')).json()) as {
  paths: Record<string, Record<string, { security?: unknown[] }>>
}
const authenticated: Operation[] = Object.entries(document.paths).flatMap(([path, operations]) =>
  Object.entries(operations)
    .filter(([, operation]) => (operation.security ?? []).length > 0)
    .map(([method, operation]) => ({
      method: method.toUpperCase(),
      path,
      key: `${method.toUpperCase()} ${path}`,
      operation,
    })),
)

interface Owned {
  user: TestUser
  fileId: string
  jobId: string
  uploadId: string
  tusId: string
  sessionId: string
  apiKeyId: string
  identityId: string
  passkeyId: string
}

/** Alice's real resources, one of each kind a path can name. */
async function aliceResources(alice: TestUser): Promise<Owned> {
  const file = await uploaded(alice, 'alice.txt', 'only for alice')
  const job = await callJson('POST', `/files/${file._id}/convert`, {
    token: alice.token,
    headers: { prefer: 'respond-async' },
    json: {},
  })
  expect(job.status).toBe(202)
  const upload = await callJson('POST', '/files/uploads', { token: alice.token, json: { name: 'big.bin' } })
  expect(upload.status).toBe(201)
  const tus = await call('POST', '/files/tus', {
    token: alice.token,
    headers: { 'tus-resumable': '1.0.0', 'upload-length': '10' },
  })
  expect(tus.status).toBe(201)
  const tusId = tus.headers.get('location')!.split('/').pop()!
  const sessions = await callJson('GET', '/auth/sessions', { token: alice.token })
  const apiKey = await callJson('POST', '/auth/api-keys', {
    token: alice.token,
    json: { name: 'alice server', scopes: ['files:read'] },
  })
  expect(apiKey.status).toBe(201)
  const link = await callJson('POST', '/auth/oauth/loopback/link', {
    token: alice.token,
    json: { redirect_url: 'https://app.example.com/signed-in' },
  })
  await loginAt(link.body.authorization_url, {
    sub: crypto.randomUUID(),
    email: `alice-elsewhere-${crypto.randomUUID()}@example.com`,
    email_verified: true,
  })
  expect((await backToApp(await throughProvider(link.body.authorization_url))).searchParams.get('linked')).toBe(
    'loopback',
  )
  const identities = await callJson('GET', '/auth/identities', { token: alice.token })
  // A passkey row of Alice's (registering one takes a browser's authenticator: test/e2e/passkeys.test.ts).
  const passkeyId = `${alice.id.slice(0, 12)}${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`
  await env.DB.prepare(
    "insert into passkeys (id, user_id, credential_id, public_key, device_type, name, created_at) values (?, ?, ?, 'AQID', 'singleDevice', 'alice key', 0)",
  )
    .bind(passkeyId, alice.id, crypto.randomUUID())
    .run()
  return {
    user: alice,
    fileId: file._id,
    jobId: job.body._id,
    uploadId: upload.body.upload_id,
    tusId,
    sessionId: sessions.body[0]!._id,
    apiKeyId: apiKey.body._id,
    identityId: identities.body[0]!._id,
    passkeyId,
  }
}

/** The path with every parameter filled by Alice's real id of that kind; throws for a parameter it cannot fill. */
function withRealIds(path: string, owned: Owned): string {
  return path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    // Not resources: a part number, and a file extension that GET /convert/{extension} describes.
    if (name === 'part') return '1'
    if (name === 'extension') return 'pdf'
    if (name === 'uploadId') return owned.uploadId
    // Not a resource: the sign-in provider a link starts with.
    if (name === 'provider') return 'loopback'
    if (name === 'sessionId') return owned.sessionId
    if (name !== 'id') throw new Error(`${path}: no real id for {${name}}: teach the matrix this kind of resource`)
    if (path.startsWith('/files/tus/')) return owned.tusId
    if (path.startsWith('/files/')) return owned.fileId
    if (path.startsWith('/jobs/')) return owned.jobId
    if (path.startsWith('/users/') || path.startsWith('/admin/users/')) return owned.user.id
    if (path.startsWith('/auth/sessions/')) return owned.sessionId
    if (path.startsWith('/auth/api-keys/')) return owned.apiKeyId
    if (path.startsWith('/auth/identities/')) return owned.identityId
    if (path.startsWith('/auth/passkeys/')) return owned.passkeyId
    throw new Error(`${path}: no real id for {id}: teach the matrix this kind of resource`)
  })
}

/** A request the route would accept from Alice herself, so that only ownership can refuse it. */
function validRequest(operation: Operation): { json?: unknown; body?: BodyInit; headers?: Record<string, string> } {
  const tus = { 'tus-resumable': '1.0.0' }
  if (operation.key === 'PATCH /files/tus/{id}')
    return {
      body: new Uint8Array(4),
      headers: { ...tus, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
    }
  if (operation.key === 'POST /files/tus/{id}') return { headers: { ...tus, 'x-http-method-override': 'DELETE' } }
  if (operation.path.startsWith('/files/tus')) return { headers: tus }
  if (operation.key === 'PUT /files/uploads/{uploadId}/{part}')
    return { body: new Uint8Array(16), headers: { 'content-type': 'application/octet-stream', 'content-length': '16' } }
  if (operation.key === 'PUT /files/{id}') return { json: { name: 'renamed.txt' } }
  if (operation.key === 'PUT /users/{id}') return { json: { name: 'Renamed' } }
  // The caller's own account (no id: another user's token only reaches its own): a change that needs confirmation,
  // with the password every test user signs up with, so that only the token can refuse it.
  if (operation.key === 'PUT /auth/user' || operation.key === 'PUT /user')
    return {
      json: {
        name: 'Renamed',
        email: `renamed-${crypto.randomUUID()}@example.com`,
        current_password: 'a long enough password',
      },
    }
  if (operation.key === 'DELETE /auth/user' || operation.key === 'DELETE /user')
    return { json: { current_password: 'a long enough password' } }
  if (operation.key === 'POST /files/{id}/convert') return { json: {} }
  if (operation.key === 'POST /auth/oauth/{provider}/link')
    return { json: { redirect_url: 'https://app.example.com/signed-in' } }
  if (operation.method === 'POST' || operation.method === 'PUT' || operation.method === 'PATCH') return { json: {} }
  return {}
}

describe('security matrix: every authenticated operation of the OpenAPI document', () => {
  let owned: Owned
  let mallory: TestUser
  let revoked: TestUser

  beforeAll(async () => {
    owned = await aliceResources(await signUp())
    mallory = await signUp()
    revoked = await signUp()
    expect((await call('POST', '/auth/logout', { token: revoked.token })).status).toBe(200)
  })

  it('covers the authenticated operations', () => {
    expect(authenticated.length).toBeGreaterThan(15)
  })

  it.each(authenticated)("$key refuses a revoked session's token with 401", async (operation) => {
    const res = await call(operation.method, withRealIds(operation.path, owned), {
      token: revoked.token,
      ...validRequest(operation),
    })
    expect(res.status).toBe(401)
    if (operation.method === 'HEAD')
      expect(await res.text()).toBe('') // RFC 9110 §9.3.2: no content in a HEAD answer
    else expect(await res.json()).toMatchObject({ code: 'TOKEN_REVOKED' })
  })

  it.each(authenticated.filter((operation) => /\{(id|uploadId)\}/.test(operation.path)))(
    "$key answers another user 404 on Alice's real resource (or 403 naming a rule that refuses whatever it holds)",
    async (operation) => {
      const res = await call(operation.method, withRealIds(operation.path, owned), {
        token: mallory.token,
        ...validRequest(operation),
      })
      if (operation.method === 'HEAD') {
        // RFC 9110 §9.3.2: a HEAD answer has no content, so the status alone says it; and nothing of Alice's upload.
        expect(res.status).toBe(404)
        expect(await res.text()).toBe('')
        expect(res.headers.get('upload-offset')).toBeNull()
        return
      }
      const body = (await res.json()) as Record<string, unknown>
      expect([403, 404]).toContain(res.status)
      if (res.status === 403) expect(body).toHaveProperty('rule')
      else expect(body.code).toMatch(/_NOT_FOUND$/)
      expect(JSON.stringify(body)).not.toContain(owned.user.email)
    },
  )

  it("leaves Alice's resources as they were", async () => {
    const token = owned.user.token
    expect((await callJson('GET', `/files/${owned.fileId}`, { token })).body).toMatchObject({
      _id: owned.fileId,
      name: 'alice.txt',
    })
    expect((await call('GET', `/jobs/${owned.jobId}`, { token })).status).toBe(200)
    expect((await callJson('GET', '/auth/user', { token })).body).toMatchObject({
      _id: owned.user.id,
      name: 'Test User',
    })
    expect((await callJson('GET', '/auth/sessions', { token })).body.map((session) => session._id)).toContain(
      owned.sessionId,
    )
    expect((await callJson('GET', '/auth/api-keys', { token })).body.map((key) => key._id)).toEqual([owned.apiKeyId])
    expect((await callJson('GET', '/auth/identities', { token })).body.map((identity) => identity._id)).toEqual([
      owned.identityId,
    ])
    expect((await callJson('GET', '/auth/passkeys', { token })).body.map((passkey) => passkey._id)).toEqual([
      owned.passkeyId,
    ])
  })
})

/** The OpenAPI path as the Hono route path the API key scope table names. */
const honoPath = (path: string) => path.replace(/\{([^}]+)\}/g, ':$1')

describe('security matrix: API keys on every authenticated operation', () => {
  const ALL_SCOPES = ['files:read', 'files:write', 'convert']
  let owned: Owned
  let malloryKey: string
  let aliceKey: string
  let revokedKey: string

  beforeAll(async () => {
    owned = await aliceResources(await signUp())
    const mallory = await signUp()
    const make = async (user: TestUser) =>
      (await callJson('POST', '/auth/api-keys', { token: user.token, json: { name: 'all', scopes: ALL_SCOPES } })).body
    malloryKey = (await make(mallory)).key
    aliceKey = (await make(owned.user)).key
    const revoked = await make(mallory)
    revokedKey = revoked.key
    expect((await call('DELETE', `/auth/api-keys/${revoked._id}`, { token: mallory.token })).status).toBe(200)
  })

  it.each(authenticated)('$key refuses a revoked API key with 401', async (operation) => {
    const res = await call(operation.method, withRealIds(operation.path, owned), {
      token: revokedKey,
      ...validRequest(operation),
    })
    expect(res.status).toBe(401)
    // A HEAD answer has no body (RFC 9110 §9.3.2): its status says it.
    if (operation.method !== 'HEAD') expect(await res.json()).toMatchObject({ code: 'TOKEN_INVALID' })
  })

  it.each(authenticated.filter((operation) => /\{(id|uploadId)\}/.test(operation.path)))(
    "$key answers another user's key with every scope 404 on Alice's real resource (403 where no key may go)",
    async (operation) => {
      const res = await call(operation.method, withRealIds(operation.path, owned), {
        token: malloryKey,
        ...validRequest(operation),
      })
      if (operation.method === 'HEAD') {
        expect(res.status).toBe(requiredScope(operation.method, honoPath(operation.path)) ? 404 : 403)
        return
      }
      const body = (await res.json()) as Record<string, unknown>
      if (requiredScope(operation.method, honoPath(operation.path))) expect(body.code).toMatch(/_NOT_FOUND$/)
      else expect(body.code).toBe('INSUFFICIENT_SCOPE')
      expect(JSON.stringify(body)).not.toContain(owned.user.email)
    },
  )

  it.each(authenticated.filter((operation) => !requiredScope(operation.method, honoPath(operation.path))))(
    "$key refuses Alice's own key with every scope: 403, no key may call it",
    async (operation) => {
      const res = await call(operation.method, withRealIds(operation.path, owned), {
        token: aliceKey,
        ...validRequest(operation),
      })
      expect(res.status).toBe(403)
      expect(await res.json()).toMatchObject({ code: 'INSUFFICIENT_SCOPE' })
    },
  )

  it("leaves Alice's key list and session as they were", async () => {
    expect((await callJson('GET', '/auth/api-keys', { token: owned.user.token })).body).toHaveLength(2)
    expect((await call('GET', '/auth/user', { token: owned.user.token })).status).toBe(200)
  })
})
