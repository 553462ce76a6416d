// Account endpoints. Layout A (/auth/...) is canonical; Layout B paths (/register, /login, /user/...) are
// aliases registered from the same route definitions, so both validate and answer identically.
import { z, type RouteConfig, type RouteHandler } from '@hono/zod-openapi'
import type { Context } from 'hono'
import { bearerSecurity, describeRoute, errorResponse, jsonBody, jsonResponse, newRouter, type AppEnv } from '../api'
import { ApiError } from '../errors'
import { userValueSchemas } from '../rules/resources'
import { requireAuth } from './middleware'
import { clientAddress, enforceRateLimit } from './rate-limit'
import { findRefreshToken, issueRefreshToken, revokeSessionOf, rotateRefreshToken } from './sessions'
import { issueToken, readToken } from './tokens'
import {
  authenticate,
  findUser,
  findUserByEmail,
  loginShape,
  markEmailVerified,
  normalizeEmail,
  publicShape,
  registerUser,
  replacePassword,
  signOutEverywhere,
  spendToken,
  type UserRecord,
} from './users'
import { deliverAccountEmail } from './delivery'

const Email = z.email().max(254).openapi({ example: 'ada@example.com' })
// No maximum below 128 bytes and no truncation; the cap only bounds hashing work.
const Password = z.string().min(8, 'must be at least 8 characters').max(1024).openapi({ example: 'correct horse battery' })
const Token = z.string().min(10).max(4096)

const LoginUser = z
  .object({ _id: z.string(), email: z.string(), name: z.string(), role: z.string() })
  .openapi('LoginUser')
const PublicUser = z
  .object({
    _id: z.string(),
    email: z.string(),
    name: z.string(),
    role: z.string(),
    email_verified: z.boolean(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .catchall(z.unknown())
  .openapi('User')
const Message = z.object({ message: z.string() }).openapi('Message')
const Session = z
  .object({
    token: z.string().describe('JWT access token (HS256)'),
    refresh_token: z.string().describe('opaque, single-use: rotated on every refresh'),
    expires_in: z.number().int().describe('access token lifetime in seconds'),
  })
  .openapi('Session')

const RegisterBody = z
  .strictObject({ email: Email, password: Password, name: z.string().max(200).optional(), ...userValueSchemas.create.shape })
  .openapi('RegisterRequest')

const tags = ['Accounts']
const route = <const R extends RouteConfig>(config: R) => describeRoute({ tags, ...config })

const register = route({
  method: 'post',
  path: '/auth/register',
  summary: 'Register a new account (sends the verification email)',
  request: { body: jsonBody(RegisterBody) },
  responses: {
    201: jsonResponse(
      z.object({ user: PublicUser, email_sent: z.boolean(), message: z.string() }),
      'The account was created',
    ),
    400: errorResponse('Validation error'),
    403: errorResponse('Registration is disabled'),
    409: errorResponse('The email is taken'),
    429: errorResponse('Too many attempts'),
  },
})

const login = route({
  method: 'post',
  path: '/auth/login',
  summary: 'Log in with email and password',
  request: { body: jsonBody(z.object({ email: Email, password: z.string().min(1).max(1024) })) },
  responses: {
    200: jsonResponse(Session.extend({ user: LoginUser }), 'Logged in'),
    400: errorResponse('Validation error'),
    401: errorResponse('Invalid credentials'),
    403: errorResponse('Email not verified'),
    429: errorResponse('Too many attempts'),
  },
})

const verify = route({
  method: 'post',
  path: '/auth/verify',
  summary: 'Verify the email address with the token from the email',
  request: { body: jsonBody(z.object({ token: Token })) },
  responses: {
    200: jsonResponse(z.object({ message: z.string(), user: PublicUser }), 'Verified'),
    400: errorResponse('Validation error'),
    401: errorResponse('Invalid, expired or spent token'),
    429: errorResponse('Too many attempts'),
  },
})

const resendVerification = route({
  method: 'post',
  path: '/auth/verify/resend',
  summary: 'Send the verification email again',
  security: bearerSecurity,
  middleware: [requireAuth()] as const,
  responses: {
    200: jsonResponse(z.object({ message: z.string(), email_sent: z.boolean() }), 'Sent'),
    401: errorResponse('Missing or invalid token'),
    409: errorResponse('Already verified'),
    429: errorResponse('Too many attempts'),
  },
})

const forgot = route({
  method: 'post',
  path: '/auth/forgot',
  summary: 'Request a password reset email (same answer whether or not the account exists)',
  request: { body: jsonBody(z.object({ email: Email })) },
  responses: {
    200: jsonResponse(Message, 'Accepted'),
    400: errorResponse('Validation error'),
    429: errorResponse('Too many attempts'),
  },
})

const reset = route({
  method: 'post',
  path: '/auth/reset',
  summary: 'Set a new password with the token from the reset email',
  request: { body: jsonBody(z.object({ token: Token, password: Password })) },
  responses: {
    200: jsonResponse(Message, 'Password changed; every session was ended'),
    400: errorResponse('Validation error'),
    401: errorResponse('Invalid, expired or spent token'),
  },
})

const currentUser = route({
  method: 'get',
  path: '/auth/user',
  summary: 'The current user',
  security: bearerSecurity,
  middleware: [requireAuth({ missingUserStatus: 404 })] as const,
  responses: {
    200: jsonResponse(PublicUser, 'The current user'),
    401: errorResponse('Missing or invalid token'),
    404: errorResponse('The user no longer exists'),
  },
})

const refresh = route({
  method: 'post',
  path: '/auth/refresh',
  summary: 'Exchange a refresh token for a new access token and refresh token',
  request: { body: jsonBody(z.object({ refresh_token: Token })) },
  responses: {
    200: jsonResponse(Session, 'Rotated'),
    400: errorResponse('Validation error'),
    401: errorResponse('Invalid, expired or reused refresh token'),
    429: errorResponse('Too many attempts'),
  },
})

const logout = route({
  method: 'post',
  path: '/auth/logout',
  summary: 'Revoke the given refresh token, or every session with { all: true }',
  security: bearerSecurity,
  middleware: [requireAuth()] as const,
  request: {
    body: {
      required: false,
      content: { 'application/json': { schema: z.object({ refresh_token: Token.optional(), all: z.boolean().optional() }) } },
    },
  },
  responses: {
    200: jsonResponse(Message, 'Logged out'),
    400: errorResponse('Validation error'),
    401: errorResponse('Missing or invalid token'),
  },
})

type Handler<R extends RouteConfig> = RouteHandler<R, AppEnv>
type Ctx = Context<AppEnv>

/** Counts the attempt per client address and, when given, per email. */
function limitAttempts(c: Ctx, action: string, email?: string) {
  return enforceRateLimit(c.env.RATE_LIMITER, c.var.config, [
    `${action}:ip:${clientAddress(c.req.raw.headers)}`,
    ...(email ? [`${action}:email:${normalizeEmail(email)}`] : []),
  ])
}

/** Counts the attempt against one account, from whatever address: for endpoints that learn the account from a
 * token rather than an email, once the token has told it. */
function limitAccountAttempts(c: Ctx, action: string, userId: string) {
  return enforceRateLimit(c.env.RATE_LIMITER, c.var.config, [`${action}:account:${userId}`])
}

async function startSession(c: Ctx, user: UserRecord) {
  const access = await issueToken(c.var.config, 'auth', user)
  const refreshToken = await issueRefreshToken(c.var.db, c.var.config, user.id)
  return { token: access.token, refresh_token: refreshToken, expires_in: access.expiresIn }
}

const invalidToken = () => new ApiError('TOKEN_INVALID')

const handleRegister: Handler<typeof register> = async (c) => {
  const { email, password, name, ...values } = c.req.valid('json')
  await limitAttempts(c, 'register', email)
  const user = await registerUser(c.var.db, c.var.config, { email, password, name, values })
  const sent = await deliverAccountEmail(c.var.config, 'emailVerification', user)
  const message = sent
    ? 'account created; a verification email was sent'
    : 'account created, but the verification email could not be sent'
  return c.json({ user: publicShape(user), email_sent: sent, message }, 201)
}

const handleLogin: Handler<typeof login> = async (c) => {
  const { email, password } = c.req.valid('json')
  await limitAttempts(c, 'login', email)
  const user = await authenticate(c.var.db, email, password)
  if (c.var.config.AUTH_REQUIRE_EMAIL_VERIFICATION && !user.emailVerified) {
    throw new ApiError('EMAIL_NOT_VERIFIED')
  }
  return c.json({ ...(await startSession(c, user)), user: loginShape(user) }, 200)
}

const handleVerify: Handler<typeof verify> = async (c) => {
  await limitAttempts(c, 'verify')
  const claims = await readToken(c.var.config, c.req.valid('json').token, 'verify')
  if (!claims) throw invalidToken()
  await limitAccountAttempts(c, 'verify', claims.sub)
  if (!(await spendToken(c.var.db, claims.jti, claims.exp))) throw invalidToken()
  const user = await markEmailVerified(c.var.db, claims.sub)
  if (!user) throw invalidToken()
  return c.json({ message: 'email address verified', user: publicShape(user) }, 200)
}

const handleResend: Handler<typeof resendVerification> = async (c) => {
  const caller = c.var.user
  await limitAttempts(c, 'verify-resend')
  await limitAccountAttempts(c, 'verify-resend', caller.id)
  if (caller.emailVerified) throw new ApiError('ALREADY_VERIFIED')
  const user = await findUser(c.var.db, caller.id)
  const sent = user ? await deliverAccountEmail(c.var.config, 'emailVerification', user) : false
  return c.json({ message: sent ? 'verification email sent' : 'the verification email could not be sent', email_sent: sent }, 200)
}

const handleForgot: Handler<typeof forgot> = async (c) => {
  const { email } = c.req.valid('json')
  await limitAttempts(c, 'forgot', email)
  const user = await findUserByEmail(c.var.db, email)
  // Delivered after the response, so an existing address does not answer slower than an unknown one.
  if (user) c.executionCtx.waitUntil(deliverAccountEmail(c.var.config, 'passwordReset', user))
  return c.json({ message: 'if an account exists for this address, a password reset email was sent' }, 200)
}

const handleReset: Handler<typeof reset> = async (c) => {
  const { token, password } = c.req.valid('json')
  const claims = await readToken(c.var.config, token, 'reset')
  if (!claims) throw invalidToken()
  const user = await findUser(c.var.db, claims.sub)
  if (!user || user.securityStamp !== claims.stm) throw invalidToken()
  if (!(await spendToken(c.var.db, claims.jti, claims.exp))) throw invalidToken()
  await replacePassword(c.var.db, user.id, password)
  return c.json({ message: 'password changed; every session was signed out' }, 200)
}

const handleCurrentUser: Handler<typeof currentUser> = async (c) => {
  const user = await findUser(c.var.db, c.var.user.id)
  if (!user) throw new ApiError('USER_NOT_FOUND')
  return c.json(publicShape(user), 200)
}

const handleRefresh: Handler<typeof refresh> = async (c) => {
  await limitAttempts(c, 'refresh')
  const stored = await findRefreshToken(c.var.db, c.req.valid('json').refresh_token)
  await limitAccountAttempts(c, 'refresh', stored.userId)
  const { userId, refreshToken } = await rotateRefreshToken(c.var.db, c.var.config, stored)
  const user = await findUser(c.var.db, userId)
  if (!user) throw new ApiError('INVALID_REFRESH_TOKEN')
  const access = await issueToken(c.var.config, 'auth', user)
  return c.json({ token: access.token, refresh_token: refreshToken, expires_in: access.expiresIn }, 200)
}

const handleLogout: Handler<typeof logout> = async (c) => {
  const body = c.req.header('content-type')?.includes('json') ? c.req.valid('json') : {}
  if (body.all) {
    await signOutEverywhere(c.var.db, c.var.user.id)
    return c.json({ message: 'every session was signed out' }, 200)
  }
  if (!body.refresh_token) throw new ApiError('VALIDATION_FAILED', { message: 'give refresh_token, or all: true' })
  await revokeSessionOf(c.var.db, c.var.user.id, body.refresh_token)
  return c.json({ message: 'signed out' }, 200)
}

/** Registers a route's handler again at its Layout B (Basefloor) path, documented as an alias. */
function mountAlias<R extends RouteConfig>(app: ReturnType<typeof newRouter>, definition: R, handler: Handler<R>, alias: { method?: RouteConfig['method']; path: string }) {
  const aliased = { ...definition, ...alias, tags: ['Accounts (Layout B aliases)'], description: `Alias of ${definition.method.toUpperCase()} ${definition.path}.` }
  app.openapi(aliased, handler as unknown as Handler<typeof aliased>)
}

/** The account routes, chained so that their types reach the typed client; then the Layout B aliases. */
export function accountRoutes() {
  const app = newRouter()
    .openapi(register, handleRegister)
    .openapi(login, handleLogin)
    .openapi(verify, handleVerify)
    .openapi(resendVerification, handleResend)
    .openapi(forgot, handleForgot)
    .openapi(reset, handleReset)
    .openapi(currentUser, handleCurrentUser)
    .openapi(refresh, handleRefresh)
    .openapi(logout, handleLogout)
  mountAlias(app, register, handleRegister, { path: '/register' })
  mountAlias(app, login, handleLogin, { path: '/login' })
  mountAlias(app, verify, handleVerify, { path: '/user/verify' })
  mountAlias(app, forgot, handleForgot, { path: '/user/reset/password' })
  mountAlias(app, reset, handleReset, { method: 'put', path: '/user/reset/password' })
  mountAlias(app, currentUser, handleCurrentUser, { path: '/user' })
  return app
}
