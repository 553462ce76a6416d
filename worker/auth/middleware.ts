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

const unauthorized = (message: string) =>
  new ApiError(401, message, { code: 'unauthorized', headers: { 'www-authenticate': 'Bearer' } })

export function requireAuth(options: { missingUserStatus?: 401 | 404 } = {}) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const token = bearerToken(c.req.header('authorization'))
    if (!token) throw unauthorized('missing bearer token')
    const claims = await readToken(c.var.config, token, 'auth')
    if (!claims) throw unauthorized('invalid or expired token')
    const user = await findUser(c.var.db, claims.sub)
    if (!user) {
      if (options.missingUserStatus === 404) throw new ApiError(404, 'user not found', { code: 'user_not_found' })
      throw unauthorized('invalid or expired token')
    }
    if (user.securityStamp !== claims.stm) throw unauthorized('token was revoked')
    c.set('user', toAuthUser(user))
    await next()
  })
}
