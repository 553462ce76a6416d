// Sign-in with OpenID Connect and OAuth 2.0 providers through oauth4webapi (a certified OpenID relying party
// library that runs on Workers): the authorization code flow with PKCE S256, state and nonce, the ID token verified
// (issuer, audience, expiry, nonce, and its signature from the provider's JWKS). The identity it yields signs in the
// account it is linked to, links to an account only when both addresses are verified, or makes a new account. The
// app receives a one-time code, never a token in a URL. Owns oauth_states, oauth_exchanges and oauth_identities.
import { and, asc, eq, lt, sql, type SQLWrapper } from 'drizzle-orm'
import * as oauth from 'oauth4webapi'
import type { Config, OAuthProviderSettings } from '../config'
import type { Database } from '../db/client'
import { insertForUser } from '../db/guarded'
import { newId } from '../db/ids'
import { oauthExchanges, oauthIdentities, oauthStates, users } from '../db/schema'
import { ApiError } from '../errors'
import type { ValuesMap } from '../models/values'
import { sha256Hex } from './sessions'
import {
  createUser,
  findUserByEmail,
  normalizeEmail,
  signInQuery,
  toSignInRecord,
  type SignInRecord,
  type UserRecord,
} from './users'

/** How long a started sign-in may take at the provider. */
const STATE_TTL_MS = 10 * 60_000
/** How long the app has to exchange the one-time code it received. */
const EXCHANGE_TTL_MS = 60_000
/** Discovery documents are kept this long per isolate (and with them the JWKS oauth4webapi caches). */
const DISCOVERY_TTL_MS = 60 * 60_000

/** A provider as the flow uses it: its settings with the preset applied. */
export interface OAuthProvider {
  id: string
  name: string
  /** OpenID Connect: discovery, an ID token, a nonce. Otherwise plain OAuth 2.0 with a profile endpoint. */
  isOidc: boolean
  issuer: string
  authorizationEndpoint?: string | undefined
  tokenEndpoint?: string | undefined
  userinfoEndpoint?: string | undefined
  emailsEndpoint?: string | undefined
  clientId: string
  clientSecret?: string | undefined
  scopes: string[]
  /** Apple answers with a form POST when it is asked for the name or email. */
  responseMode?: 'form_post' | undefined
  allowInsecureHttp: boolean
}

/** Microsoft's tenant of personal accounts, whose issuer names its id rather than `consumers`. */
const MICROSOFT_CONSUMERS_TENANT = '9188040d-6c67-4c5b-b112-36a304b66dad'

/** The settings of a provider with its preset's issuer or endpoints, scopes and name filled in. */
export function resolveProvider(settings: OAuthProviderSettings): OAuthProvider {
  const base = {
    id: settings.id,
    clientId: settings.client_id,
    clientSecret: settings.client_secret,
    allowInsecureHttp: settings.allow_insecure_http ?? false,
    authorizationEndpoint: settings.authorization_endpoint,
    tokenEndpoint: settings.token_endpoint,
    userinfoEndpoint: settings.userinfo_endpoint,
    emailsEndpoint: settings.emails_endpoint,
  }
  const oidcScopes = settings.scopes ?? ['openid', 'email', 'profile']
  switch (settings.preset) {
    case 'google':
      return {
        ...base,
        name: settings.name ?? 'Google',
        isOidc: true,
        issuer: settings.issuer ?? 'https://accounts.google.com',
        scopes: oidcScopes,
      }
    case 'microsoft': {
      if (!settings.tenant && !settings.issuer)
        throw new ApiError('OAUTH_PROVIDER_NOT_FOUND', {
          cause: `provider ${settings.id}: the microsoft preset needs a tenant`,
        })
      const tenant = settings.tenant === 'consumers' ? MICROSOFT_CONSUMERS_TENANT : settings.tenant
      return {
        ...base,
        name: settings.name ?? 'Microsoft',
        isOidc: true,
        issuer: settings.issuer ?? `https://login.microsoftonline.com/${tenant}/v2.0`,
        scopes: oidcScopes,
      }
    }
    case 'apple':
      return {
        ...base,
        name: settings.name ?? 'Apple',
        isOidc: true,
        issuer: settings.issuer ?? 'https://appleid.apple.com',
        scopes: settings.scopes ?? ['openid', 'email', 'name'],
        responseMode: 'form_post',
      }
    case 'github':
      return {
        ...base,
        name: settings.name ?? 'GitHub',
        isOidc: false,
        issuer: settings.issuer ?? 'https://github.com',
        authorizationEndpoint: settings.authorization_endpoint ?? 'https://github.com/login/oauth/authorize',
        tokenEndpoint: settings.token_endpoint ?? 'https://github.com/login/oauth/access_token',
        userinfoEndpoint: settings.userinfo_endpoint ?? 'https://api.github.com/user',
        emailsEndpoint: settings.emails_endpoint ?? 'https://api.github.com/user/emails',
        scopes: settings.scopes ?? ['read:user', 'user:email'],
      }
    default: {
      const isOidc = !settings.authorization_endpoint
      return {
        ...base,
        name: settings.name ?? settings.id,
        isOidc,
        issuer: settings.issuer ?? settings.authorization_endpoint ?? '',
        scopes: isOidc ? oidcScopes : (settings.scopes ?? []),
      }
    }
  }
}

/** The configured provider with this id, or 404. */
export function findProvider(config: Config, id: string): OAuthProvider {
  const settings = config.AUTH_OAUTH_PROVIDERS.find((provider) => provider.id === id)
  if (!settings) throw new ApiError('OAUTH_PROVIDER_NOT_FOUND')
  return resolveProvider(settings)
}

export function listProviders(config: Config): Array<{ id: string; name: string }> {
  return config.AUTH_OAUTH_PROVIDERS.map((settings) => {
    const { id, name } = resolveProvider(settings)
    return { id, name }
  })
}

/** The app URL to return to, if AUTH_OAUTH_REDIRECT_URLS allows it: the same origin and path as one listed (the
 * query may differ, for the app's own state); 400 otherwise, before anything is started. */
export function allowedRedirect(config: Config, redirectUrl: string): string {
  const asked = URL.canParse(redirectUrl) ? new URL(redirectUrl) : undefined
  const allowed =
    asked &&
    !asked.username &&
    !asked.password &&
    config.AUTH_OAUTH_REDIRECT_URLS.some((entry) => {
      const listed = new URL(entry)
      return listed.origin === asked.origin && listed.pathname === asked.pathname
    })
  if (!allowed) throw new ApiError('OAUTH_REDIRECT_REFUSED')
  asked.hash = ''
  return asked.toString()
}

const options = (provider: OAuthProvider) => (provider.allowInsecureHttp ? { [oauth.allowInsecureRequests]: true } : {})

const discovered = new Map<string, { at: number; server: Promise<oauth.AuthorizationServer> }>()

/** The provider's authorization server: discovered (OIDC, cached per isolate) or made of its endpoints. */
async function authorizationServer(provider: OAuthProvider): Promise<oauth.AuthorizationServer> {
  if (!provider.isOidc) {
    return {
      issuer: provider.issuer,
      authorization_endpoint: provider.authorizationEndpoint,
      token_endpoint: provider.tokenEndpoint,
      userinfo_endpoint: provider.userinfoEndpoint,
    }
  }
  const cached = discovered.get(provider.issuer)
  if (cached && Date.now() - cached.at < DISCOVERY_TTL_MS) return cached.server
  const issuer = new URL(provider.issuer)
  const server = oauth
    .discoveryRequest(issuer, { algorithm: 'oidc', ...options(provider) })
    .then((response) => oauth.processDiscoveryResponse(issuer, response))
  discovered.set(provider.issuer, { at: Date.now(), server })
  server.catch(() => discovered.delete(provider.issuer))
  return server
}

const client = (provider: OAuthProvider): oauth.Client => ({ client_id: provider.clientId })
const clientAuth = (provider: OAuthProvider) =>
  provider.clientSecret ? oauth.ClientSecretPost(provider.clientSecret) : oauth.None()

export function callbackUrl(origin: string, provider: OAuthProvider): string {
  return `${origin}/auth/oauth/${provider.id}/callback`
}

/**
 * Starts a sign-in (or, with `linkUserId`, linking the provider to a signed-in account): stores the state, nonce and
 * PKCE verifier for one use, and answers the provider's authorization URL.
 */
export async function startAuthorization(
  db: Database,
  provider: OAuthProvider,
  input: { origin: string; redirectUrl: string; linkUserId?: string },
): Promise<string> {
  let server: oauth.AuthorizationServer
  try {
    server = await authorizationServer(provider)
  } catch (error) {
    throw new ApiError('OAUTH_PROVIDER_UNAVAILABLE', { cause: error })
  }
  if (!server.authorization_endpoint)
    throw new ApiError('OAUTH_PROVIDER_UNAVAILABLE', { cause: `provider ${provider.id} has no authorization endpoint` })
  const state = oauth.generateRandomState()
  const codeVerifier = oauth.generateRandomCodeVerifier()
  const nonce = provider.isOidc ? oauth.generateRandomNonce() : null
  const now = Date.now()
  await db.batch([
    db.delete(oauthStates).where(lt(oauthStates.expiresAt, now)),
    db.insert(oauthStates).values({
      stateHash: await sha256Hex(state),
      provider: provider.id,
      codeVerifier,
      nonce,
      redirectUrl: input.redirectUrl,
      linkUserId: input.linkUserId ?? null,
      expiresAt: now + STATE_TTL_MS,
    }),
  ])
  const url = new URL(server.authorization_endpoint)
  url.searchParams.set('client_id', provider.clientId)
  url.searchParams.set('redirect_uri', callbackUrl(input.origin, provider))
  url.searchParams.set('response_type', 'code')
  url.searchParams.set('scope', provider.scopes.join(' '))
  url.searchParams.set('state', state)
  url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(codeVerifier))
  url.searchParams.set('code_challenge_method', 'S256')
  if (nonce) url.searchParams.set('nonce', nonce)
  if (provider.responseMode) url.searchParams.set('response_mode', provider.responseMode)
  return url.toString()
}

export type StartedAuthorization = typeof oauthStates.$inferSelect

/** Takes the started sign-in a callback's `state` names, once: unknown, spent, expired or another provider's is 400. */
export async function takeAuthorization(
  db: Database,
  provider: OAuthProvider,
  state: string | undefined,
): Promise<StartedAuthorization> {
  if (!state || state.length > 512) throw new ApiError('OAUTH_STATE_INVALID')
  const [taken] = await db
    .delete(oauthStates)
    .where(eq(oauthStates.stateHash, await sha256Hex(state)))
    .returning()
  if (!taken || taken.provider !== provider.id || taken.expiresAt <= Date.now())
    throw new ApiError('OAUTH_STATE_INVALID')
  return taken
}

/** Who the provider says signed in. */
export interface ProviderIdentity {
  subject: string
  email?: string | undefined
  emailVerified: boolean
  name?: string | undefined
}

/**
 * Finishes the code flow at the provider. Checks the authorization response (state, RFC 9207 `iss`, errors), then
 * exchanges the code with the PKCE verifier. For OIDC, validates the ID token (iss, aud, exp, iat, nonce) and its
 * signature against the provider's JWKS. Any failure is OAUTH_FAILED, its cause logged.
 */
export async function finishAuthorization(
  provider: OAuthProvider,
  started: StartedAuthorization,
  parameters: URLSearchParams,
  state: string,
  origin: string,
): Promise<ProviderIdentity> {
  try {
    const server = await authorizationServer(provider)
    const validated = oauth.validateAuthResponse(server, client(provider), parameters, state)
    const response = await oauth.authorizationCodeGrantRequest(
      server,
      client(provider),
      clientAuth(provider),
      validated,
      callbackUrl(origin, provider),
      started.codeVerifier,
      options(provider),
    )
    if (provider.isOidc) {
      const result = await oauth.processAuthorizationCodeResponse(server, client(provider), response, {
        expectedNonce: started.nonce ?? undefined,
        requireIdToken: true,
      })
      await oauth.validateApplicationLevelSignature(server, response, options(provider))
      const claims = oauth.getValidatedIdTokenClaims(result)!
      return {
        subject: claims.sub,
        email: typeof claims.email === 'string' ? claims.email : undefined,
        // Apple sends the flag as the string "true".
        emailVerified: claims.email_verified === true || claims.email_verified === 'true',
        name: typeof claims.name === 'string' ? claims.name : undefined,
      }
    }
    const result = await oauth.processAuthorizationCodeResponse(server, client(provider), response)
    return await plainProfile(provider, result.access_token)
  } catch (error) {
    if (error instanceof ApiError) throw error
    throw new ApiError('OAUTH_FAILED', { cause: error })
  }
}

/** A plain OAuth 2.0 provider's profile: its user endpoint (id or sub, email, email_verified) and, for GitHub, the
 * address list, whose primary verified address is the one taken. */
async function plainProfile(provider: OAuthProvider, accessToken: string): Promise<ProviderIdentity> {
  if (!provider.userinfoEndpoint)
    throw new ApiError('OAUTH_FAILED', { cause: `provider ${provider.id} has no userinfo_endpoint` })
  const get = async (url: string) => {
    const response = await oauth.protectedResourceRequest(
      accessToken,
      'GET',
      new URL(url),
      new Headers({ accept: 'application/json', 'user-agent': 'edgefloor' }),
      null,
      options(provider),
    )
    if (!response.ok) throw new Error(`${url} answered ${response.status}`)
    return response.json<unknown>()
  }
  const profile = (await get(provider.userinfoEndpoint)) as Record<string, unknown>
  const subject = profile.sub ?? profile.id
  if ((typeof subject !== 'string' && typeof subject !== 'number') || String(subject) === '')
    throw new Error('the profile has no id')
  let email = typeof profile.email === 'string' ? profile.email : undefined
  let emailVerified = profile.email_verified === true
  if (provider.emailsEndpoint) {
    const emails = (await get(provider.emailsEndpoint)) as Array<{
      email?: unknown
      primary?: unknown
      verified?: unknown
    }>
    const primary = Array.isArray(emails)
      ? emails.find((entry) => entry.primary === true && entry.verified === true && typeof entry.email === 'string')
      : undefined
    if (primary) {
      email = primary.email as string
      emailVerified = true
    }
  }
  const name =
    typeof profile.name === 'string' ? profile.name : typeof profile.login === 'string' ? profile.login : undefined
  return { subject: String(subject), email, emailVerified, name }
}

export type OAuthIdentityRow = typeof oauthIdentities.$inferSelect

/**
 * The account this identity signs in to, and a one-time code for the app to exchange for its session. In order:
 * - the account it is linked to;
 * - the signed-in account that asked to link it;
 * - the account with its address, linked only when the provider says the address is verified and the account has
 *   verified it too;
 * - a new account (AUTH_DEFAULT_ROLE), verified when the provider says so.
 *
 * A returning identity (linked already) is one round trip: the account read, its last use and the code written
 * only if it is linked (to the account that asked to link it, when one did).
 */
export async function signInWithIdentity(
  db: Database,
  config: Config,
  usersModel: ValuesMap,
  provider: OAuthProvider,
  identity: ProviderIdentity,
  linkUserId: string | null,
): Promise<{ user: UserRecord; code: string }> {
  const ofIdentity = and(eq(oauthIdentities.provider, provider.id), eq(oauthIdentities.subject, identity.subject))
  const ofLinkedIdentity = linkUserId ? and(ofIdentity, eq(oauthIdentities.userId, linkUserId)) : ofIdentity
  const exchange = await exchangeCodeWrites(
    db,
    db.select({ userId: oauthIdentities.userId }).from(oauthIdentities).where(ofLinkedIdentity),
  )
  const [[linked]] = await db.batch([
    db
      .select()
      .from(users)
      .where(eq(users.id, db.select({ userId: oauthIdentities.userId }).from(oauthIdentities).where(ofIdentity)))
      .limit(1),
    db.update(oauthIdentities).set({ lastUsedAt: Date.now() }).where(ofLinkedIdentity),
    ...exchange.statements,
  ])
  if (linked) {
    if (linkUserId && linked.id !== linkUserId) throw new ApiError('OAUTH_IDENTITY_TAKEN')
    return { user: linked, code: exchange.code }
  }
  const user = await accountForNewIdentity(db, config, usersModel, provider, identity, linkUserId)
  return { user, code: await issueExchangeCode(db, user.id) }
}

/** The account an identity linked to none signs in to (signInWithIdentity). */
async function accountForNewIdentity(
  db: Database,
  config: Config,
  usersModel: ValuesMap,
  provider: OAuthProvider,
  identity: ProviderIdentity,
  linkUserId: string | null,
): Promise<UserRecord> {
  if (linkUserId) {
    const user = await db.query.users.findFirst({ where: eq(users.id, linkUserId) })
    if (!user) throw new ApiError('USER_NOT_FOUND')
    await linkIdentity(db, user.id, provider, identity)
    return user
  }
  if (!identity.email) throw new ApiError('OAUTH_EMAIL_REQUIRED')
  const existing = await findUserByEmail(db, identity.email)
  if (existing) {
    // Never silently: an unverified address on either side could belong to someone else.
    if (!identity.emailVerified || !existing.emailVerified) throw new ApiError('OAUTH_ACCOUNT_EXISTS')
    await linkIdentity(db, existing.id, provider, identity)
    return existing
  }
  if (!config.AUTH_REGISTRATION_ENABLED) throw new ApiError('REGISTRATION_DISABLED')
  // The account has no password: its user may set one through the password reset email, or PUT /auth/user after a
  // fresh sign-in (docs/accounts.md, Self-service).
  const user = await createUser(db, usersModel, {
    email: normalizeEmail(identity.email),
    password: null,
    name: identity.name?.slice(0, 200).replace(/[\p{Cc}\u2028\u2029]/gu, ''),
    values: {},
    role: config.AUTH_DEFAULT_ROLE,
    emailVerified: identity.emailVerified,
  })
  await linkIdentity(db, user.id, provider, identity)
  return user
}

async function linkIdentity(
  db: Database,
  userId: string,
  provider: OAuthProvider,
  identity: ProviderIdentity,
): Promise<void> {
  const now = Date.now()
  const inserted = await db
    .insert(oauthIdentities)
    .values({
      id: newId(now),
      userId,
      provider: provider.id,
      subject: identity.subject,
      email: identity.email?.slice(0, 254) ?? '',
      createdAt: now,
      lastUsedAt: now,
    })
    .onConflictDoNothing()
    .returning({ id: oauthIdentities.id })
  if (inserted.length === 0) throw new ApiError('OAUTH_IDENTITY_TAKEN')
}

function newOneTimeCode(): string {
  return oauth.generateRandomState()
}

/** A one-time code for the app to exchange for the account's session within a minute. */
async function issueExchangeCode(db: Database, userId: string): Promise<string> {
  const exchange = await exchangeCodeWrites(db, userId)
  await db.batch(exchange.statements)
  return exchange.code
}

/** The writes that store a one-time code for the account (`userId`, or a subquery naming it: nothing is stored when it
 * names none), for a batch; and the code. */
async function exchangeCodeWrites(db: Database, userId: string | SQLWrapper) {
  const code = newOneTimeCode()
  const now = Date.now()
  const row = { codeHash: await sha256Hex(code), userId: '', expiresAt: now + EXCHANGE_TTL_MS }
  const statements = [
    db.delete(oauthExchanges).where(lt(oauthExchanges.expiresAt, now)),
    typeof userId === 'string'
      ? db.insert(oauthExchanges).values({ ...row, userId })
      : insertForUser(
          db,
          oauthExchanges,
          { ...row, userId: sql`${users.id}` as unknown as string },
          userId,
          sql`1 = 1`,
        ),
  ] as const
  return { code, statements }
}

/** The account a one-time code was issued for, spending it, in one round trip; 401 when unknown, spent or expired,
 * or its account is gone. */
export async function redeemExchangeCode(db: Database, code: string): Promise<SignInRecord> {
  const codeHash = await sha256Hex(code)
  const [[account], [taken]] = await db.batch([
    signInQuery(
      db,
      eq(
        users.id,
        db.select({ userId: oauthExchanges.userId }).from(oauthExchanges).where(eq(oauthExchanges.codeHash, codeHash)),
      ),
    ),
    db.delete(oauthExchanges).where(eq(oauthExchanges.codeHash, codeHash)).returning(),
  ])
  if (!taken || taken.expiresAt <= Date.now()) throw new ApiError('TOKEN_INVALID')
  const user = toSignInRecord(account)
  if (!user) throw new ApiError('TOKEN_INVALID')
  return user
}

export function listIdentities(db: Database, userId: string) {
  return db.query.oauthIdentities.findMany({
    where: eq(oauthIdentities.userId, userId),
    orderBy: asc(oauthIdentities.id),
    limit: 100,
  })
}

/** Unlinks one of the user's identities; false when it is not theirs. */
export async function unlinkIdentity(db: Database, userId: string, id: string): Promise<boolean> {
  const deleted = await db
    .delete(oauthIdentities)
    .where(and(eq(oauthIdentities.id, id), eq(oauthIdentities.userId, userId)))
    .returning({ id: oauthIdentities.id })
  return deleted.length > 0
}
