// Provider sign-in endpoints: the providers, starting a sign-in (a redirect to the provider) or a link (its URL),
// the provider's callback (a redirect back to the app with a one-time code, or with an error), exchanging the code
// for a session, and the caller's linked providers.
import { z } from '@hono/zod-openapi'
import type { Context } from 'hono'
import { describeRoute, errorResponse, jsonBody, jsonResponse, newRouter, securedRoute, type AppEnv, Id } from '../api'
import { iso } from '../db/times'
import { ApiError } from '../errors'
import { models } from '../models/resources'
import type { ValuesMap } from '../models/values'
import { authorizedBatch, callerId, requireAuth } from './middleware'
import {
  allowedRedirect,
  findProvider,
  finishAuthorization,
  listIdentities,
  listProviders,
  redeemExchangeCode,
  signInWithIdentity,
  startAuthorization,
  takeAuthorization,
  unlinkIdentity,
} from './oidc'
import { clientAddress, enforceRateLimit } from './rate-limit'
import { LoginUser, openSession, Session } from './routes'
import { requireSecondStep } from './totp'
import { loginShape } from './users'

const tags = ['Sign-in providers']
const ProviderParam = z.object({
  provider: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]{0,31}$/)
    .openapi({ example: 'google' }),
})
const RedirectUrl = z.string().max(2048).openapi({
  example: 'https://app.example.com/signed-in',
  description: 'one of AUTH_OAUTH_REDIRECT_URLS (its query may differ)',
})
const redirectResponse = (description: string) => ({ description, headers: z.object({ location: z.string() }) })

/** Form posts (Apple's callback) are small: a code, a state, a user object. */
const FORM_MAX_BYTES = 16 * 1024

const providersRoute = describeRoute({
  tags,
  method: 'get',
  path: '/auth/oauth',
  summary: 'The sign-in providers, for the buttons of a sign-in page',
  responses: { 200: jsonResponse(z.array(z.object({ id: z.string(), name: z.string() })), 'The providers') },
})

const startRoute = describeRoute({
  tags,
  method: 'get',
  path: '/auth/oauth/{provider}',
  summary:
    'Sign in with a provider: redirects to it; it comes back to redirect_url with ?code= (POST /auth/oauth/exchange) or ?error=',
  request: { params: ProviderParam, query: z.object({ redirect_url: RedirectUrl }) },
  responses: {
    302: redirectResponse("To the provider's authorization page"),
    429: errorResponse('Too many attempts'),
    502: errorResponse('The provider could not be reached'),
  },
})

const linkRoute = securedRoute(tags, {
  method: 'post',
  path: '/auth/oauth/{provider}/link',
  summary:
    "Link a provider to the caller's account: open authorization_url in the browser; it comes back to redirect_url",
  middleware: [requireAuth()] as const,
  request: { params: ProviderParam, body: jsonBody(z.strictObject({ redirect_url: RedirectUrl })) },
  responses: {
    200: jsonResponse(z.object({ authorization_url: z.string() }), 'Where to send the browser'),
    403: errorResponse('An API key cannot link'),
    502: errorResponse('The provider could not be reached'),
  },
})

const callbackDescription = {
  summary: "The provider's return (its redirect_uri): to redirect_url with ?code=, or ?error=CODE&error_description=",
  responses: {
    302: redirectResponse('Back to the app'),
    400: errorResponse('Unknown, used or expired state (OAUTH_STATE_INVALID)'),
  },
}

const callbackRoute = describeRoute({
  tags,
  method: 'get',
  path: '/auth/oauth/{provider}/callback',
  ...callbackDescription,
  request: { params: ProviderParam },
})

const formCallbackRoute = describeRoute({
  tags,
  method: 'post',
  path: '/auth/oauth/{provider}/callback',
  description: 'The same as GET, for providers that answer with response_mode=form_post (Apple).',
  ...callbackDescription,
  request: { params: ProviderParam },
})

const exchangeRoute = describeRoute({
  tags,
  method: 'post',
  path: '/auth/oauth/exchange',
  summary: 'Exchange the one-time code of a provider sign-in (within a minute, once) for a session',
  request: { body: jsonBody(z.strictObject({ code: z.string().min(10).max(200) })) },
  responses: {
    200: jsonResponse(Session.extend({ user: LoginUser }), 'Signed in'),
    401: errorResponse('Unknown, used or expired code (TOKEN_INVALID); or SECOND_FACTOR_REQUIRED'),
    403: errorResponse('Email not verified'),
    429: errorResponse('Too many attempts'),
  },
})

const IdentityView = z
  .object({
    _id: z.string(),
    provider: z.string(),
    email: z.string(),
    created_at: z.string(),
    last_used_at: z.string(),
  })
  .openapi('LinkedProvider')

const identitiesRoute = securedRoute(tags, {
  method: 'get',
  path: '/auth/identities',
  summary: "The providers linked to the caller's account",
  middleware: [requireAuth({ sharesRoundTrip: true })] as const,
  responses: {
    200: jsonResponse(z.array(IdentityView), 'The linked providers'),
    403: errorResponse('An API key cannot list them'),
  },
})

const unlinkRoute = securedRoute(tags, {
  method: 'delete',
  path: '/auth/identities/{id}',
  summary: 'Unlink a provider: it no longer signs in to this account',
  middleware: [requireAuth()] as const,
  request: { params: z.object({ id: Id }) },
  responses: {
    200: jsonResponse(z.object({ message: z.string() }), 'Unlinked'),
    403: errorResponse('An API key cannot unlink'),
    404: errorResponse('Not a linked provider of yours'),
  },
})

function limitStarts(c: Context<AppEnv>, action: string) {
  return enforceRateLimit(c.env.RATE_LIMITER, c.var.config, [
    `${action}:ip:${clientAddress(c.var.config, c.req.raw.headers)}`,
  ])
}

/** The callback's parameters: the query, or a small form body (response_mode=form_post). */
async function callbackParameters(c: Context<AppEnv>): Promise<URLSearchParams> {
  if (c.req.method === 'GET') return new URL(c.req.url).searchParams
  if (!c.req.header('content-type')?.toLowerCase().startsWith('application/x-www-form-urlencoded'))
    throw new ApiError('CONTENT_TYPE_UNSUPPORTED')
  const reader = c.req.raw.body?.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  while (reader) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > FORM_MAX_BYTES) {
      await reader.cancel()
      throw new ApiError('BODY_TOO_LARGE', {
        message: `the form is larger than ${FORM_MAX_BYTES} bytes`,
        details: { max_bytes: FORM_MAX_BYTES },
      })
    }
    chunks.push(value)
  }
  return new URLSearchParams(new TextDecoder().decode(await new Blob(chunks).arrayBuffer()))
}

/** The app URL with these parameters added to its own. */
function withParameters(url: string, parameters: Record<string, string>): string {
  const target = new URL(url)
  for (const [name, value] of Object.entries(parameters)) target.searchParams.set(name, value)
  return target.toString()
}

async function handleCallback(c: Context<AppEnv>, usersModel: ValuesMap) {
  const provider = findProvider(c.var.config, c.req.param('provider') ?? '')
  const parameters = await callbackParameters(c)
  const state = parameters.get('state') ?? undefined
  const started = await takeAuthorization(c.var.db, provider, state)
  const origin = new URL(c.req.url).origin
  try {
    const identity = await finishAuthorization(provider, started, parameters, state!, origin)
    const { code } = await signInWithIdentity(
      c.var.db,
      c.var.config,
      usersModel,
      provider,
      identity,
      started.linkUserId,
    )
    return c.redirect(withParameters(started.redirectUrl, started.linkUserId ? { linked: provider.id } : { code }), 302)
  } catch (error) {
    if (!(error instanceof ApiError)) throw error
    if (error.status >= 500 || error.code === 'OAUTH_FAILED') {
      console.error(
        JSON.stringify({
          level: 'warn',
          event: 'oauth_failed',
          provider: provider.id,
          code: error.code,
          cause: String(error.cause ?? ''),
        }),
      )
    }
    return c.redirect(withParameters(started.redirectUrl, { error: error.code, error_description: error.message }), 302)
  }
}

export function oidcRoutes(usersModel: ValuesMap = models.Users.values) {
  return newRouter()
    .openapi(providersRoute, (c) => c.json(listProviders(c.var.config), 200))
    .openapi(exchangeRoute, async (c) => {
      await limitStarts(c, 'oauth-exchange')
      const user = await redeemExchangeCode(c.var.db, c.req.valid('json').code)
      if (c.var.config.AUTH_REQUIRE_EMAIL_VERIFICATION && !user.emailVerified) throw new ApiError('EMAIL_NOT_VERIFIED')
      await requireSecondStep(c.var.config, user)
      return c.json({ ...(await openSession(c, user)), user: loginShape(user) }, 200)
    })
    .openapi(startRoute, async (c) => {
      const provider = findProvider(c.var.config, c.req.valid('param').provider)
      const redirectUrl = allowedRedirect(c.var.config, c.req.valid('query').redirect_url)
      await limitStarts(c, 'oauth-start')
      return c.redirect(
        await startAuthorization(c.var.db, provider, { origin: new URL(c.req.url).origin, redirectUrl }),
        302,
      )
    })
    .openapi(linkRoute, async (c) => {
      const provider = findProvider(c.var.config, c.req.valid('param').provider)
      const redirectUrl = allowedRedirect(c.var.config, c.req.valid('json').redirect_url)
      await limitStarts(c, 'oauth-start')
      const url = await startAuthorization(c.var.db, provider, {
        origin: new URL(c.req.url).origin,
        redirectUrl,
        linkUserId: c.var.user.id,
      })
      return c.json({ authorization_url: url }, 200)
    })
    .openapi(callbackRoute, (c) => handleCallback(c, usersModel))
    .openapi(formCallbackRoute, (c) => handleCallback(c, usersModel))
    .openapi(identitiesRoute, async (c) => {
      const [rows] = await authorizedBatch(c, [listIdentities(c.var.db, callerId(c))])
      return c.json(
        rows.map((row) => ({
          _id: row.id,
          provider: row.provider,
          email: row.email,
          created_at: iso(row.createdAt),
          last_used_at: iso(row.lastUsedAt),
        })),
        200,
      )
    })
    .openapi(unlinkRoute, async (c) => {
      if (!(await unlinkIdentity(c.var.db, c.var.user.id, c.req.valid('param').id)))
        throw new ApiError('IDENTITY_NOT_FOUND')
      return c.json({ message: 'the provider was unlinked' }, 200)
    })
}
