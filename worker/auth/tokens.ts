// JWTs: HS256 only (pinned when verifying), with iss, aud, sub, iat, exp, jti and a `typ` claim that each
// endpoint enforces, so a verify or reset token can never stand in for an access token. Every token carries the
// user's security stamp (`stm`); access tokens also carry their session (`sid`), verify tokens the address they
// were sent to (`eml`): both are checked against D1 when the token is used.
import { errors, jwtVerify, SignJWT } from 'jose'
import type { Config } from '../config'

export type TokenType = 'auth' | 'verify' | 'reset'

export interface TokenClaims {
  sub: string
  typ: TokenType
  jti: string
  stm: string
  /** Access tokens: the session (refresh-token family) they belong to. */
  sid?: string
  /** Verify tokens: the address the email went to; it must still be the account's. */
  eml?: string
  exp: number
  iat: number
}

const ALGORITHM = 'HS256'

function lifetimeSeconds(config: Config, type: TokenType): number {
  if (type === 'auth') return config.AUTH_JWT_EXPIRATION_AUTH
  if (type === 'verify') return config.AUTH_JWT_EXPIRATION_VERIFY
  return config.AUTH_JWT_EXPIRATION_RESET
}

/** The HMAC key, imported once per isolate (per secret) rather than on every request. */
const keys = new Map<string, Promise<CryptoKey>>()

function key(config: Config): Promise<CryptoKey> {
  let imported = keys.get(config.JWT_SECRET)
  if (!imported) {
    imported = crypto.subtle.importKey(
      'raw',
      new TextEncoder().encode(config.JWT_SECRET),
      { name: 'HMAC', hash: 'SHA-256' },
      false,
      ['sign', 'verify'],
    )
    keys.set(config.JWT_SECRET, imported)
  }
  return imported
}

export async function issueToken(
  config: Config,
  type: TokenType,
  user: { id: string; securityStamp: string; email: string },
  sessionId?: string,
): Promise<{ token: string; expiresIn: number; jti: string }> {
  const expiresIn = lifetimeSeconds(config, type)
  const jti = crypto.randomUUID()
  const bound = type === 'auth' ? { sid: sessionId } : type === 'verify' ? { eml: user.email } : {}
  const token = await new SignJWT({ typ: type, stm: user.securityStamp, ...bound })
    .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT' })
    .setSubject(user.id)
    .setIssuer(config.JWT_ISSUER)
    .setAudience(config.JWT_AUDIENCE)
    .setJti(jti)
    .setIssuedAt()
    .setExpirationTime(`${expiresIn}s`)
    .sign(await key(config))
  return { token, expiresIn, jti }
}

/** Verifies signature, algorithm, issuer, audience, expiry and type; undefined for anything wrong. */
export async function readToken(config: Config, token: string, type: TokenType): Promise<TokenClaims | undefined> {
  try {
    const { payload } = await jwtVerify(token, await key(config), {
      algorithms: [ALGORITHM],
      issuer: config.JWT_ISSUER,
      audience: config.JWT_AUDIENCE,
      requiredClaims: ['sub', 'exp', 'iat', 'jti'],
    })
    if (payload.typ !== type || typeof payload.stm !== 'string') return undefined
    if (type === 'auth' && typeof payload.sid !== 'string') return undefined
    if (type === 'verify' && typeof payload.eml !== 'string') return undefined
    return payload as unknown as TokenClaims
  } catch (error) {
    if (error instanceof errors.JOSEError || error instanceof TypeError) return undefined
    throw error
  }
}
