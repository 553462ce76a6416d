// requireAuth: the bearer access token → the caller on c.var.user, or 401. One D1 read per request checks both the
// user's security stamp (password reset, "log out everywhere") and the token's session (logout, refresh-token reuse,
// DELETE /auth/sessions/:id), so any of them ends the token at once. That read also brings the account (all but the
// password hash), so a route about the caller needs no second one. Its statement is prepared once per database
// client and isolate: building it anew cost more than verifying the token (bench:auth, docs/benchmarks.md).
import { and, eq, getTableColumns, sql } from 'drizzle-orm'
import { createMiddleware } from 'hono/factory'
import { routePath } from 'hono/route'
import type { AppEnv } from '../api'
import type { Config } from '../config'
import type { Database } from '../db/client'
import { sessions, users } from '../db/schema'
import { ApiError } from '../errors'
import { authenticateApiKey, isApiKey } from './api-keys'
import { readToken } from './tokens'
import { toAuthUser, type AccountRecord, type AuthUser } from './users'

export function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)$/i.exec(header ?? '')
  return match?.[1]
}

const unauthorized = (code: 'TOKEN_MISSING' | 'TOKEN_INVALID' | 'TOKEN_REVOKED', message?: string) =>
  new ApiError(code, { message, headers: { 'www-authenticate': 'Bearer' } })

const { passwordHash: _, ...accountColumns } = getTableColumns(users)

function prepareSessionCheck(db: Database) {
  return db
    .select({ account: accountColumns, sessionId: sessions.id, revokedAt: sessions.revokedAt })
    .from(users)
    .leftJoin(sessions, and(eq(sessions.id, sql.placeholder('sid')), eq(sessions.userId, users.id)))
    .where(eq(users.id, sql.placeholder('sub')))
    .limit(1)
    .prepare()
}

const sessionChecks = new WeakMap<Database, ReturnType<typeof prepareSessionCheck>>()

function sessionCheck(db: Database) {
  let prepared = sessionChecks.get(db)
  if (!prepared) {
    prepared = prepareSessionCheck(db)
    sessionChecks.set(db, prepared)
  }
  return prepared
}

/** The caller of an access token, with the session it belongs to; throws 401 (404 USER_NOT_FOUND on request). */
export async function authenticateBearer(
  config: Config,
  db: Database,
  header: string | undefined,
  options: { missingUserStatus?: 401 | 404; missingTokenMessage?: string; request?: { method: string; routePath: string } } = {},
): Promise<{ user: AuthUser; account: AccountRecord; sessionId: string }> {
  const token = bearerToken(header)
  if (!token) throw unauthorized('TOKEN_MISSING', options.missingTokenMessage)
  // An API key (efk_…) rather than a JWT: it has no session, and its scopes decide by the route (auth/api-keys.ts).
  if (isApiKey(token)) return { ...(await authenticateApiKey(db, token, options.request)), sessionId: '' }
  const claims = await readToken(config, token, 'auth')
  if (!claims?.sid) throw unauthorized('TOKEN_INVALID')
  const row = await sessionCheck(db).get({ sub: claims.sub, sid: claims.sid })
  if (!row) {
    if (options.missingUserStatus === 404) throw new ApiError('USER_NOT_FOUND')
    throw unauthorized('TOKEN_INVALID')
  }
  if (row.account.securityStamp !== claims.stm || !row.sessionId || row.revokedAt !== null) throw unauthorized('TOKEN_REVOKED')
  return { user: toAuthUser(row.account), account: row.account, sessionId: row.sessionId }
}

export function requireAuth(options: { missingUserStatus?: 401 | 404 } = {}) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const request = { method: c.req.method, routePath: routePath(c) }
    const { user, account, sessionId } = await authenticateBearer(c.var.config, c.var.db, c.req.header('authorization'), { ...options, request })
    c.set('user', user)
    c.set('account', account)
    c.set('sessionId', sessionId)
    await next()
  })
}
