// requireAuth: the bearer access token → the caller on c.var.user, or 401. The token's security stamp must
// match the user's, so a password reset or "log out everywhere" ends tokens issued before it.
import { createMiddleware } from 'hono/factory'
import type { AppEnv } from '../api'
import { ApiError } from '../errors'
import { readToken } from './tokens'
import { findUser, toAuthUser } from './users'

export function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)$/i.exec(header ?? '')
  return match?.[1]
}

const unauthorized = (code: 'TOKEN_MISSING' | 'TOKEN_INVALID' | 'TOKEN_REVOKED') => new ApiError(code, { headers: { 'www-authenticate': 'Bearer' } })

export function requireAuth(options: { missingUserStatus?: 401 | 404 } = {}) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const token = bearerToken(c.req.header('authorization'))
    if (!token) throw unauthorized('TOKEN_MISSING')
    const claims = await readToken(c.var.config, token, 'auth')
    if (!claims) throw unauthorized('TOKEN_INVALID')
    const user = await findUser(c.var.db, claims.sub)
    if (!user) {
      if (options.missingUserStatus === 404) throw new ApiError('USER_NOT_FOUND')
      throw unauthorized('TOKEN_INVALID')
    }
    if (user.securityStamp !== claims.stm) throw unauthorized('TOKEN_REVOKED')
    c.set('user', toAuthUser(user))
    await next()
  })
}
