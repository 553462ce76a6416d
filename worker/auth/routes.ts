// Account endpoints, each in one place: its route (validation, OpenAPI), its handler and its Layout B aliases.
// Layout A (/auth/...) is canonical; Layout B paths (/register, /login, /user/...) are registered from the same
// definitions, so both validate and answer identically. Register takes the Users model the app was made with.
import { z, type RouteConfig, type RouteHandler } from '@hono/zod-openapi'
import type { BatchItem } from 'drizzle-orm/batch'
import type { Context } from 'hono'
import { describeRoute, errorResponse, jsonBody, jsonResponse, newRouter, securedRoute, type AppEnv, Id } from '../api'
import { ApiError } from '../errors'
import type { CompiledRoute } from '../rules/compile'
import { models } from '../models/resources'
import { deleteAccount } from '../rules/store'
import { buildValueSchemas, displayName, type ValueSchemas, type ValuesMap } from '../models/values'
import { deliverAccountEmail } from './delivery'
import { authorizedBatch, callerId, callerSessionId, requireAuth } from './middleware'
import { clearLoginGuard, clientAddress, enforceRateLimit, mayMailReset, withLoginLockout } from './rate-limit'
import { confirmAccountHolder } from './self-service'
import {
  deviceLabel,
  endAllSessions,
  endSession,
  endSessionOf,
  findRefreshToken,
  listSessions,
  sessionView,
  rotateRefreshToken,
  sessionStartQuery,
  startSession,
  type ClientFacts,
} from './sessions'
import { issueToken, readToken } from './tokens'
import { requireSecondStep } from './totp'
import {
  authenticate,
  findUser,
  findUserByEmail,
  findUserQuery,
  loginShape,
  markEmailVerified,
  normalizeEmail,
  publicShape,
  registerUser,
  replacePassword,
  signOutEverywhere,
  spendToken,
  stampHolds,
  tokenSpending,
  updateAccount,
  type UserRecord,
} from './users'

const Email = z.email().max(254).openapi({ example: 'ada@example.com' })
// No maximum below 128 bytes and no truncation; the cap only bounds hashing work.
const Password = z
  .string()
  .min(8, 'must be at least 8 characters')
  .max(1024)
  .openapi({ example: 'correct horse battery' })
const Token = z.string().min(10).max(4096)

export const LoginUser = z
  .object({ _id: z.string(), email: z.string(), name: z.string(), role: z.string() })
  .openapi('LoginUser')
/** An account's own fields as every user view answers them (the account's, an admin's list). */
export const UserFields = {
  _id: z.string(),
  email: z.string(),
  name: z.string(),
  role: z.string(),
  email_verified: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
}
const PublicUser = z.object(UserFields).catchall(z.unknown()).openapi('User')
const Message = z.object({ message: z.string() }).openapi('Message')
export const Session = z
  .object({
    token: z.string().describe('JWT access token (HS256), valid while its session lasts'),
    refresh_token: z.string().describe('opaque, single-use: rotated on every refresh'),
    expires_in: z.number().int().describe('access token lifetime in seconds'),
  })
  .openapi('Session')
export const SessionView = z
  .object({
    _id: z.string(),
    device: z.string().describe('the User-Agent of the login or last refresh'),
    address: z.string().describe('the client address of the login or last refresh'),
    created_at: z.string(),
    last_used_at: z.string().describe('the login or last refresh'),
    current: z.boolean().describe('whether this is the session of the token making the request'),
  })
  .openapi('AccountSession')

type Handler<R extends RouteConfig> = RouteHandler<R, AppEnv>
type Ctx = Context<AppEnv>
type Alias = { method?: RouteConfig['method']; path: string }

/** One endpoint: the route, its handler, and the Layout B paths that answer the same. */
interface Endpoint<R extends RouteConfig> {
  readonly route: R
  readonly handler: Handler<R>
  readonly aliases: readonly Alias[]
}

const endpoint = <R extends RouteConfig>(
  route: R,
  handler: Handler<R>,
  aliases: readonly Alias[] = [],
): Endpoint<R> => ({ route, handler, aliases })

const tags = ['Accounts']
const route = <const R extends RouteConfig>(config: R) => describeRoute({ tags, ...config })
const secured = <const R extends RouteConfig>(config: R) => securedRoute(tags, config)

const invalidToken = () => new ApiError('TOKEN_INVALID')

export function clientOf(c: Ctx): ClientFacts {
  return { device: deviceLabel(c.req.header('user-agent')), address: clientAddress(c.var.config, c.req.raw.headers) }
}

/** Counts the attempt per client address and, when given, per email. */
function limitAttempts(c: Ctx, action: string, email?: string) {
  return enforceRateLimit(c.env.RATE_LIMITER, c.var.config, [
    `${action}:ip:${clientAddress(c.var.config, c.req.raw.headers)}`,
    ...(email ? [`${action}:email:${normalizeEmail(email)}`] : []),
  ])
}

/** Counts the attempt against one account, from whatever address: for endpoints that learn the account from a
 * token rather than an email, once the token has told it. */
function limitAccountAttempts(c: Ctx, action: string, userId: string) {
  return enforceRateLimit(c.env.RATE_LIMITER, c.var.config, [`${action}:account:${userId}`])
}

/**
 * A password-reset email to the account of `email`, if there is one: at most one per address every few minutes and a
 * few a day, whoever asks.
 */
async function mailResetLink(c: Ctx, email: string): Promise<void> {
  const user = await findUserByEmail(c.var.db, email)
  if (user && (await mayMailReset(c.env.RATE_LIMITER, user.email)))
    await deliverAccountEmail(c.var.config, 'passwordReset', user)
}

export async function openSession(c: Ctx, user: UserRecord) {
  return sessionAnswer(c, user, await startSession(c.var.db, c.var.config, user.id, clientOf(c)))
}

/** A login's answer for the session it started: an access token of that session and its first refresh token. */
export async function sessionAnswer(c: Ctx, user: UserRecord, session: { sessionId: string; refreshToken: string }) {
  const access = await issueToken(c.var.config, 'auth', user, session.sessionId)
  return { token: access.token, refresh_token: session.refreshToken, expires_in: access.expiresIn }
}

function registerEndpoint(usersModel: ValuesMap, schemas: ValueSchemas) {
  const body = z
    .strictObject({ email: Email, password: Password, name: displayName(200).optional(), ...schemas.create.shape })
    .openapi('RegisterRequest')
  return endpoint(
    route({
      method: 'post',
      path: '/auth/register',
      summary: 'Register a new account (sends the verification email)',
      request: { body: jsonBody(body) },
      responses: {
        201: jsonResponse(
          z.object({ user: PublicUser, email_sent: z.boolean(), message: z.string() }),
          'The account was created',
        ),
        403: errorResponse('Registration is disabled'),
        409: errorResponse('The email is taken'),
        429: errorResponse('Too many attempts'),
      },
    }),
    async (c) => {
      const { email, password, name, ...values } = c.req.valid('json')
      await limitAttempts(c, 'register', email)
      const user = await registerUser(c.var.db, c.var.config, usersModel, { email, password, name, values })
      const sent = await deliverAccountEmail(c.var.config, 'emailVerification', user)
      const message = sent
        ? 'account created; a verification email was sent'
        : 'account created, but the verification email could not be sent'
      return c.json({ user: publicShape(user, schemas), email_sent: sent, message }, 201)
    },
    [{ path: '/register' }],
  )
}

const login = endpoint(
  route({
    method: 'post',
    path: '/auth/login',
    summary: 'Log in with email and password (starts a session)',
    request: { body: jsonBody(z.object({ email: Email, password: z.string().min(1).max(1024) })) },
    responses: {
      200: jsonResponse(Session.extend({ user: LoginUser }), 'Logged in'),
      401: errorResponse(
        'Invalid credentials; or SECOND_FACTOR_REQUIRED with `second_factor_token` for POST /auth/login/totp (an account with a second factor)',
      ),
      403: errorResponse('Email not verified'),
      429: errorResponse('Too many attempts'),
    },
  }),
  async (c) => {
    const { email, password } = c.req.valid('json')
    await limitAttempts(c, 'login')
    const address = clientAddress(c.var.config, c.req.raw.headers)
    // Past the account's hourly ceiling its owner gets a password-reset link (capped as /auth/forgot's): their way in.
    const mailOwner = () => c.executionCtx.waitUntil(mailResetLink(c, email))
    const user = await withLoginLockout(
      c.env.RATE_LIMITER,
      c.var.config,
      normalizeEmail(email),
      address,
      () => authenticate(c.var.db, email, password),
      { onCeilingReached: mailOwner },
    )
    if (c.var.config.AUTH_REQUIRE_EMAIL_VERIFICATION && !user.emailVerified) throw new ApiError('EMAIL_NOT_VERIFIED')
    await requireSecondStep(c.var.config, user)
    return c.json({ ...(await openSession(c, user)), user: loginShape(user) }, 200)
  },
  [{ path: '/login' }],
)

function verifyEndpoint(schemas: ValueSchemas) {
  return endpoint(
    route({
      method: 'post',
      path: '/auth/verify',
      summary: 'Verify the email address with the token from the email',
      request: { body: jsonBody(z.object({ token: Token })) },
      responses: {
        200: jsonResponse(z.object({ message: z.string(), user: PublicUser }), 'Verified'),
        401: errorResponse('Invalid, expired or spent token, or one sent to an address the account no longer has'),
        429: errorResponse('Too many attempts'),
      },
    }),
    async (c) => {
      await limitAttempts(c, 'verify')
      const claims = await readToken(c.var.config, c.req.valid('json').token, 'verify')
      if (!claims?.eml) throw invalidToken()
      await limitAccountAttempts(c, 'verify', claims.sub)
      if (!(await spendToken(c.var.db, claims.jti, claims.exp))) throw invalidToken()
      const user = await markEmailVerified(c.var.db, claims.sub, claims.eml)
      if (!user) throw invalidToken()
      return c.json({ message: 'email address verified', user: publicShape(user, schemas) }, 200)
    },
    [{ path: '/user/verify' }],
  )
}

const resendVerification = endpoint(
  secured({
    method: 'post',
    path: '/auth/verify/resend',
    summary: 'Send the verification email again',
    middleware: [requireAuth()] as const,
    responses: {
      200: jsonResponse(z.object({ message: z.string(), email_sent: z.boolean() }), 'Sent'),
      409: errorResponse('Already verified'),
      429: errorResponse('Too many attempts'),
    },
  }),
  async (c) => {
    const caller = c.var.user
    await limitAttempts(c, 'verify-resend')
    await limitAccountAttempts(c, 'verify-resend', caller.id)
    if (caller.emailVerified) throw new ApiError('ALREADY_VERIFIED')
    const user = await findUser(c.var.db, caller.id)
    const sent = user ? await deliverAccountEmail(c.var.config, 'emailVerification', user) : false
    return c.json(
      { message: sent ? 'verification email sent' : 'the verification email could not be sent', email_sent: sent },
      200,
    )
  },
  // Basefloor's name for it.
  [{ path: '/user/verify/email' }],
)

const forgot = endpoint(
  route({
    method: 'post',
    path: '/auth/forgot',
    summary: 'Request a password reset email (same answer whether or not the account exists)',
    request: { body: jsonBody(z.object({ email: Email })) },
    responses: {
      200: jsonResponse(Message, 'Accepted'),
      429: errorResponse('Too many attempts'),
    },
  }),
  async (c) => {
    const { email } = c.req.valid('json')
    await limitAttempts(c, 'forgot', email)
    // Delivered after the response, so an existing address does not answer slower than an unknown one.
    c.executionCtx.waitUntil(mailResetLink(c, email))
    return c.json({ message: 'if an account exists for this address, a password reset email was sent' }, 200)
  },
  [{ path: '/user/reset/password' }],
)

const reset = endpoint(
  route({
    method: 'post',
    path: '/auth/reset',
    summary: 'Set a new password with the token from the reset email (ends every session)',
    request: { body: jsonBody(z.object({ token: Token, password: Password })) },
    responses: {
      200: jsonResponse(Message, 'Password changed; every session was ended'),
      401: errorResponse('Invalid, expired or spent token'),
    },
  }),
  async (c) => {
    const { token, password } = c.req.valid('json')
    const claims = await readToken(c.var.config, token, 'reset')
    if (!claims) throw invalidToken()
    // One round trip reads the account and spends the token if it still names the account's stamp.
    const [[user], spent] = await c.var.db.batch([
      findUserQuery(c.var.db, claims.sub),
      tokenSpending(c.var.db, claims.jti, claims.exp, { userId: claims.sub, condition: stampHolds(claims.stm) }),
    ])
    if (!user || user.securityStamp !== claims.stm) throw invalidToken()
    if (spent.length === 0) throw invalidToken()
    await replacePassword(c.var.db, user.id, password)
    await clearLoginGuard(c.env.RATE_LIMITER, normalizeEmail(user.email))
    return c.json({ message: 'password changed; every session was signed out' }, 200)
  },
  [{ method: 'put', path: '/user/reset/password' }],
)

function currentUserEndpoint(schemas: ValueSchemas) {
  return endpoint(
    secured({
      method: 'get',
      path: '/auth/user',
      summary: 'The current user',
      middleware: [requireAuth({ missingUser: 'USER_NOT_FOUND' })] as const,
      responses: {
        200: jsonResponse(PublicUser, 'The current user'),
        404: errorResponse('The user no longer exists'),
      },
    }),
    // requireAuth already read the account (404 when it is gone) in its one query: no second read.
    (c) => c.json(publicShape(c.var.account, schemas), 200),
    [{ path: '/user' }],
  )
}

const CurrentPassword = z.string().min(1).max(1024).openapi({
  description:
    "the account's password, confirming the change (an account without one confirms with a sign-in in the last 5 minutes instead)",
  example: 'correct horse battery',
})

/**
 * The caller's account row (with its password hash) and their session's start, in the session check's round trip,
 * plus `more` reads. Then the change is confirmed when `confirm` says so. The attempts are counted per account, so a
 * stolen token cannot guess the password at leisure.
 */
async function callerAccount<const Q extends readonly BatchItem<'sqlite'>[]>(
  c: Ctx,
  confirm: { needed: boolean; currentPassword?: string | undefined },
  more: Q,
) {
  const userId = callerId(c)
  const [[user], [session], ...rest] = await authorizedBatch(c, [
    findUserQuery(c.var.db, userId),
    sessionStartQuery(c.var.db, userId, callerSessionId(c)),
    ...more,
  ])
  if (!user) throw new ApiError('USER_NOT_FOUND')
  if (confirm.needed) {
    await limitAccountAttempts(c, 'confirm', user.id)
    await confirmAccountHolder(user, session?.createdAt, confirm.currentPassword)
  }
  return { user, rest }
}

function updateSelfEndpoint(schemas: ValueSchemas) {
  const body = z
    .strictObject({
      name: displayName(200).optional(),
      email: Email.optional().openapi({
        description: 'a new address: unverified until its owner follows the link mailed to it (needs confirmation)',
      }),
      password: Password.optional().openapi({
        description:
          'a new password: every session ends, and a new one for this device is answered (needs confirmation)',
      }),
      current_password: CurrentPassword.optional(),
      ...schemas.update.shape,
    })
    .openapi('UpdateAccountRequest', {
      example: { email: 'ada@example.org', current_password: 'correct horse battery' },
    })
  return endpoint(
    secured({
      method: 'put',
      path: '/auth/user',
      summary:
        "Change the caller's own name, custom fields (u), email or password; the email and the password need confirmation",
      middleware: [requireAuth({ sharesRoundTrip: true })] as const,
      request: { body: jsonBody(body) },
      responses: {
        200: jsonResponse(
          z.object({
            user: PublicUser,
            message: z.string(),
            email_sent: z
              .boolean()
              .optional()
              .describe('present when the email changed: whether the verification email to the new address went'),
            session: Session.optional().describe(
              'present when the password changed: every session ended, this is the new one for this device',
            ),
          }),
          'Changed',
        ),
        403: errorResponse(
          'An email or password change without confirmation (CONFIRMATION_REQUIRED), a wrong current_password, or an API key',
        ),
        404: errorResponse('The user no longer exists'),
        409: errorResponse('The email is taken'),
        429: errorResponse('Too many confirmation attempts'),
      },
    }),
    async (c) => {
      const { current_password: currentPassword, name, email, password, ...values } = c.req.valid('json')
      if (name === undefined && email === undefined && password === undefined && Object.keys(values).length === 0) {
        const fields = ['name', 'email', 'password', ...Object.keys(schemas.update.shape)]
        throw new ApiError('VALIDATION_FAILED', {
          message: `invalid request: nothing to change; send one of ${fields.join(', ')}`,
        })
      }
      const needed = email !== undefined || password !== undefined || currentPassword !== undefined
      const { user } = await callerAccount(c, { needed, currentPassword }, [])
      const changed = await updateAccount(c.var.db, c.var.config, user, { name, email, password, values })
      let session: Awaited<ReturnType<typeof openSession>> | undefined
      if (password !== undefined) {
        // As a reset: every session and token ends (the new security stamp ends the access tokens).
        // This device goes on.
        await endAllSessions(c.var.db, user.id)
        await clearLoginGuard(c.env.RATE_LIMITER, normalizeEmail(changed.user.email))
        session = await openSession(c, changed.user)
      }
      const notes = [
        changed.emailSent === undefined
          ? ''
          : changed.emailSent
            ? '; a verification email was sent to the new address'
            : '; the verification email could not be sent',
        session ? '; every other session was signed out' : '',
      ]
      return c.json(
        {
          user: publicShape(changed.user, schemas),
          message: `account updated${notes.join('')}`,
          ...(changed.emailSent === undefined ? {} : { email_sent: changed.emailSent }),
          ...(session ? { session } : {}),
        },
        200,
      )
    },
    [{ path: '/user' }],
  )
}

function deleteSelfEndpoint(children: readonly CompiledRoute[]) {
  return endpoint(
    secured({
      method: 'delete',
      path: '/auth/user',
      summary:
        "Delete the caller's own account with everything it owns (confirmed by current_password); every session and API key ends",
      middleware: [requireAuth({ sharesRoundTrip: true })] as const,
      request: {
        body: {
          required: false,
          description: 'An account without a password sends no body: a sign-in in the last 5 minutes confirms it',
          content: {
            'application/json': {
              schema: z
                .strictObject({ current_password: CurrentPassword.optional() })
                .openapi('DeleteAccountRequest', { example: { current_password: 'correct horse battery' } }),
            },
          },
        },
      },
      responses: {
        200: jsonResponse(Message, 'Deleted'),
        403: errorResponse('No confirmation (CONFIRMATION_REQUIRED), a wrong current_password, or an API key'),
        404: errorResponse('The user no longer exists'),
        429: errorResponse('Too many confirmation attempts'),
      },
    }),
    async (c) => {
      const body = c.req.header('content-type')?.includes('json') ? c.req.valid('json') : {}
      const { user } = await callerAccount(c, { needed: true, currentPassword: body.current_password }, [])
      await deleteAccount({ db: c.var.db, bucket: c.env.BUCKET }, user.id, children)
      return c.json({ message: 'account deleted with its files; every session and API key ended' }, 200)
    },
    [{ path: '/user' }],
  )
}

const refresh = endpoint(
  route({
    method: 'post',
    path: '/auth/refresh',
    summary: 'Exchange a refresh token for a new access token and refresh token (same session)',
    request: { body: jsonBody(z.object({ refresh_token: Token })) },
    responses: {
      200: jsonResponse(Session, 'Rotated'),
      401: errorResponse('Invalid, expired or reused refresh token, or an ended session'),
      429: errorResponse('Too many attempts'),
    },
  }),
  async (c) => {
    await limitAttempts(c, 'refresh')
    const stored = await findRefreshToken(c.var.db, c.req.valid('json').refresh_token)
    await limitAccountAttempts(c, 'refresh', stored.userId)
    const { user, sessionId, refreshToken } = await rotateRefreshToken(c.var.db, c.var.config, stored, clientOf(c))
    if (!user) throw new ApiError('INVALID_REFRESH_TOKEN')
    const access = await issueToken(c.var.config, 'auth', user, sessionId)
    return c.json({ token: access.token, refresh_token: refreshToken, expires_in: access.expiresIn }, 200)
  },
)

const logout = endpoint(
  secured({
    method: 'post',
    path: '/auth/logout',
    summary:
      "End this token's session (or the session of the given refresh token), or every session with { all: true }",
    middleware: [requireAuth()] as const,
    request: {
      body: {
        required: false,
        content: {
          'application/json': { schema: z.object({ refresh_token: Token.optional(), all: z.boolean().optional() }) },
        },
      },
    },
    responses: { 200: jsonResponse(Message, 'Logged out') },
  }),
  async (c) => {
    const body = c.req.header('content-type')?.includes('json') ? c.req.valid('json') : {}
    if (body.all) {
      await signOutEverywhere(c.var.db, c.var.user.id)
      return c.json({ message: 'every session was signed out' }, 200)
    }
    if (body.refresh_token) await endSessionOf(c.var.db, c.var.user.id, body.refresh_token)
    else await endSession(c.var.db, c.var.user.id, c.var.sessionId)
    return c.json({ message: 'signed out' }, 200)
  },
)

const sessionsList = endpoint(
  secured({
    method: 'get',
    path: '/auth/sessions',
    summary: "The caller's live sessions, most recently used first, the current one marked",
    middleware: [requireAuth({ sharesRoundTrip: true })] as const,
    responses: { 200: jsonResponse(z.array(SessionView), 'The sessions') },
  }),
  async (c) => {
    const [rows] = await authorizedBatch(c, [listSessions(c.var.db, c.var.config, callerId(c))])
    return c.json(
      rows.map((row) => ({ ...sessionView(row), current: row.id === c.var.sessionId })),
      200,
    )
  },
)

const sessionEnd = endpoint(
  secured({
    method: 'delete',
    path: '/auth/sessions/{id}',
    summary: 'End one of your sessions: its refresh token and its access tokens stop working at once',
    middleware: [requireAuth()] as const,
    request: { params: z.object({ id: Id }) },
    responses: { 200: jsonResponse(Message, 'Ended'), 404: errorResponse('Not a live session of yours') },
  }),
  async (c) => {
    if (!(await endSession(c.var.db, c.var.user.id, c.req.valid('param').id))) throw new ApiError('SESSION_NOT_FOUND')
    return c.json({ message: 'session ended' }, 200)
  },
)

/** Registers an endpoint's handler again at each of its Layout B (Basefloor) paths, documented as aliases. */
function mountAliases<R extends RouteConfig>(
  app: ReturnType<typeof newRouter>,
  { route: definition, handler, aliases }: Endpoint<R>,
) {
  for (const alias of aliases) {
    const aliased = {
      ...definition,
      ...alias,
      tags: ['Accounts (Layout B aliases)'],
      description: `Alias of ${definition.method.toUpperCase()} ${definition.path}.`,
    }
    app.openapi(aliased, handler as unknown as Handler<typeof aliased>)
  }
}

/**
 * The account routes for the app's Users model, chained so that their types reach the typed client; then the
 * Layout B aliases. `resourceRoutes` are the app's compiled resource routes: a deleted account takes the records of
 * its relation routes (/users/posts) with it, as DELETE /users/:id does.
 */
export function accountRoutes(
  usersModel: ValuesMap = models.Users.values,
  resourceRoutes: readonly CompiledRoute[] = [],
) {
  const schemas = buildValueSchemas(usersModel)
  const register = registerEndpoint(usersModel, schemas)
  const verify = verifyEndpoint(schemas)
  const currentUser = currentUserEndpoint(schemas)
  const updateSelf = updateSelfEndpoint(schemas)
  const deleteSelf = deleteSelfEndpoint(resourceRoutes.filter((route) => route.parent?.model === 'Users'))
  const app = newRouter()
    .openapi(register.route, register.handler)
    .openapi(login.route, login.handler)
    .openapi(verify.route, verify.handler)
    .openapi(resendVerification.route, resendVerification.handler)
    .openapi(forgot.route, forgot.handler)
    .openapi(reset.route, reset.handler)
    .openapi(currentUser.route, currentUser.handler)
    .openapi(updateSelf.route, updateSelf.handler)
    .openapi(deleteSelf.route, deleteSelf.handler)
    .openapi(refresh.route, refresh.handler)
    .openapi(logout.route, logout.handler)
    .openapi(sessionsList.route, sessionsList.handler)
    .openapi(sessionEnd.route, sessionEnd.handler)
  mountAliases(app, register)
  mountAliases(app, login)
  mountAliases(app, verify)
  mountAliases(app, resendVerification)
  mountAliases(app, forgot)
  mountAliases(app, reset)
  mountAliases(app, currentUser)
  mountAliases(app, updateSelf)
  mountAliases(app, deleteSelf)
  return app
}
