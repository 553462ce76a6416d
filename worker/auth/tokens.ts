// JWTs: HS256 only (pinned when verifying), with iss, aud, sub, iat, exp, jti and a `typ` claim that each
// endpoint enforces, so a verify or reset token can never stand in for an access token. Access tokens also
// carry the user's security stamp (`stm`), checked against the user on each request.
import { errors, jwtVerify, SignJWT } from 'jose'
import type { Config } from '../config'

export type TokenType = 'auth' | 'verify' | 'reset'

export interface TokenClaims {
  sub: string
  typ: TokenType
  jti: string
  stm: string
  exp: number
  iat: number
}

const ALGORITHM = 'HS256'

function lifetimeSeconds(config: Config, type: TokenType): number {
  if (type === 'auth') return config.AUTH_JWT_EXPIRATION_AUTH
  if (type === 'verify') return config.AUTH_JWT_EXPIRATION_VERIFY
  return config.AUTH_JWT_EXPIRATION_RESET
}

function key(config: Config): Uint8Array {
  return new TextEncoder().encode(config.JWT_SECRET)
}

export async function issueToken(
  config: Config,
  type: TokenType,
  user: { id: string; securityStamp: string },
): Promise<{ token: string; expiresIn: number; jti: string }> {
  const expiresIn = lifetimeSeconds(config, type)
  const jti = crypto.randomUUID()
  const token = await new SignJWT({ typ: type, stm: user.securityStamp })
    .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT' })
    .setSubject(user.id)
    .setIssuer(config.JWT_ISSUER)
    .setAudience(config.JWT_AUDIENCE)
    .setJti(jti)
    .setIssuedAt()
    .setExpirationTime(`${expiresIn}s`)
    .sign(key(config))
  return { token, expiresIn, jti }
}

/** Verifies signature, algorithm, issuer, audience, expiry and type; undefined for anything wrong. */
export async function readToken(config: Config, token: string, type: TokenType): Promise<TokenClaims | undefined> {
  try {
    const { payload } = await jwtVerify(token, key(config), {
      algorithms: [ALGORITHM],
      issuer: config.JWT_ISSUER,
      audience: config.JWT_AUDIENCE,
      requiredClaims: ['sub', 'exp', 'iat', 'jti'],
    })
    if (payload.typ !== type || typeof payload.stm !== 'string') return undefined
    return payload as unknown as TokenClaims
  } catch (error) {
    if (error instanceof errors.JOSEError || error instanceof TypeError) return undefined
    throw error
  }
}
