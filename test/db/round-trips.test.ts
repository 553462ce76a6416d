// Sequential D1 round trips per route, counted through a wrapper of the binding (test/support/counting-d1.ts) and
// held to the table in docs/global-clients.md: far from D1's primary, each one is a network round trip the client
// waits for. Goal (issue 30): a read route one, a write route two at most. Every mounted route has a row; a route
// added without one fails here, and so does a change that adds a round trip (the expected table is printed).
import { createExecutionContext, env, waitOnExecutionContext } from 'cloudflare:test'
import { inspectRoutes } from 'hono/dev'
import { beforeAll, describe, expect, it } from 'vitest'
import guide from '../../docs/global-clients.md?raw'
import { createApp } from '../../worker/app'
import { issueToken } from '../../worker/auth/tokens'
import { loadConfig } from '../../worker/config'
import { previewCacheKey } from '../../worker/previews/edge-cache'
import { PreviewQuery, previewParams } from '../../worker/previews/params'
import { call, callJson, requestFor, type CallOptions } from '../support/api'
import { signUp, uniqueEmail, type TestUser } from '../support/accounts'
import { D1Recorder } from '../support/counting-d1'
import { uploaded } from '../support/files'
import { grantRole } from '../support/roles'
import { registerChainConverters } from '../support/chain-converters'
import { type RegistrationOptions, type SignInOptions, SoftwareAuthenticator } from '../support/authenticator'
import { APP_URL, backToApp, exchange, loginAt, signInThrough, startSignIn, throughProvider } from '../support/oauth'
import { base32Decode, totp } from '../../worker/auth/otp'

const recorder = new D1Recorder()
const app = createApp()
const countedEnv = { ...env, DB: recorder.wrap(env.DB) }

/** One request through the app with the counted binding; the count stops when the response is answered. */
async function counted(method: string, path: string, options: CallOptions = {}) {
  const ctx = createExecutionContext()
  recorder.start()
  const response = await app.fetch(requestFor(method, path, options), countedEnv, ctx)
  const count = recorder.stop()
  await response.arrayBuffer()
  await waitOnExecutionContext(ctx)
  return { status: response.status, ...count }
}

interface Fixtures {
  alice: TestUser
  admin: TestUser
  fileId: string
  jobId: string
  uploadId: string
  tusId: string
}

type Scenario = (f: Fixtures) => Promise<[method: string, path: string, options?: CallOptions]>

const stampOf = async (id: string) =>
  (await env.DB.prepare('SELECT security_stamp, email FROM users WHERE id = ?')
    .bind(id)
    .first<{ security_stamp: string; email: string }>())!
const userToken = async (type: 'verify' | 'reset', user: TestUser) => {
  const row = await stampOf(user.id)
  return (await issueToken(loadConfig(env), type, { id: user.id, securityStamp: row.security_stamp, email: row.email }))
    .token
}
const newSessionId = async (user: TestUser) => {
  await callJson('POST', '/auth/login', { json: { email: user.email, password: user.password } })
  const sessions = await callJson('GET', '/auth/sessions', { token: user.token })
  return sessions.body.find((session) => !session.current)!._id
}
const freshLogin = async (user: TestUser) =>
  (await callJson('POST', '/auth/login', { json: { email: user.email, password: user.password } })).body
const tusCreated = async (user: TestUser) => {
  const res = await callJson('POST', '/files/tus', {
    token: user.token,
    headers: { 'tus-resumable': '1.0.0', 'upload-length': '3' },
  })
  return res.headers.get('location')!.split('/').pop()!
}
const partsUpload = async (user: TestUser) =>
  (await callJson('POST', '/files/uploads', { token: user.token, json: { name: 'big.bin' } })).body.upload_id
const TUS = { 'tus-resumable': '1.0.0' }
/** A tus PATCH of `body` at `offset`, with the Content-Length an HTTP client sends (a Request made here has none). */
const tusPatch = (token: string, offset: number, body: string | Uint8Array) => ({
  token,
  body,
  headers: {
    ...TUS,
    'upload-offset': String(offset),
    'content-type': 'application/offset+octet-stream',
    'content-length': String(typeof body === 'string' ? body.length : body.byteLength),
  },
})

const nowSeconds = () => Date.now() / 1000
/** A new account with a TOTP factor started (not confirmed): its secret, for the codes the test computes. */
const totpStarted = async () => {
  const user = await signUp()
  const started = await callJson('POST', '/auth/totp', { token: user.token })
  return { user, secret: base32Decode(started.body.secret)! }
}
/** A new account with a confirmed TOTP factor. Its next code is the next step's (RFC 6238 §5.2: a step is used once;
 * a verifier accepts one step either side of now). */
const totpEnabled = async () => {
  const { user, secret } = await totpStarted()
  await callJson('POST', '/auth/totp/confirm', { token: user.token, json: { code: await totp(secret, nowSeconds()) } })
  return { user, nextCode: () => totp(secret, nowSeconds() + 30) }
}
/** A provider sign-in up to the Worker's callback: its path and query, for an identity signed in before. */
const providerCallback = async (sub: string, email: string) => {
  const authorization = await startSignIn('loopback')
  await loginAt(authorization, { sub, email, email_verified: true, name: 'Returning User' })
  return throughProvider(authorization.toString())
}
const returning = { sub: crypto.randomUUID(), email: uniqueEmail('oidc') }
/** A new account signed in through the provider: its session token and its one linked identity. */
const providerAccount = async () => {
  const code = (
    await signInThrough('loopback', { sub: crypto.randomUUID(), email: uniqueEmail('oidc'), email_verified: true })
  ).searchParams.get('code')!
  const session = await exchange(code)
  const identities = await callJson('GET', '/auth/identities', { token: session.body.token })
  return { token: session.body.token, identityId: identities.body[0]!._id }
}
/** A passkey registered by a software authenticator for the user. */
const passkeyOf = async (user: TestUser) => {
  const authenticator = await SoftwareAuthenticator.create()
  const options = await callJson<RegistrationOptions>('POST', '/auth/passkeys/register/options', {
    token: user.token,
  })
  const registered = await callJson('POST', '/auth/passkeys/register', {
    token: user.token,
    json: { credential: await authenticator.register(options.body) },
  })
  expect(registered.status).toBe(201)
  return { authenticator, passkeyId: registered.body._id, userHandle: options.body.user.id }
}

/** A valid request of each route, as its owner would send it (2xx), on real resources. */
const SCENARIOS: Record<string, Scenario> = {
  'GET /': async () => ['GET', '/'],
  'POST /auth/register': async () => [
    'POST',
    '/auth/register',
    { json: { email: uniqueEmail(), password: 'a long enough password' } },
  ],
  'POST /register': async () => [
    'POST',
    '/register',
    { json: { email: uniqueEmail(), password: 'a long enough password' } },
  ],
  'POST /auth/login': async ({ alice }) => [
    'POST',
    '/auth/login',
    { json: { email: alice.email, password: alice.password } },
  ],
  'POST /login': async ({ alice }) => ['POST', '/login', { json: { email: alice.email, password: alice.password } }],
  'POST /auth/verify': async () => {
    const user = await signUp()
    return ['POST', '/auth/verify', { json: { token: await userToken('verify', user) } }]
  },
  'POST /user/verify': async () => {
    const user = await signUp()
    return ['POST', '/user/verify', { json: { token: await userToken('verify', user) } }]
  },
  'POST /auth/verify/resend': async () => ['POST', '/auth/verify/resend', { token: (await signUp()).token }],
  'POST /auth/forgot': async ({ alice }) => ['POST', '/auth/forgot', { json: { email: alice.email } }],
  'POST /user/reset/password': async ({ alice }) => ['POST', '/user/reset/password', { json: { email: alice.email } }],
  'POST /auth/reset': async () => {
    const user = await signUp()
    return [
      'POST',
      '/auth/reset',
      { json: { token: await userToken('reset', user), password: 'another long password' } },
    ]
  },
  'PUT /user/reset/password': async () => {
    const user = await signUp()
    return [
      'PUT',
      '/user/reset/password',
      { json: { token: await userToken('reset', user), password: 'another long password' } },
    ]
  },
  'GET /auth/user': async ({ alice }) => ['GET', '/auth/user', { token: alice.token }],
  'GET /user': async ({ alice }) => ['GET', '/user', { token: alice.token }],
  'PUT /auth/user': async ({ alice }) => ['PUT', '/auth/user', { token: alice.token, json: { name: 'Alice Again' } }],
  'PUT /user': async ({ alice }) => ['PUT', '/user', { token: alice.token, json: { name: 'Alice Again' } }],
  'DELETE /auth/user': async () => {
    const doomed = await signUp()
    await uploaded(doomed, 'notes.txt', 'goes with the account')
    return ['DELETE', '/auth/user', { token: doomed.token, json: { current_password: doomed.password } }]
  },
  'DELETE /user': async () => {
    const doomed = await signUp()
    return ['DELETE', '/user', { token: doomed.token, json: { current_password: doomed.password } }]
  },
  'POST /auth/refresh': async ({ alice }) => [
    'POST',
    '/auth/refresh',
    { json: { refresh_token: (await freshLogin(alice)).refresh_token } },
  ],
  'POST /auth/logout': async ({ alice }) => ['POST', '/auth/logout', { token: (await freshLogin(alice)).token }],
  'GET /auth/sessions': async ({ alice }) => ['GET', '/auth/sessions', { token: alice.token }],
  'DELETE /auth/sessions/:id': async ({ alice }) => [
    'DELETE',
    `/auth/sessions/${await newSessionId(alice)}`,
    { token: alice.token },
  ],
  'GET /users': async ({ admin }) => ['GET', '/users', { token: admin.token }],
  'POST /users': async ({ admin }) => [
    'POST',
    '/users',
    { token: admin.token, json: { email: uniqueEmail(), password: 'a long enough password' } },
  ],
  'GET /users/:id': async ({ alice }) => ['GET', `/users/${alice.id}`, { token: alice.token }],
  'PUT /users/:id': async ({ alice }) => [
    'PUT',
    `/users/${alice.id}`,
    { token: alice.token, json: { name: 'Alice Again' } },
  ],
  'DELETE /users/:id': async ({ admin }) => ['DELETE', `/users/${(await signUp()).id}`, { token: admin.token }],
  'OPTIONS /files/tus': async () => ['OPTIONS', '/files/tus'],
  'POST /files/tus': async ({ alice }) => [
    'POST',
    '/files/tus',
    { token: alice.token, headers: { ...TUS, 'upload-length': '3' } },
  ],
  'GET /files/tus/:id': async ({ alice, tusId }) => [
    'GET',
    `/files/tus/${tusId}`,
    { token: alice.token, headers: TUS },
  ],
  'PATCH /files/tus/:id': async ({ alice }) => [
    'PATCH',
    `/files/tus/${await tusCreated(alice)}`,
    tusPatch(alice.token, 0, 'abc'),
  ],
  'DELETE /files/tus/:id': async ({ alice }) => [
    'DELETE',
    `/files/tus/${await tusCreated(alice)}`,
    { token: alice.token, headers: TUS },
  ],
  'POST /files/tus/:id': async ({ alice }) => [
    'POST',
    `/files/tus/${await tusCreated(alice)}`,
    { token: alice.token, headers: { ...TUS, 'x-http-method-override': 'DELETE' } },
  ],
  'POST /files/uploads': async ({ alice }) => [
    'POST',
    '/files/uploads',
    { token: alice.token, json: { name: 'big.bin' } },
  ],
  'GET /files/uploads/:uploadId': async ({ alice, uploadId }) => [
    'GET',
    `/files/uploads/${uploadId}`,
    { token: alice.token },
  ],
  'PUT /files/uploads/:uploadId/:part': async ({ alice }) => [
    'PUT',
    `/files/uploads/${await partsUpload(alice)}/1`,
    { token: alice.token, body: 'abc', headers: { 'content-length': '3' } },
  ],
  'POST /files/uploads/:uploadId/complete': async ({ alice }) => {
    const id = await partsUpload(alice)
    await callJson('PUT', `/files/uploads/${id}/1`, {
      token: alice.token,
      body: 'abc',
      headers: { 'content-length': '3' },
    })
    return ['POST', `/files/uploads/${id}/complete`, { token: alice.token }]
  },
  'DELETE /files/uploads/:uploadId': async ({ alice }) => [
    'DELETE',
    `/files/uploads/${await partsUpload(alice)}`,
    { token: alice.token },
  ],
  'POST /files': async ({ alice }) => [
    'POST',
    '/files',
    { token: alice.token, body: 'hello', headers: { 'x-edgefloor-name': 'hello.txt' } },
  ],
  'GET /files': async ({ alice }) => ['GET', '/files', { token: alice.token }],
  'GET /files/:id': async ({ alice, fileId }) => ['GET', `/files/${fileId}`, { token: alice.token }],
  'GET /files/:id/files': async ({ alice, fileId }) => ['GET', `/files/${fileId}/files`, { token: alice.token }],
  'PUT /files/:id': async ({ alice, fileId }) => [
    'PUT',
    `/files/${fileId}`,
    { token: alice.token, json: { name: 'renamed.txt' } },
  ],
  'DELETE /files/:id': async ({ alice }) => [
    'DELETE',
    `/files/${(await uploaded(alice, 'gone.txt', 'bye'))._id}`,
    { token: alice.token },
  ],
  'GET /files/:id/download': async ({ alice, fileId }) => ['GET', `/files/${fileId}/download`, { token: alice.token }],
  'GET /files/:id/preview': async ({ alice }) => {
    const file = await uploaded(alice, 'pixel.txt', 'preview me')
    // Drawn once (by the consumer) and kept by the location's cache: the counted request is the repeat a client makes.
    await (await call('GET', `/files/${file._id}/preview?w=64`, { token: alice.token })).arrayBuffer()
    const key = previewCacheKey(
      { userId: alice.id, hash: file.hash, extension: file.extension, contentType: file.content_type },
      previewParams(PreviewQuery.parse({ w: '64' }), undefined),
    )
    await expect.poll(async () => (await caches.default.match(key)) !== undefined).toBe(true)
    return ['GET', `/files/${file._id}/preview?w=64`, { token: alice.token }]
  },
  'GET /convert/:extension': async ({ alice }) => ['GET', '/convert/pdf', { token: alice.token }],
  'POST /files/:id/convert': async ({ alice }) => [
    'POST',
    `/files/${(await uploaded(alice, 'c.txt', 'convert me'))._id}/convert`,
    { token: alice.token, headers: { prefer: 'respond-async' } },
  ],
  'GET /jobs/:id': async ({ alice, jobId }) => ['GET', `/jobs/${jobId}`, { token: alice.token }],
  'GET /jobs/:id/events': async ({ alice, jobId }) => ['GET', `/jobs/${jobId}/events`, { token: alice.token }],
  'POST /jobs/:id/retry': async ({ alice }) => {
    const failed = await callJson('POST', `/files/${(await uploaded(alice, 'broken.tbroken', 'x'))._id}/convert`, {
      token: alice.token,
    })
    expect(failed.status).toBe(422)
    return ['POST', `/jobs/${failed.body.job}/retry`, { token: alice.token }]
  },
  'GET /files/:id/jobs': async ({ alice, fileId }) => ['GET', `/files/${fileId}/jobs`, { token: alice.token }],
  'GET /files/:id/tree': async ({ alice, fileId }) => ['GET', `/files/${fileId}/tree`, { token: alice.token }],
  'GET /admin/users': async ({ admin }) => ['GET', '/admin/users?q=example', { token: admin.token }],
  'GET /admin/users/:id/files': async ({ admin, alice }) => [
    'GET',
    `/admin/users/${alice.id}/files`,
    { token: admin.token },
  ],
  'GET /admin/users/:id/jobs': async ({ admin, alice }) => [
    'GET',
    `/admin/users/${alice.id}/jobs`,
    { token: admin.token },
  ],
  'GET /admin/users/:id/sessions': async ({ admin, alice }) => [
    'GET',
    `/admin/users/${alice.id}/sessions`,
    { token: admin.token },
  ],
  'DELETE /admin/users/:id/sessions/:sessionId': async ({ admin, alice }) => [
    'DELETE',
    `/admin/users/${alice.id}/sessions/${await newSessionId(alice)}`,
    { token: admin.token },
  ],
  'GET /openapi.json': async () => ['GET', '/openapi.json'],
  'GET /docs': async () => ['GET', '/docs'],
  'GET /console': async () => ['GET', '/console'],
  'GET /static/:file': async () => ['GET', '/static/pages.css'],
  'POST /user/verify/email': async () => ['POST', '/user/verify/email', { token: (await signUp()).token }],
  'POST /auth/api-keys': async ({ alice }) => [
    'POST',
    '/auth/api-keys',
    { token: alice.token, json: { name: 'counted', scopes: ['files:read'] } },
  ],
  'GET /auth/api-keys': async ({ alice }) => ['GET', '/auth/api-keys', { token: alice.token }],
  'DELETE /auth/api-keys/:id': async ({ alice }) => {
    const key = await callJson('POST', '/auth/api-keys', {
      token: alice.token,
      json: { name: 'to revoke', scopes: ['files:read'] },
    })
    return ['DELETE', `/auth/api-keys/${key.body._id}`, { token: alice.token }]
  },
  'GET /auth/totp': async ({ alice }) => ['GET', '/auth/totp', { token: alice.token }],
  'POST /auth/totp': async () => ['POST', '/auth/totp', { token: (await signUp()).token }],
  'GET /auth/oauth': async () => ['GET', '/auth/oauth'],
  'GET /auth/identities': async ({ alice }) => ['GET', '/auth/identities', { token: alice.token }],
  'GET /auth/passkeys': async ({ alice }) => ['GET', '/auth/passkeys', { token: alice.token }],
  'POST /auth/passkeys/register/options': async ({ alice }) => [
    'POST',
    '/auth/passkeys/register/options',
    { token: alice.token },
  ],
  'POST /auth/passkeys/login/options': async () => ['POST', '/auth/passkeys/login/options'],
  'POST /auth/totp/confirm': async () => {
    const { user, secret } = await totpStarted()
    return ['POST', '/auth/totp/confirm', { token: user.token, json: { code: await totp(secret, nowSeconds()) } }]
  },
  'DELETE /auth/totp': async () => {
    const { user, nextCode } = await totpEnabled()
    return ['DELETE', '/auth/totp', { token: user.token, json: { code: await nextCode() } }]
  },
  'POST /auth/totp/recovery-codes': async () => {
    const { user, nextCode } = await totpEnabled()
    return ['POST', '/auth/totp/recovery-codes', { token: user.token, json: { code: await nextCode() } }]
  },
  'POST /auth/login/totp': async () => {
    const { user, nextCode } = await totpEnabled()
    const password = await callJson('POST', '/auth/login', { json: { email: user.email, password: user.password } })
    expect(password.body.code).toBe('SECOND_FACTOR_REQUIRED')
    return [
      'POST',
      '/auth/login/totp',
      { json: { second_factor_token: password.body.second_factor_token, code: await nextCode() } },
    ]
  },
  'GET /auth/oauth/:provider': async () => ['GET', `/auth/oauth/loopback?redirect_url=${encodeURIComponent(APP_URL)}`],
  'POST /auth/oauth/:provider/link': async ({ alice }) => [
    'POST',
    '/auth/oauth/loopback/link',
    { token: alice.token, json: { redirect_url: APP_URL } },
  ],
  // A returning user: the identity is linked already (its first sign-in made the account, in beforeAll).
  'GET /auth/oauth/:provider/callback': async () => ['GET', await providerCallback(returning.sub, returning.email)],
  // The same, as a provider answering with response_mode=form_post (Apple) sends it.
  'POST /auth/oauth/:provider/callback': async () => {
    const callback = new URL(await providerCallback(returning.sub, returning.email), 'http://edgefloor.test')
    return [
      'POST',
      callback.pathname,
      { body: callback.searchParams.toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } },
    ]
  },
  'POST /auth/oauth/exchange': async () => {
    const app = await backToApp(await providerCallback(returning.sub, returning.email))
    return ['POST', '/auth/oauth/exchange', { json: { code: app.searchParams.get('code') } }]
  },
  'DELETE /auth/identities/:id': async () => {
    const { token, identityId } = await providerAccount()
    return ['DELETE', `/auth/identities/${identityId}`, { token }]
  },
  'POST /auth/passkeys/register': async () => {
    const user = await signUp()
    const options = await callJson<RegistrationOptions>('POST', '/auth/passkeys/register/options', {
      token: user.token,
    })
    const credential = await (await SoftwareAuthenticator.create()).register(options.body)
    return ['POST', '/auth/passkeys/register', { token: user.token, json: { credential, name: 'laptop' } }]
  },
  'POST /auth/passkeys/login': async () => {
    const { authenticator, userHandle } = await passkeyOf(await signUp())
    const options = await callJson<SignInOptions>('POST', '/auth/passkeys/login/options')
    return [
      'POST',
      '/auth/passkeys/login',
      { json: { credential: await authenticator.signIn(options.body, userHandle) } },
    ]
  },
  'DELETE /auth/passkeys/:id': async () => {
    const user = await signUp()
    const { passkeyId } = await passkeyOf(user)
    return ['DELETE', `/auth/passkeys/${passkeyId}`, { token: user.token }]
  },
}

const mounted = [
  ...new Set(
    inspectRoutes(app)
      .filter((route) => !route.isMiddleware && route.method !== 'ALL')
      .map((route) => `${route.method} ${route.path.replace(/\{[^}]*\}/g, '')}`),
  ),
]

let fixtures: Fixtures

beforeAll(async () => {
  registerChainConverters()
  const alice = await signUp()
  const admin = await signUp()
  await grantRole(admin, 'admin')
  const file = await uploaded(alice, 'alice.txt', 'only for alice')
  const job = await callJson('POST', `/files/${file._id}/convert`, {
    token: alice.token,
    headers: { prefer: 'respond-async' },
  })
  const first = await exchange(
    (await signInThrough('loopback', { ...returning, email_verified: true })).searchParams.get('code')!,
  )
  expect(first.status).toBe(200)
  fixtures = {
    alice,
    admin,
    fileId: file._id,
    jobId: job.body._id,
    uploadId: await partsUpload(alice),
    tusId: await tusCreated(alice),
  }
})

/** A provider's callback is a GET by OAuth's design (RFC 6749 §4.1.2: the browser is redirected) but a write: it spends
 * the state and issues the app's one-time code. */
const WRITES_BY_GET = new Set(['GET /auth/oauth/:provider/callback'])

/** Reads (GET, HEAD) are one round trip at most, writes two (issue 30). */
const goalOf = (key: string) => (/^(GET|HEAD|OPTIONS) /.test(key) && !WRITES_BY_GET.has(key) ? 1 : 2)

const TABLE = /<!-- round-trips:start -->\n([\s\S]*?)\n<!-- round-trips:end -->/

describe('sequential D1 round trips per route', () => {
  it('has a scenario for every mounted route', () => {
    expect(mounted.filter((key) => !(key in SCENARIOS))).toEqual([])
  })

  it('matches the table in docs/global-clients.md, route by route', async () => {
    const rows: string[] = []
    for (const key of mounted) {
      const [method, path, options] = await SCENARIOS[key]!(fixtures)
      const result = await counted(method, path, options)
      // A provider sign-in's start and callback answer a redirect.
      expect(result.status, `${key} answered ${result.status}`).toBeLessThan(
        key.startsWith('GET /auth/oauth/:') || key.startsWith('POST /auth/oauth/:provider/callback') ? 400 : 300,
      )
      const goal = goalOf(key)
      rows.push(`| \`${key}\` | ${result.sequential} | ${goal} | ${result.sequential <= goal ? 'yes' : '**no**'} |`)
    }
    const table = ['| Route | Sequential D1 round trips | Goal | Met |', '|---|---|---|---|', ...rows].join('\n')
    expect(TABLE.exec(guide)?.[1], `the table should be:\n${table}`).toBe(table)
  })
})

describe("a part's quota hold in the session check's round trip", () => {
  const reservation = async (id: string) =>
    env.DB.prepare('SELECT bytes, expires_at FROM storage_reservations WHERE id = ?').bind(id).first()
  const putPart = (user: TestUser, id: string, part: number, body: string) =>
    counted('PUT', `/files/uploads/${id}/${part}`, {
      token: user.token,
      body,
      headers: { 'content-length': String(body.length) },
    })

  it('holds a declared size with the part, and a refused part leaves the hold as it was', async () => {
    const alice = await signUp()
    const started = await callJson('POST', '/files/uploads', { token: alice.token, json: { name: 'x.bin', size: 3 } })
    const id = started.body.upload_id
    const before = await reservation(id)
    expect(before).toMatchObject({ bytes: 3 })
    // R2's part rule: a declared 3 bytes are one part of 3 (partRuleViolation); 2 bytes are refused before R2.
    const refused = await putPart(alice, id, 1, 'ab')
    expect(refused.status).toBe(400)
    expect(await reservation(id)).toEqual(before)
    const stored = await putPart(alice, id, 1, 'abc')
    expect(stored).toMatchObject({ status: 200, sequential: 2 })
    expect(await reservation(id)).toMatchObject({ bytes: 3 })
  })

  it("grows an unknown size's hold by the part, and a part after the last is refused without growing it", async () => {
    const alice = await signUp()
    const id = (await callJson('POST', '/files/uploads', { token: alice.token, json: { name: 'y.bin' } })).body
      .upload_id as string
    const first = await putPart(alice, id, 1, 'abc')
    expect(first).toMatchObject({ status: 200, sequential: 2 })
    const held = await reservation(id)
    expect(held).toMatchObject({ bytes: 3 })
    // Part 1 is short, so it is the last: part 2 cannot follow it.
    const refused = await putPart(alice, id, 2, 'de')
    expect(refused.status).toBe(400)
    expect(await reservation(id)).toEqual(held)
  })
})

describe('a tus PATCH in two round trips, whatever it carries', () => {
  it('a tail, a full part, and the rest that completes the upload (its hash read back): two each, and the file whole', async () => {
    const alice = await signUp()
    const MiB = 1024 * 1024
    const bytes = new Uint8Array(9 * MiB + 3000).map((_, i) => (i * 13 + (i >> 11)) & 0xff)
    const created = await call('POST', '/files/tus', {
      token: alice.token,
      headers: { ...TUS, 'upload-length': String(bytes.length) },
    })
    const path = new URL(created.headers.get('location')!).pathname
    const patchAt = (from: number, to: number) =>
      counted('PATCH', path, tusPatch(alice.token, from, bytes.subarray(from, to)))
    const cuts = [0, 1000, 8 * MiB + 1000, bytes.length]
    const counts = []
    for (let i = 0; i + 1 < cuts.length; i++) counts.push(await patchAt(cuts[i]!, cuts[i + 1]!))
    expect(counts.map(({ status, sequential }) => ({ status, sequential }))).toEqual([
      { status: 204, sequential: 2 },
      { status: 204, sequential: 2 },
      { status: 204, sequential: 2 },
    ])
    const record = await callJson('GET', `/files/${path.split('/').pop()}`, { token: alice.token })
    expect(record.body).toMatchObject({
      size: bytes.length,
      hash: new Uint8Array(await crypto.subtle.digest('SHA-256', bytes)).toHex(),
    })
  })
})

describe('an upload whose quota hold shares the session check', () => {
  it('reserves, starts and stores nothing for a token whose session was logged out (a tus PATCH takes no part number and no lease either)', async () => {
    const alice = await signUp()
    const started = await callJson('POST', '/files/uploads', { token: alice.token, json: { name: 'x.bin', size: 3 } })
    const id = started.body.upload_id
    const rows = (query: string, value: string) =>
      env.DB.prepare(query)
        .bind(value)
        .all()
        .then((result) => result.results)
    const state = async () => [
      await rows('SELECT * FROM storage_reservations WHERE user_id = ?', alice.id),
      await rows('SELECT * FROM uploads WHERE user_id = ?', alice.id),
      await rows('SELECT * FROM upload_parts WHERE upload_id = ?', id),
      await rows('SELECT * FROM files WHERE user_id = ?', alice.id),
    ]
    const tusPath = new URL(
      (await call('POST', '/files/tus', { token: alice.token, headers: { ...TUS, 'upload-length': '3' } })).headers.get(
        'location',
      )!,
    ).pathname
    const before = await state()
    expect((await call('POST', '/auth/logout', { token: alice.token })).status).toBeLessThan(300)
    const refused = [
      await call('POST', '/files', { token: alice.token, body: 'hello', headers: { 'x-edgefloor-name': 'a.txt' } }),
      await call('POST', '/files/uploads', { token: alice.token, json: { name: 'y.bin', size: 3 } }),
      await call('POST', '/files/tus', { token: alice.token, headers: { ...TUS, 'upload-length': '3' } }),
      await call('PUT', `/files/uploads/${id}/1`, {
        token: alice.token,
        body: 'abc',
        headers: { 'content-length': '3' },
      }),
      await call('POST', `/files/uploads/${id}/complete`, { token: alice.token }),
      await call('PATCH', tusPath, tusPatch(alice.token, 0, 'abc')),
    ]
    expect(refused.map((response) => response.status)).toEqual([401, 401, 401, 401, 401, 401])
    expect(await state()).toEqual(before)
  })
})
