// Global setup (Node): the sign-in providers the Worker's provider sign-in is tested against, on loopback.
// - A real OpenID Provider: `oidc-provider` (panva's, OpenID Certified), with one client for the Worker. Its login
//   page is replaced by a handler that signs in the account POST /test/login named for the request's state, and its
//   consent is pre-granted (loadExistingGrant), so a test drives the whole code flow with plain HTTP redirects.
// - A stand-in for what a real provider never does on request: an OpenID issuer that can answer with a forged, an
//   expired or a wrongly addressed ID token, and a plain OAuth 2.0 provider shaped like GitHub's (/login/oauth/…,
//   /user, /user/emails). Both check PKCE S256 as RFC 7636 §4.6 says a server does.
import { createHash, randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { exportJWK, generateKeyPair, SignJWT } from 'jose'
import Provider from 'oidc-provider'
import type { TestProject } from 'vitest/node'

declare module 'vitest' {
  export interface ProvidedContext {
    oidcProviderUrl: string
    oauthStandInUrl: string
  }
}

/** Where the Worker under test is reached by the test client (test/support/api.ts BASE). */
const WORKER_ORIGIN = 'http://edgefloor.test'
export const OIDC_CLIENT = { id: 'edgefloor', secret: 'edgefloor-client-secret-for-tests' }

interface Account {
  sub: string
  email?: string
  email_verified?: boolean
  name?: string
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (!address || typeof address === 'string') throw new Error('the server did not start')
  return `http://127.0.0.1:${address.port}`
}

const json = (response: ServerResponse, status: number, body: unknown) =>
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))

/** The OpenID Provider, its one client allowed back at `/auth/oauth/loopback/callback` of each origin given. */
export async function startOidcProvider(
  workerOrigins: readonly string[] = [WORKER_ORIGIN],
): Promise<{ server: Server; url: string }> {
  const accounts = new Map<string, Account>()
  /** The account to sign in, by the state of the authorization request (test files run two at a time). */
  const loginsByState = new Map<string, string>()
  const { privateKey } = await generateKeyPair('RS256', { extractable: true })
  const server = createServer()
  const url = await listen(server)
  const provider = new Provider(url, {
    clients: [
      {
        client_id: OIDC_CLIENT.id,
        client_secret: OIDC_CLIENT.secret,
        redirect_uris: workerOrigins.map((origin) => `${origin}/auth/oauth/loopback/callback`),
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    jwks: { keys: [{ ...(await exportJWK(privateKey)), kid: 'test-key', alg: 'RS256', use: 'sig' }] },
    cookies: { keys: ['test-cookie-key'] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    // The ID token carries the email claims itself (the Worker reads no userinfo for OIDC).
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    findAccount: (_ctx: unknown, sub: string) => {
      const account = accounts.get(sub)
      return account ? { accountId: sub, claims: () => ({ ...account }) } : undefined
    },
    async loadExistingGrant(ctx: any) {
      const grant = new ctx.oidc.provider.Grant({
        clientId: ctx.oidc.client.clientId,
        accountId: ctx.oidc.session.accountId,
      })
      grant.addOIDCScope('openid email profile')
      await grant.save()
      return grant
    },
  } as any)
  const callback = provider.callback()
  server.on('request', async (request, response) => {
    const path = new URL(request.url ?? '/', url).pathname
    if (request.method === 'POST' && path === '/test/login') {
      const { state, account } = JSON.parse(await readBody(request)) as { state: string; account: Account }
      accounts.set(account.sub, account)
      loginsByState.set(state, account.sub)
      return json(response, 200, { ok: true })
    }
    if (path.startsWith('/interaction/')) {
      try {
        const details = await provider.interactionDetails(request, response)
        const accountId = loginsByState.get(String(details.params.state))
        if (!accountId) return json(response, 409, { error: 'POST /test/login with this state first' })
        await provider.interactionFinished(
          request,
          response,
          { login: { accountId } },
          { mergeWithLastSubmission: false },
        )
      } catch (error) {
        json(response, 500, { error: String(error) })
      }
      return
    }
    callback(request, response)
  })
  return { server, url }
}

type IdTokenFlaw = 'none' | 'forged' | 'expired' | 'audience' | 'nonce'

/** The stand-in: an OIDC issuer whose ID tokens can be flawed on request, and a GitHub-shaped OAuth 2.0 provider. */
async function startStandIn(): Promise<{ server: Server; url: string }> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true })
  const { privateKey: strangerKey } = await generateKeyPair('RS256')
  const publicJwk = { ...(await exportJWK(publicKey)), kid: 'stand-in', alg: 'RS256', use: 'sig' }
  const grants = new Map<
    string,
    { challenge: string; nonce?: string; redirectUri: string; account: Account; flaw: IdTokenFlaw }
  >()
  const tokens = new Map<string, Account>()
  /** The account (and the flaw of its ID token) to sign in, by the state of the authorization request. */
  const loginsByState = new Map<string, { account: Account; flaw: IdTokenFlaw }>()
  const server = createServer()
  const url = await listen(server)

  async function idToken(account: Account, nonce: string | undefined, flaw: IdTokenFlaw): Promise<string> {
    const now = Math.floor(Date.now() / 1000)
    return new SignJWT({
      email: account.email,
      email_verified: account.email_verified,
      name: account.name,
      nonce: flaw === 'nonce' ? 'another-nonce' : nonce,
    })
      .setProtectedHeader({ alg: 'RS256', kid: 'stand-in' })
      .setIssuer(url)
      .setSubject(account.sub)
      .setAudience(flaw === 'audience' ? 'someone-else' : OIDC_CLIENT.id)
      .setIssuedAt(flaw === 'expired' ? now - 7200 : now)
      .setExpirationTime(flaw === 'expired' ? now - 3600 : now + 300)
      .sign(flaw === 'forged' ? strangerKey : privateKey)
  }

  server.on('request', async (request, response) => {
    const requestUrl = new URL(request.url ?? '/', url)
    const path = requestUrl.pathname
    if (request.method === 'POST' && path === '/test/login') {
      const { state, account, flaw } = JSON.parse(await readBody(request)) as {
        state: string
        account: Account
        flaw: IdTokenFlaw
      }
      loginsByState.set(state, { account, flaw })
      return json(response, 200, { ok: true })
    }
    if (path === '/.well-known/openid-configuration') {
      return json(response, 200, {
        issuer: url,
        authorization_endpoint: `${url}/authorize`,
        token_endpoint: `${url}/token`,
        jwks_uri: `${url}/jwks`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
        code_challenge_methods_supported: ['S256'],
      })
    }
    if (path === '/jwks') return json(response, 200, { keys: [publicJwk] })
    if (path === '/authorize' || path === '/login/oauth/authorize') {
      const q = requestUrl.searchParams
      if (q.get('code_challenge_method') !== 'S256' || !q.get('code_challenge'))
        return json(response, 400, { error: 'invalid_request', error_description: 'PKCE S256 required' })
      const login = loginsByState.get(q.get('state') ?? '')
      if (!login) return json(response, 409, { error: 'POST /test/login with this state first' })
      const code = randomUUID()
      grants.set(code, {
        challenge: q.get('code_challenge')!,
        nonce: q.get('nonce') ?? undefined,
        redirectUri: q.get('redirect_uri')!,
        account: login.account,
        flaw: login.flaw,
      })
      const back = new URL(q.get('redirect_uri')!)
      back.searchParams.set('code', code)
      back.searchParams.set('state', q.get('state') ?? '')
      return response.writeHead(302, { location: back.toString() }).end()
    }
    if (request.method === 'POST' && (path === '/token' || path === '/login/oauth/access_token')) {
      const form = new URLSearchParams(await readBody(request))
      const grant = grants.get(form.get('code') ?? '')
      grants.delete(form.get('code') ?? '')
      const verifier = form.get('code_verifier') ?? ''
      const challenge = createHash('sha256').update(verifier).digest('base64url')
      if (
        !grant ||
        challenge !== grant.challenge ||
        form.get('redirect_uri') !== grant.redirectUri ||
        form.get('client_secret') !== OIDC_CLIENT.secret
      ) {
        return json(response, 400, { error: 'invalid_grant' })
      }
      const accessToken = randomUUID()
      tokens.set(accessToken, grant.account)
      if (path === '/login/oauth/access_token')
        return json(response, 200, { access_token: accessToken, token_type: 'bearer', scope: 'read:user,user:email' })
      return json(response, 200, {
        access_token: accessToken,
        token_type: 'Bearer',
        expires_in: 300,
        id_token: await idToken(grant.account, grant.nonce, grant.flaw),
      })
    }
    const account = tokens.get((request.headers.authorization ?? '').replace(/^Bearer /i, ''))
    if (path === '/user')
      return account
        ? json(response, 200, {
            id: Number(account.sub),
            login: account.name ?? 'octocat',
            name: account.name ?? null,
            email: null,
          })
        : json(response, 401, { message: 'Bad credentials' })
    if (path === '/user/emails') {
      if (!account) return json(response, 401, { message: 'Bad credentials' })
      return json(
        response,
        200,
        account.email
          ? [{ email: account.email, primary: true, verified: account.email_verified === true, visibility: 'private' }]
          : [],
      )
    }
    json(response, 404, { error: 'not found' })
  })
  return { server, url }
}

export default async function setup(project: TestProject) {
  const oidc = await startOidcProvider()
  const standIn = await startStandIn()
  project.provide('oidcProviderUrl', oidc.url)
  project.provide('oauthStandInUrl', standIn.url)
  return async () => {
    await new Promise<void>((resolve) => oidc.server.close(() => resolve()))
    await new Promise<void>((resolve) => standIn.server.close(() => resolve()))
  }
}

/** The providers the Worker is configured with in tests (AUTH_OAUTH_PROVIDERS). */
export function testProviders(oidcProviderUrl: string, standInUrl: string): string {
  const secrets = { client_id: OIDC_CLIENT.id, client_secret: OIDC_CLIENT.secret, allow_insecure_http: true }
  return JSON.stringify([
    { id: 'loopback', name: 'Loopback OP', issuer: oidcProviderUrl, ...secrets },
    { id: 'standin', name: 'Stand-in OP', issuer: standInUrl, ...secrets },
    {
      id: 'octo',
      preset: 'github',
      authorization_endpoint: `${standInUrl}/login/oauth/authorize`,
      token_endpoint: `${standInUrl}/login/oauth/access_token`,
      userinfo_endpoint: `${standInUrl}/user`,
      emails_endpoint: `${standInUrl}/user/emails`,
      ...secrets,
    },
  ])
}
