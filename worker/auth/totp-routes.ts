// Second-factor endpoints: enrol a TOTP authenticator (secret and otpauth:// URI, then a first code that turns it on
// and answers the recovery codes), read its state, remove it, renew the recovery codes, and the login's second step.
// Every endpoint that checks a code counts the attempt against the account (limitSecondFactorAttempts).
import { z } from '@hono/zod-openapi'
import { errorResponse, jsonBody, jsonResponse, newRouter, securedRoute, describeRoute } from '../api'
import { iso } from '../db/times'
import { ApiError } from '../errors'
import { authorizedBatch, callerId, requireAuth } from './middleware'
import { clientOf, LoginUser, Session, sessionAnswer } from './routes'
import { sessionStart } from './sessions'
import { previousChanged } from '../db/guarded'
import {
  limitSecondFactorAttempts,
  readSecondStepToken,
  proofSpending,
  removeTotpFactor,
  renewRecoveryCodes,
  startTotpEnrolment,
  confirmTotpEnrolment,
  totpFactorQuery,
  totpStatus,
  totpStatusQueries,
} from './totp'
import { findUserQuery, loginShape, tokenSpending } from './users'

const tags = ['Second factor']
// Each route reads the caller's factor in the session check's round trip (requireAuth sharesRoundTrip,
// authorizedBatch).
const secured = <const R extends Parameters<typeof securedRoute>[1]>(config: R) =>
  securedRoute(tags, { middleware: [requireAuth({ sharesRoundTrip: true })] as const, ...config })

const Code = z
  .string()
  .regex(/^\d{6}$/, 'must be the 6 digits the authenticator shows')
  .openapi({ example: '287082' })
const RecoveryCode = z.string().min(16).max(40).openapi({ example: 'mfrg-gzdf-mztw-q2lk' })
/** A proof of the factor: the current code or one recovery code. */
const Proof = z
  .strictObject({ code: Code.optional(), recovery_code: RecoveryCode.optional() })
  .refine(
    (proof) => (proof.code === undefined) !== (proof.recovery_code === undefined),
    'give either code or recovery_code',
  )
  .openapi('SecondFactorProof')
const RecoveryCodes = z
  .object({ recovery_codes: z.array(z.string()).describe('each works once; shown only now') })
  .openapi('RecoveryCodes')

/** What a route that checks a code of the factor may answer besides its success. */
const proofErrors = {
  401: errorResponse('Wrong code (SECOND_FACTOR_INVALID) or invalid token'),
  403: errorResponse('An API key cannot call it'),
  409: errorResponse('No factor'),
  429: errorResponse('Too many attempts'),
}

const statusRoute = secured({
  method: 'get',
  path: '/auth/totp',
  summary: "The caller's TOTP second factor: enabled, pending confirmation, recovery codes left",
  responses: {
    200: jsonResponse(
      z.object({
        enabled: z.boolean(),
        pending: z.boolean(),
        confirmed_at: z.string().nullable(),
        recovery_codes_left: z.number().int(),
      }),
      'The state',
    ),
    403: errorResponse('An API key cannot read it'),
  },
})

const enrolRoute = secured({
  method: 'post',
  path: '/auth/totp',
  summary: 'Start TOTP enrolment: a new secret and its otpauth:// URI (enforced once confirmed)',
  responses: {
    201: jsonResponse(
      z.object({
        secret: z.string().describe('base32 (RFC 4648), for typing in'),
        otpauth_uri: z.string().describe('for a QR code'),
      }),
      'The secret',
    ),
    403: errorResponse('An API key cannot enrol'),
    409: errorResponse('A factor is already enabled'),
  },
})

const confirmRoute = secured({
  method: 'post',
  path: '/auth/totp/confirm',
  summary: 'Confirm enrolment with a first code: the factor is enforced from now on; answers the recovery codes once',
  request: { body: jsonBody(z.strictObject({ code: Code })) },
  responses: {
    200: jsonResponse(RecoveryCodes, 'Enabled'),
    401: errorResponse('Wrong code (SECOND_FACTOR_INVALID) or invalid token'),
    403: errorResponse('An API key cannot confirm'),
    409: errorResponse('No enrolment started, or already enabled'),
    429: errorResponse('Too many attempts'),
  },
})

const removeRoute = secured({
  method: 'delete',
  path: '/auth/totp',
  summary: 'Remove the second factor (with a current code or a recovery code)',
  request: { body: jsonBody(Proof) },
  responses: { 200: jsonResponse(z.object({ message: z.string() }), 'Removed'), ...proofErrors },
})

const renewRoute = secured({
  method: 'post',
  path: '/auth/totp/recovery-codes',
  summary: 'New recovery codes (the old ones stop working), with a current code or a recovery code',
  request: { body: jsonBody(Proof) },
  responses: { 200: jsonResponse(RecoveryCodes, 'The new codes'), ...proofErrors },
})

const loginStepRoute = describeRoute({
  tags,
  method: 'post',
  path: '/auth/login/totp',
  summary: "A login's second step: the second_factor_token of POST /auth/login and a code, for the session",
  request: {
    body: jsonBody(
      z
        .strictObject({
          second_factor_token: z.string().min(10).max(4096),
          code: Code.optional(),
          recovery_code: RecoveryCode.optional(),
        })
        .refine(
          (body) => (body.code === undefined) !== (body.recovery_code === undefined),
          'give either code or recovery_code',
        ),
    ),
  },
  responses: {
    200: jsonResponse(Session.extend({ user: LoginUser }), 'Logged in'),
    401: errorResponse(
      'Invalid, expired or spent second_factor_token (TOKEN_INVALID), or a wrong code (SECOND_FACTOR_INVALID)',
    ),
    429: errorResponse('Too many attempts'),
  },
})

export function totpRoutes() {
  return newRouter()
    .openapi(statusRoute, async (c) => {
      const [[factor], [counted]] = await authorizedBatch(c, totpStatusQueries(c.var.db, callerId(c)))
      const status = totpStatus(factor, counted?.left ?? 0)
      return c.json(
        {
          enabled: status.enabled,
          pending: status.pending,
          confirmed_at: iso(status.confirmedAt),
          recovery_codes_left: status.recoveryCodesLeft,
        },
        200,
      )
    })
    .openapi(enrolRoute, async (c) => {
      const [[factor]] = await authorizedBatch(c, [totpFactorQuery(c.var.db, callerId(c))])
      const { secret, uri } = await startTotpEnrolment(c.var.db, c.var.config, c.var.user, factor)
      return c.json({ secret, otpauth_uri: uri }, 201)
    })
    .openapi(confirmRoute, async (c) => {
      const [[factor]] = await authorizedBatch(c, [totpFactorQuery(c.var.db, callerId(c))])
      await limitSecondFactorAttempts(c.env.RATE_LIMITER, c.var.config, c.var.user.id)
      const codes = await confirmTotpEnrolment(c.var.db, c.var.config, factor, c.req.valid('json').code)
      return c.json({ recovery_codes: codes }, 200)
    })
    .openapi(removeRoute, async (c) => {
      const [[factor]] = await authorizedBatch(c, [totpFactorQuery(c.var.db, callerId(c))])
      await limitSecondFactorAttempts(c.env.RATE_LIMITER, c.var.config, c.var.user.id)
      const { code, recovery_code } = c.req.valid('json')
      await removeTotpFactor(c.var.db, c.var.config, c.var.user.id, factor, { code, recoveryCode: recovery_code })
      return c.json({ message: 'the second factor was removed' }, 200)
    })
    .openapi(renewRoute, async (c) => {
      const [[factor]] = await authorizedBatch(c, [totpFactorQuery(c.var.db, callerId(c))])
      await limitSecondFactorAttempts(c.env.RATE_LIMITER, c.var.config, c.var.user.id)
      const { code, recovery_code } = c.req.valid('json')
      return c.json(
        {
          recovery_codes: await renewRecoveryCodes(c.var.db, c.var.config, factor, {
            code,
            recoveryCode: recovery_code,
          }),
        },
        200,
      )
    })
    .openapi(loginStepRoute, async (c) => {
      const { second_factor_token, code, recovery_code } = c.req.valid('json')
      const claims = await readSecondStepToken(c.var.config, second_factor_token)
      if (!claims) throw new ApiError('TOKEN_INVALID')
      await limitSecondFactorAttempts(c.env.RATE_LIMITER, c.var.config, claims.sub)
      const db = c.var.db
      const [[user], [factor]] = await db.batch([findUserQuery(db, claims.sub), totpFactorQuery(db, claims.sub)])
      // A password reset or "sign out everywhere" since the password step ends the login.
      if (!user || user.securityStamp !== claims.stm) throw new ApiError('TOKEN_INVALID')
      const spending = await proofSpending(db, c.var.config, factor, { code, recoveryCode: recovery_code })
      if (!spending) throw new ApiError('SECOND_FACTOR_INVALID')
      // One round trip: the proof spent, then the token only if the proof was (a typo does not end the login, and the
      // rate limit bounds the guesses), then the session only if the token was.
      const session = await sessionStart(db, c.var.config, user.id, clientOf(c), { afterChange: true })
      const [proof, token] = await db.batch([
        spending.write,
        tokenSpending(db, claims.jti, claims.exp, { userId: user.id, condition: previousChanged }),
        ...session.statements,
      ])
      if (proof.length === 0) throw new ApiError('SECOND_FACTOR_INVALID')
      if (token.length === 0) throw new ApiError('TOKEN_INVALID')
      return c.json({ ...(await sessionAnswer(c, user, session)), user: loginShape(user) }, 200)
    })
}
