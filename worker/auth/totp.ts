// The TOTP second factor of an account: enrolment (a secret, confirmed by a first code), recovery codes, checking a
// code once, and the short-lived token that carries a login from its password step to its second step. The secret
// is stored encrypted (AES-GCM, key derived from JWT_SECRET by HKDF), so a copy of the database alone cannot mint
// codes (worker/sealing.ts); recovery codes only as SHA-256.
import { and, count, eq, isNull, lt, notInArray, sql, type SQL } from 'drizzle-orm'
import { insertForUser, previousChanged } from '../db/guarded'
import { errors, jwtVerify, SignJWT } from 'jose'
import type { Config } from '../config'
import type { Database } from '../db/client'
import { newId } from '../db/ids'
import { recoveryCodes, totpFactors } from '../db/schema'
import { ApiError } from '../errors'
import { openSealed, sealBytes } from '../sealing'
import { base32Encode, matchingStep, otpauthUri } from './otp'
import { enforceRateLimit, MINUTE_MS, rateLimited } from './rate-limit'
import { sha256Hex } from './sessions'

/** RFC 4226 §4 asks for a shared secret of at least 128 bits and recommends 160: 20 bytes. */
const SECRET_BYTES = 20
export const RECOVERY_CODE_COUNT = 10
/** How long the second step may follow the password step. */
const SECOND_STEP_TTL_SECONDS = 300

const encoder = new TextEncoder()
const SEALING_PURPOSE = 'totp secret'
const sealSecret = (config: Config, userId: string, secret: Uint8Array) =>
  sealBytes(config, SEALING_PURPOSE, userId, secret)
const openSecret = (config: Config, userId: string, sealed: string) =>
  openSealed(config, SEALING_PURPOSE, userId, sealed)

export type TotpFactor = typeof totpFactors.$inferSelect

/** The user's factor as a statement a batch can carry: a list of at most one (a relational findFirst fails in a
 * D1 batch when nothing matches). */
export function totpFactorQuery(db: Database, userId: string) {
  return db.select().from(totpFactors).where(eq(totpFactors.userId, userId)).limit(1)
}

/**
 * After a login's password step: an account that confirmed a factor gets no session yet, but 401
 * SECOND_FACTOR_REQUIRED with a short-lived token for POST /auth/login/totp. PocketBase's way: a client that knows no
 * second factor sees a refused login, never a session without one.
 */
export async function requireSecondStep(
  config: Config,
  user: { id: string; securityStamp: string; hasSecondFactor: boolean },
): Promise<void> {
  if (!user.hasSecondFactor) return
  const { token, expiresIn } = await issueSecondStepToken(config, user)
  throw new ApiError('SECOND_FACTOR_REQUIRED', {
    details: { second_factor_token: token, expires_in: expiresIn, methods: ['totp', 'recovery_code'] },
  })
}

/** The issuer an authenticator app shows beside the code: the API's host name (APP_URL). */
export function totpIssuer(config: Config): string {
  return new URL(config.APP_URL).hostname
}

/** Starts (or restarts) enrolment: a new secret, not enforced until confirmed. 409 once a factor is confirmed.
 * `existing` is the user's factor, read by the caller (in the session check's round trip). */
export async function startTotpEnrolment(
  db: Database,
  config: Config,
  user: { id: string; email: string },
  existing: TotpFactor | undefined,
): Promise<{ secret: string; uri: string }> {
  if (existing?.confirmedAt != null) throw new ApiError('TOTP_ALREADY_ENABLED')
  const secret = crypto.getRandomValues(new Uint8Array(SECRET_BYTES))
  const sealed = await sealSecret(config, user.id, secret)
  const now = Date.now()
  // Only an unconfirmed factor is replaced: a confirmed one that appeared meanwhile stays.
  await db
    .insert(totpFactors)
    .values({ userId: user.id, secret: sealed, createdAt: now })
    .onConflictDoUpdate({
      target: totpFactors.userId,
      set: { secret: sealed, createdAt: now, lastUsedStep: 0 },
      setWhere: isNull(totpFactors.confirmedAt),
    })
  return { secret: base32Encode(secret), uri: otpauthUri(totpIssuer(config), user.email, secret) }
}

/**
 * The conditional update that spends a TOTP code of the factor (one row when it did), for a batch; undefined for a
 * code of no step after the last one used, which spends nothing. The update is the lock, so of two requests with one
 * code only one succeeds (RFC 6238 §5.2: the verifier must not accept the second attempt of an OTP after a
 * successful validation). Wrapped in an object: an async function would run a query it returned.
 */
async function totpCodeSpending(db: Database, config: Config, factor: TotpFactor, code: string) {
  const step = await matchingStep(await openSecret(config, factor.userId, factor.secret), code, Date.now() / 1000)
  if (step === undefined || step <= factor.lastUsedStep) return undefined
  return {
    write: db
      .update(totpFactors)
      .set({ lastUsedStep: step })
      .where(and(eq(totpFactors.userId, factor.userId), lt(totpFactors.lastUsedStep, step)))
      .returning({ userId: totpFactors.userId }),
  }
}

/** Recovery codes: 16 base32 characters (80 random bits) in groups of four. */
function newRecoveryCode(): string {
  const code = base32Encode(crypto.getRandomValues(new Uint8Array(10))).toLowerCase()
  return code.match(/.{4}/g)!.join('-')
}

const normalizeRecoveryCode = (code: string) => code.toLowerCase().replace(/[^a-z2-7]/g, '')

/**
 * The writes that replace the user's recovery codes with new ones (answered once), for the batch of the write they
 * follow. Each new code is inserted only when the statement before it changed a row: the proof spent or the factor
 * confirmed, then the code before it. The old codes are deleted only once the last new one is in.
 */
async function recoveryCodeReplacement(db: Database, userId: string) {
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode)
  const rows = await Promise.all(
    codes.map(async (code) => ({ id: newId(), userId, codeHash: await sha256Hex(normalizeRecoveryCode(code)) })),
  )
  const ids = rows.map((row) => row.id)
  const isLastIn = sql`exists (select 1 from ${recoveryCodes} where ${recoveryCodes.id} = ${ids.at(-1)})`
  const statements = [
    ...rows.map((row) => insertForUser(db, recoveryCodes, row, userId)),
    db.delete(recoveryCodes).where(and(eq(recoveryCodes.userId, userId), notInArray(recoveryCodes.id, ids), isLastIn)),
  ] as const
  return { codes, statements }
}

/** Confirms enrolment with a first code: the factor is enforced from now on; answers the recovery codes. One round
 * trip: the code spent, then the factor confirmed, then the codes, each only if the one before it was. */
export async function confirmTotpEnrolment(
  db: Database,
  config: Config,
  factor: TotpFactor | undefined,
  code: string,
): Promise<string[]> {
  if (!factor) throw new ApiError('TOTP_NOT_ENABLED', { message: 'start TOTP enrolment first (POST /auth/totp)' })
  if (factor.confirmedAt != null) throw new ApiError('TOTP_ALREADY_ENABLED')
  const claim = await totpCodeSpending(db, config, factor, code)
  if (!claim) throw new ApiError('SECOND_FACTOR_INVALID')
  const replacement = await recoveryCodeReplacement(db, factor.userId)
  const [claimed, confirmed] = await db.batch([
    claim.write,
    db
      .update(totpFactors)
      .set({ confirmedAt: Date.now() })
      .where(and(eq(totpFactors.userId, factor.userId), isNull(totpFactors.confirmedAt), previousChanged))
      .returning({ userId: totpFactors.userId }),
    ...replacement.statements,
  ])
  if (claimed.length === 0) throw new ApiError('SECOND_FACTOR_INVALID')
  if (confirmed.length === 0) throw new ApiError('TOTP_ALREADY_ENABLED')
  return replacement.codes
}

export interface SecondFactorProof {
  code?: string | undefined
  recoveryCode?: string | undefined
}

/**
 * The write that spends a proof of the confirmed factor (a TOTP code or a recovery code), for a batch: it answers
 * one row when it spent it. Undefined when the proof cannot be good (no confirmed factor, a code of no acceptable
 * step): nothing to write.
 */
export async function proofSpending(
  db: Database,
  config: Config,
  factor: TotpFactor | undefined,
  proof: SecondFactorProof,
) {
  if (factor?.confirmedAt == null) return undefined
  if (proof.code !== undefined) return totpCodeSpending(db, config, factor, proof.code)
  if (proof.recoveryCode === undefined) return undefined
  const codeHash = await sha256Hex(normalizeRecoveryCode(proof.recoveryCode))
  return {
    write: db
      .update(recoveryCodes)
      .set({ usedAt: Date.now() })
      .where(
        and(
          eq(recoveryCodes.userId, factor.userId),
          eq(recoveryCodes.codeHash, codeHash),
          isNull(recoveryCodes.usedAt),
        ),
      )
      .returning({ userId: recoveryCodes.userId }),
  }
}

/** The reads of GET /auth/totp, for one batch: the factor and the recovery codes left. */
export function totpStatusQueries(db: Database, userId: string) {
  return [
    totpFactorQuery(db, userId),
    db
      .select({ left: count() })
      .from(recoveryCodes)
      .where(and(eq(recoveryCodes.userId, userId), isNull(recoveryCodes.usedAt))),
  ] as const
}

/** The factor's state for GET /auth/totp, from its reads. */
export function totpStatus(
  factor: TotpFactor | undefined,
  left: number,
): { enabled: boolean; pending: boolean; confirmedAt: number | null; recoveryCodesLeft: number } {
  return {
    enabled: factor?.confirmedAt != null,
    pending: factor !== undefined && factor.confirmedAt == null,
    confirmedAt: factor?.confirmedAt ?? null,
    recoveryCodesLeft: left,
  }
}

/** Removes the factor and its recovery codes, after a proof of a confirmed one (a current code or a recovery code),
 * in one round trip: the removal only if the proof was spent. `factor` is the user's, read by the caller. */
export async function removeTotpFactor(
  db: Database,
  config: Config,
  userId: string,
  factor: TotpFactor | undefined,
  proof: SecondFactorProof,
): Promise<void> {
  if (!factor) throw new ApiError('TOTP_NOT_ENABLED')
  const removal = (condition?: SQL) =>
    [
      db.delete(totpFactors).where(and(eq(totpFactors.userId, userId), condition)),
      db.delete(recoveryCodes).where(and(eq(recoveryCodes.userId, userId), condition)),
    ] as const
  if (factor.confirmedAt == null) {
    await db.batch(removal())
    return
  }
  const spending = await proofSpending(db, config, factor, proof)
  if (!spending) throw new ApiError('SECOND_FACTOR_INVALID')
  const [spent] = await db.batch([spending.write, ...removal(previousChanged)])
  if (spent.length === 0) throw new ApiError('SECOND_FACTOR_INVALID')
}

/** New recovery codes (the old ones stop working), after a proof of the factor, in one round trip: the codes only if
 * the proof was spent. `factor` is the user's, read by the caller. */
export async function renewRecoveryCodes(
  db: Database,
  config: Config,
  factor: TotpFactor | undefined,
  proof: SecondFactorProof,
): Promise<string[]> {
  if (factor?.confirmedAt == null) throw new ApiError('TOTP_NOT_ENABLED')
  const spending = await proofSpending(db, config, factor, proof)
  if (!spending) throw new ApiError('SECOND_FACTOR_INVALID')
  const replacement = await recoveryCodeReplacement(db, factor.userId)
  const [spent] = await db.batch([spending.write, ...replacement.statements])
  if (spent.length === 0) throw new ApiError('SECOND_FACTOR_INVALID')
  return replacement.codes
}

// The second-step token: an HS256 JWT with its own audience and `typ`, so it can never stand in for an access,
// verify or reset token (those are read with the API's audience), nor one of them for it.
const SECOND_STEP_TYPE = 'second-factor'
const secondStepAudience = (config: Config) => `${config.JWT_AUDIENCE}:second-factor`

const hmacKey = (config: Config) => encoder.encode(config.JWT_SECRET)

/** The token a login's password step answers for an account with a second factor; it names the user and their stamp. */
export async function issueSecondStepToken(
  config: Config,
  user: { id: string; securityStamp: string },
): Promise<{ token: string; expiresIn: number }> {
  const token = await new SignJWT({ typ: SECOND_STEP_TYPE, stm: user.securityStamp })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(user.id)
    .setIssuer(config.JWT_ISSUER)
    .setAudience(secondStepAudience(config))
    .setJti(crypto.randomUUID())
    .setIssuedAt()
    .setExpirationTime(`${SECOND_STEP_TTL_SECONDS}s`)
    .sign(hmacKey(config))
  return { token, expiresIn: SECOND_STEP_TTL_SECONDS }
}

/** The claims of a second-step token, or undefined for anything forged, expired or of another kind. */
export async function readSecondStepToken(
  config: Config,
  token: string,
): Promise<{ sub: string; stm: string; jti: string; exp: number } | undefined> {
  try {
    const { payload } = await jwtVerify(token, hmacKey(config), {
      algorithms: ['HS256'],
      issuer: config.JWT_ISSUER,
      audience: secondStepAudience(config),
      requiredClaims: ['sub', 'exp', 'jti'],
    })
    if (payload.typ !== SECOND_STEP_TYPE || typeof payload.stm !== 'string') return undefined
    return payload as { sub: string; stm: string; jti: string; exp: number }
  } catch (error) {
    if (error instanceof errors.JOSEError || error instanceof TypeError) return undefined
    throw error
  }
}

/** Codes one account may try a day, whatever the per-minute limit: six digits are guessed in a few million tries. */
export const SECOND_FACTOR_ATTEMPTS_PER_DAY = 100

/**
 * Counts one code attempt of the account (login step, confirmation, removal, new recovery codes): the per-minute
 * limit of passwords (AUTH_RATE_LIMIT_PER_MINUTE) and SECOND_FACTOR_ATTEMPTS_PER_DAY, so a guesser holding the
 * password has at most 3 × 100 in 10^6 chances a day.
 */
export async function limitSecondFactorAttempts(
  namespace: Env['RATE_LIMITER'],
  config: Config,
  userId: string,
): Promise<void> {
  if (config.AUTH_RATE_LIMIT_PER_MINUTE === 0) return
  await enforceRateLimit(namespace, config, [`second-factor:account:${userId}`])
  const daily = await namespace
    .get(namespace.idFromName(`second-factor-day:account:${userId}`))
    .hit(SECOND_FACTOR_ATTEMPTS_PER_DAY, 24 * 60 * MINUTE_MS)
  if (!daily.allowed) throw rateLimited(daily.retryAfterSeconds)
}
