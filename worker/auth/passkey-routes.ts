// Passkey endpoints: options and verification for registering a passkey (signed in) and for signing in with one,
// the caller's passkeys, and removing one. The options are WebAuthn's JSON, for @simplewebauthn/browser's
// startRegistration / startAuthentication or navigator.credentials with the JSON helpers.
import { z } from '@hono/zod-openapi'
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server'
import { describeRoute, errorResponse, jsonBody, jsonResponse, newRouter, securedRoute, Id } from '../api'
import { iso } from '../db/times'
import { ApiError } from '../errors'
import { plainText } from '../models/values'
import { authorizedBatch, callerId, callerIsLive, requireAuth } from './middleware'
import {
  authenticatePasskey,
  authenticationOptions,
  challengeTaking,
  listPasskeys,
  registerPasskey,
  registrationOptions,
  removePasskey,
  passkeyWorker,
  type PasskeyRow,
} from './passkeys'
import { clientAddress, enforceRateLimit } from './rate-limit'
import { clientOf, LoginUser, Session, sessionAnswer } from './routes'
import { sessionStart } from './sessions'
import { loginShape } from './users'

const tags = ['Passkeys']
const Base64Url = (max: number) =>
  z
    .string()
    .max(max)
    .regex(/^[A-Za-z0-9_-]*$/, 'must be base64url')

/** The credential as the browser's toJSON() gives it (WebAuthn Level 3); @simplewebauthn checks the rest. */
const Credential = (response: z.ZodType) =>
  z.object({
    id: Base64Url(1366),
    rawId: Base64Url(1366),
    type: z.literal('public-key'),
    response,
    clientExtensionResults: z.record(z.string(), z.unknown()),
    authenticatorAttachment: z.string().max(40).optional(),
  })

const RegistrationCredential = Credential(
  z.looseObject({
    clientDataJSON: Base64Url(8192),
    attestationObject: Base64Url(65536),
    transports: z.array(z.string().max(40)).max(10).optional(),
  }),
).openapi('PasskeyRegistrationCredential')
const AuthenticationCredential = Credential(
  z.looseObject({
    clientDataJSON: Base64Url(8192),
    authenticatorData: Base64Url(8192),
    signature: Base64Url(8192),
    userHandle: Base64Url(1024).optional(),
  }),
).openapi('PasskeyAuthenticationCredential')

const Options = z.record(z.string(), z.unknown()).openapi('PasskeyOptions', {
  description: "WebAuthn's PublicKeyCredentialCreationOptionsJSON or PublicKeyCredentialRequestOptionsJSON",
})
const PasskeyView = z
  .object({
    _id: z.string(),
    name: z.string(),
    device_type: z.string(),
    backed_up: z.boolean(),
    created_at: z.string(),
    last_used_at: z.string().nullable(),
  })
  .openapi('Passkey')

const passkeyView = (row: PasskeyRow) => ({
  _id: row.id,
  name: row.name,
  device_type: row.deviceType,
  backed_up: row.backedUp,
  created_at: iso(row.createdAt)!,
  last_used_at: iso(row.lastUsedAt),
})

const registerOptionsRoute = securedRoute(tags, {
  method: 'post',
  path: '/auth/passkeys/register/options',
  summary: 'Options for registering a passkey (navigator.credentials.create)',
  middleware: [requireAuth({ sharesRoundTrip: true })] as const,
  responses: {
    200: jsonResponse(Options, 'The creation options'),
    403: errorResponse('An API key cannot register passkeys'),
    409: errorResponse('Too many passkeys'),
  },
})

const registerRoute = securedRoute(tags, {
  method: 'post',
  path: '/auth/passkeys/register',
  summary: "Register the passkey the authenticator made for the options' challenge",
  middleware: [requireAuth({ sharesRoundTrip: true })] as const,
  request: { body: jsonBody(z.strictObject({ credential: RegistrationCredential, name: plainText(100).optional() })) },
  responses: {
    201: jsonResponse(PasskeyView, 'Registered'),
    401: errorResponse('The answer did not verify (PASSKEY_INVALID)'),
    403: errorResponse('An API key cannot register passkeys'),
  },
})

const loginOptionsRoute = describeRoute({
  tags,
  method: 'post',
  path: '/auth/passkeys/login/options',
  summary: 'Options for signing in with a passkey (navigator.credentials.get)',
  responses: { 200: jsonResponse(Options, 'The request options'), 429: errorResponse('Too many attempts') },
})

const loginRoute = describeRoute({
  tags,
  method: 'post',
  path: '/auth/passkeys/login',
  summary: "Sign in with the passkey's answer to the options' challenge (starts a session)",
  request: { body: jsonBody(z.strictObject({ credential: AuthenticationCredential })) },
  responses: {
    200: jsonResponse(Session.extend({ user: LoginUser }), 'Signed in'),
    401: errorResponse('Unknown passkey or an answer that did not verify'),
    429: errorResponse('Too many attempts'),
  },
})

const listRoute = securedRoute(tags, {
  method: 'get',
  path: '/auth/passkeys',
  summary: "The caller's passkeys",
  middleware: [requireAuth({ sharesRoundTrip: true })] as const,
  responses: {
    200: jsonResponse(z.array(PasskeyView), 'The passkeys'),
    403: errorResponse('An API key cannot list passkeys'),
  },
})

const removeRoute = securedRoute(tags, {
  method: 'delete',
  path: '/auth/passkeys/{id}',
  summary: 'Remove a passkey: it no longer signs in',
  middleware: [requireAuth()] as const,
  request: { params: z.object({ id: Id }) },
  responses: {
    200: jsonResponse(z.object({ message: z.string() }), 'Removed'),
    403: errorResponse('An API key cannot remove passkeys'),
    404: errorResponse('Not a passkey of yours'),
  },
})

export function passkeyRoutes() {
  return newRouter()
    .openapi(registerOptionsRoute, async (c) => {
      const [existing] = await authorizedBatch(c, [listPasskeys(c.var.db, callerId(c))])
      return c.json(await registrationOptions(c.var.db, c.var.config, passkeyWorker(c.env), c.var.user, existing), 200)
    })
    .openapi(registerRoute, async (c) => {
      const { credential, name } = c.req.valid('json')
      // The challenge is taken in the session check's round trip, only if the check passes.
      const taking = await challengeTaking(c.var.db, credential as RegistrationResponseJSON, callerIsLive(c))
      const [[row]] = await authorizedBatch(c, [taking.write])
      const passkey = await registerPasskey(
        c.var.db,
        c.var.config,
        passkeyWorker(c.env),
        c.var.user.id,
        credential as RegistrationResponseJSON,
        name?.trim() || 'passkey',
        { challenge: taking.challenge, row },
      )
      return c.json(passkeyView(passkey), 201)
    })
    .openapi(loginOptionsRoute, async (c) => {
      await enforceRateLimit(c.env.RATE_LIMITER, c.var.config, [
        `passkey-options:ip:${clientAddress(c.var.config, c.req.raw.headers)}`,
      ])
      return c.json(await authenticationOptions(c.var.db, c.var.config, passkeyWorker(c.env)), 200)
    })
    .openapi(loginRoute, async (c) => {
      await enforceRateLimit(c.env.RATE_LIMITER, c.var.config, [
        `passkey-login:ip:${clientAddress(c.var.config, c.req.raw.headers)}`,
      ])
      const { user, used } = await authenticatePasskey(
        c.var.db,
        c.var.config,
        passkeyWorker(c.env),
        c.req.valid('json').credential as AuthenticationResponseJSON,
      )
      if (c.var.config.AUTH_REQUIRE_EMAIL_VERIFICATION && !user.emailVerified) {
        await used
        throw new ApiError('EMAIL_NOT_VERIFIED')
      }
      // The passkey's use and the session in one round trip.
      const session = await sessionStart(c.var.db, c.var.config, user.id, clientOf(c))
      await c.var.db.batch([used, ...session.statements])
      return c.json({ ...(await sessionAnswer(c, user, session)), user: loginShape(user) }, 200)
    })
    .openapi(listRoute, async (c) => {
      const [rows] = await authorizedBatch(c, [listPasskeys(c.var.db, callerId(c))])
      return c.json(rows.map(passkeyView), 200)
    })
    .openapi(removeRoute, async (c) => {
      if (!(await removePasskey(c.var.db, c.var.user.id, c.req.valid('param').id)))
        throw new ApiError('PASSKEY_NOT_FOUND')
      return c.json({ message: 'the passkey was removed' }, 200)
    })
}
