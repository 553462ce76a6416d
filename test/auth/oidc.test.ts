// Sign-in with providers: the whole OpenID Connect code flow against a real OpenID Provider on loopback
// (oidc-provider), a plain OAuth 2.0 provider shaped like GitHub's, and the hostile cases: a wrong state, replayed
// codes, forged, expired and misaddressed ID tokens, and addresses that must not link accounts. References: OpenID
// Connect Core 1.0 §3.1.3.7 (ID token validation: iss, aud, signature, exp, nonce), RFC 7636 (PKCE S256), RFC 6749
// §10.12 (state against CSRF), §4.1.2 (a code is used once).
import { env } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { call, callJson } from '../support/api'
import { signUp, uniqueEmail } from '../support/accounts'
import { APP_URL, backToApp, exchange, loginAt, signInThrough, startSignIn, throughProvider } from '../support/oauth'
import { totp, base32Decode } from '../../worker/auth/otp'

const subject = () => crypto.randomUUID()
const userCount = (email: string) =>
  env.DB.prepare('select count(*) as n from users where email = ?').bind(email).first<number>('n')
const identityCount = (provider: string, sub: string) =>
  env.DB.prepare('select count(*) as n from oauth_identities where provider = ? and subject = ?')
    .bind(provider, sub)
    .first<number>('n')

/** An account whose address is verified (as POST /auth/verify leaves it; test/auth/verify-reset.test.ts tests that). */
async function verifiedUser() {
  const user = await signUp()
  await env.DB.prepare('update users set email_verified = 1 where id = ?').bind(user.id).run()
  return user
}

describe('OpenID Connect sign-in against a real OpenID Provider (oidc-provider on loopback)', () => {
  it('asks with PKCE S256, state and nonce; a first sign-in creates the account, a later one signs in to it', async () => {
    const email = uniqueEmail('oidc')
    const sub = subject()
    const authorization = await startSignIn('loopback')
    await loginAt(authorization, { sub, email, email_verified: true, name: 'Ada Lovelace' })
    const asked = Object.fromEntries(authorization.searchParams)
    expect(asked).toMatchObject({
      client_id: 'edgefloor',
      response_type: 'code',
      scope: 'openid email profile',
      code_challenge_method: 'S256',
      redirect_uri: 'http://edgefloor.test/auth/oauth/loopback/callback',
    })
    expect(asked.state).toMatch(/^[\w-]{40,}$/)
    expect(asked.nonce).toMatch(/^[\w-]{40,}$/)
    expect(asked.code_challenge).toMatch(/^[\w-]{43}$/)

    const app = await backToApp(await throughProvider(authorization.toString()))
    expect(app.origin + app.pathname).toBe(APP_URL)
    const code = app.searchParams.get('code')!
    expect(code).toBeTruthy()
    expect(app.searchParams.has('token')).toBe(false)

    const session = await exchange(code)
    expect(session.status).toBe(200)
    expect(session.body).toMatchObject({
      token: expect.any(String),
      refresh_token: expect.any(String),
      user: { email, name: 'Ada Lovelace', role: 'user' },
    })
    const me = await callJson('GET', '/auth/user', { token: session.body.token })
    expect(me.body).toMatchObject({ email, email_verified: true })
    const identities = await callJson('GET', '/auth/identities', { token: session.body.token })
    expect(identities.body).toEqual([
      {
        _id: expect.any(String),
        provider: 'loopback',
        email,
        created_at: expect.any(String),
        last_used_at: expect.any(String),
      },
    ])

    // The one-time code works once.
    expect(await exchange(code)).toMatchObject({ status: 401, body: { code: 'TOKEN_INVALID' } })

    const again = await exchange(
      (await signInThrough('loopback', { sub, email, email_verified: true })).searchParams.get('code')!,
    )
    expect(again.body.user._id).toBe(session.body.user._id)
    expect(await userCount(email)).toBe(1)
  })

  it('refuses a wrong state, a replayed callback and a callback of another provider', async () => {
    const authorization = await startSignIn('loopback')
    await loginAt(authorization, { sub: subject(), email: uniqueEmail('oidc'), email_verified: true })
    const callbackPath = await throughProvider(authorization.toString())
    const tampered = callbackPath.replace(/state=([^&]+)/, 'state=forged-state-value-of-enough-length')
    expect(await callJson('GET', tampered)).toMatchObject({ status: 400, body: { code: 'OAUTH_STATE_INVALID' } })
    expect(await callJson('GET', callbackPath.replace('/loopback/', '/standin/'))).toMatchObject({
      status: 400,
      body: { code: 'OAUTH_STATE_INVALID' },
    })
    expect(await callJson('GET', '/auth/oauth/loopback/callback?code=x')).toMatchObject({
      status: 400,
      body: { code: 'OAUTH_STATE_INVALID' },
    })
    // The state of the other provider's attempt was spent by that attempt: the callback cannot be replayed.
    expect(await callJson('GET', callbackPath)).toMatchObject({ status: 400, body: { code: 'OAUTH_STATE_INVALID' } })
  })

  it('links an address the provider verified to an account only when the account verified it too', async () => {
    const verified = await verifiedUser()
    const sub = subject()
    const linked = await exchange(
      (await signInThrough('loopback', { sub, email: verified.email, email_verified: true })).searchParams.get('code')!,
    )
    expect(linked.body.user._id).toBe(verified.id)

    const unverified = await signUp()
    const refused = await signInThrough('loopback', { sub: subject(), email: unverified.email, email_verified: true })
    expect(Object.fromEntries(refused.searchParams)).toEqual({
      error: 'OAUTH_ACCOUNT_EXISTS',
      error_description: 'an account with this email exists; sign in to it and link the provider there',
    })
  })

  it('never links an address the provider did not verify, even to a verified account', async () => {
    const victim = await verifiedUser()
    const sub = subject()
    const refused = await signInThrough('loopback', { sub, email: victim.email, email_verified: false })
    expect(refused.searchParams.get('error')).toBe('OAUTH_ACCOUNT_EXISTS')
    expect(refused.searchParams.has('code')).toBe(false)
    expect(await identityCount('loopback', sub)).toBe(0)
  })

  it('links a provider to the signed-in account, lists it, refuses it to another account, and unlinks it', async () => {
    const user = await signUp()
    const sub = subject()
    const link = await callJson('POST', '/auth/oauth/loopback/link', {
      token: user.token,
      json: { redirect_url: APP_URL },
    })
    expect(link.status).toBe(200)
    await loginAt(link.body.authorization_url, { sub, email: uniqueEmail('other-address'), email_verified: true })
    const back = await backToApp(await throughProvider(link.body.authorization_url))
    expect(Object.fromEntries(back.searchParams)).toEqual({ linked: 'loopback' })
    const [identity] = (await callJson('GET', '/auth/identities', { token: user.token })).body
    expect(identity).toMatchObject({ provider: 'loopback' })

    expect(
      (
        await exchange(
          (
            await signInThrough('loopback', { sub, email: uniqueEmail('x'), email_verified: true })
          ).searchParams.get('code')!,
        )
      ).body.user._id,
    ).toBe(user.id)

    const other = await signUp()
    const stolen = await callJson('POST', '/auth/oauth/loopback/link', {
      token: other.token,
      json: { redirect_url: APP_URL },
    })
    await loginAt(stolen.body.authorization_url, { sub, email: uniqueEmail('x'), email_verified: true })
    expect((await backToApp(await throughProvider(stolen.body.authorization_url))).searchParams.get('error')).toBe(
      'OAUTH_IDENTITY_TAKEN',
    )

    expect(await callJson('DELETE', `/auth/identities/${identity!._id}`, { token: other.token })).toMatchObject({
      status: 404,
      body: { code: 'IDENTITY_NOT_FOUND' },
    })
    expect(await callJson('DELETE', `/auth/identities/${identity!._id}`, { token: user.token })).toMatchObject({
      status: 200,
      body: { message: 'the provider was unlinked' },
    })
    expect((await callJson('GET', '/auth/identities', { token: user.token })).body).toEqual([])
  })

  it('asks an account with a second factor for it after the exchange', async () => {
    const email = uniqueEmail('oidc-2fa')
    const sub = subject()
    const session = await exchange(
      (await signInThrough('loopback', { sub, email, email_verified: true })).searchParams.get('code')!,
    )
    const started = await callJson('POST', '/auth/totp', { token: session.body.token })
    const secret = base32Decode(started.body.secret)!
    expect(
      (
        await call('POST', '/auth/totp/confirm', {
          token: session.body.token,
          json: { code: await totp(secret, Date.now() / 1000) },
        })
      ).status,
    ).toBe(200)
    const second = await exchange(
      (await signInThrough('loopback', { sub, email, email_verified: true })).searchParams.get('code')!,
    )
    expect(second).toMatchObject({
      status: 401,
      body: { code: 'SECOND_FACTOR_REQUIRED', second_factor_token: expect.any(String) },
    })
    expect(second.body).not.toHaveProperty('token')
  })
})

describe('ID tokens that must be refused (the stand-in issuer)', () => {
  it('signs in with a sound ID token', async () => {
    const email = uniqueEmail('standin')
    const session = await exchange(
      (await signInThrough('standin', { sub: subject(), email, email_verified: true })).searchParams.get('code')!,
    )
    expect(session).toMatchObject({ status: 200, body: { user: { email } } })
  })

  it.each(['forged', 'expired', 'audience', 'nonce'] as const)(
    'refuses an ID token that is %s, and creates nothing',
    async (flaw) => {
      const email = uniqueEmail(`flaw-${flaw}`)
      const back = await signInThrough('standin', { sub: subject(), email, email_verified: true }, flaw)
      expect(Object.fromEntries(back.searchParams)).toEqual({
        error: 'OAUTH_FAILED',
        error_description: "the provider's answer could not be verified",
      })
      expect(await userCount(email)).toBe(0)
    },
  )

  it("refuses a provider's error answer and a callback without a code", async () => {
    const authorization = await startSignIn('standin')
    const state = authorization.searchParams.get('state')!
    const denied = await backToApp(`/auth/oauth/standin/callback?error=access_denied&state=${state}`)
    expect(denied.searchParams.get('error')).toBe('OAUTH_FAILED')
    const another = (await startSignIn('standin')).searchParams.get('state')!
    expect((await backToApp(`/auth/oauth/standin/callback?state=${another}`)).searchParams.get('error')).toBe(
      'OAUTH_FAILED',
    )
  })

  it('takes the callback as a form post (response_mode=form_post), and refuses an oversized form', async () => {
    const email = uniqueEmail('form-post')
    const authorization = await startSignIn('standin')
    await loginAt(authorization, { sub: subject(), email, email_verified: true })
    const callbackPath = await throughProvider(authorization.toString())
    const [path, query] = callbackPath.split('?')
    const res = await call('POST', path!, {
      body: query,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
    expect(res.status).toBe(302)
    const code = new URL(res.headers.get('location')!).searchParams.get('code')!
    expect((await exchange(code)).body.user.email).toBe(email)
    const big = await callJson('POST', path!, {
      body: `state=${'a'.repeat(20_000)}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
    expect(big).toMatchObject({ status: 413, body: { code: 'BODY_TOO_LARGE' } })
  })
})

describe('plain OAuth 2.0 sign-in (a GitHub-shaped stand-in)', () => {
  it("creates the account from the primary verified address of GitHub's /user/emails", async () => {
    const email = uniqueEmail('octo')
    const authorization = await startSignIn('octo')
    await loginAt(authorization, {
      sub: String(Math.floor(Math.random() * 1e9)),
      email,
      email_verified: true,
      name: 'Octo Cat',
    })
    expect(authorization.pathname).toBe('/login/oauth/authorize')
    expect(authorization.searchParams.get('scope')).toBe('read:user user:email')
    expect(authorization.searchParams.has('nonce')).toBe(false)
    const session = await exchange(
      (await backToApp(await throughProvider(authorization.toString()))).searchParams.get('code')!,
    )
    expect(session).toMatchObject({ status: 200, body: { user: { email, name: 'Octo Cat' } } })
    expect((await callJson('GET', '/auth/user', { token: session.body.token })).body.email_verified).toBe(true)
  })

  it('refuses an account whose only address is unverified', async () => {
    const email = uniqueEmail('octo-unverified')
    expect(
      (
        await signInThrough('octo', { sub: String(Math.floor(Math.random() * 1e9)), email, email_verified: false })
      ).searchParams.get('error'),
    ).toBe('OAUTH_EMAIL_REQUIRED')
    expect(await userCount(email)).toBe(0)
  })
})

describe('starting a sign-in', () => {
  it('lists the providers', async () => {
    expect((await callJson('GET', '/auth/oauth')).body).toEqual([
      { id: 'loopback', name: 'Loopback OP' },
      { id: 'standin', name: 'Stand-in OP' },
      { id: 'octo', name: 'GitHub' },
    ])
  })

  it('refuses a redirect_url not allowed, an unknown provider, and bad exchange codes', async () => {
    for (const url of [
      'https://evil.example/signed-in',
      'https://app.example.com/other',
      'https://user:pw@app.example.com/signed-in',
      'javascript:alert(1)',
      'not a url',
    ]) {
      const res = await callJson('GET', `/auth/oauth/loopback?redirect_url=${encodeURIComponent(url)}`)
      expect(res, url).toMatchObject({ status: 400, body: { code: 'OAUTH_REDIRECT_REFUSED' } })
    }
    expect(await callJson('GET', `/auth/oauth/nobody?redirect_url=${encodeURIComponent(APP_URL)}`)).toMatchObject({
      status: 404,
      body: { code: 'OAUTH_PROVIDER_NOT_FOUND' },
    })
    expect(await callJson('GET', '/auth/oauth/loopback')).toMatchObject({
      status: 400,
      body: { code: 'VALIDATION_FAILED' },
    })
    expect(await exchange('made-up-code-of-enough-length')).toMatchObject({
      status: 401,
      body: { code: 'TOKEN_INVALID' },
    })
    expect(await callJson('POST', '/auth/oauth/exchange', { json: { code: 1 } })).toMatchObject({ status: 400 })
  })

  it("keeps the app's own query parameters on the way back", async () => {
    const authorization = await startSignIn('standin', `${APP_URL}?app_state=xyz`)
    await loginAt(authorization, { sub: subject(), email: uniqueEmail('query'), email_verified: true })
    const callbackPath = await throughProvider(authorization.toString())
    const back = await backToApp(callbackPath)
    expect(back.searchParams.get('app_state')).toBe('xyz')
    expect(back.searchParams.get('code')).toBeTruthy()
  })
})
