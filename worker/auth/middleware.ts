// requireAuth: the bearer access token → the caller on c.var.user, or 401. One D1 read per request checks both the
// user's security stamp (password reset, "log out everywhere") and the token's session (logout, refresh-token reuse,
// DELETE /auth/sessions/:id), so any of them ends the token at once. That read also brings the account (all but the
// password hash), so a route about the caller needs no second one. Its statement is prepared once per database
// client and isolate: building it costs more than verifying the token (docs/benchmarks.md, "Accounts").
// A route can share that round trip, since far from D1 each one is a network round trip. With
// `requireAuth({ sharesRoundTrip: true })` the middleware verifies the token's signature only, and the route's first
// reads go in one batch with the check (`authorizedBatch`); their results are dropped unless the check passes.
// A route that never calls it is checked after it answers, its answer replaced by the 401. A write route writes
// after the check, or in its batch guarded by `callerIsLive`. An API key (efk_…) is checked at once, its scopes held
// to the route (auth/api-keys.ts): it has no session to share a round trip with.
import type { BatchItem, BatchResponse } from 'drizzle-orm/batch'
import { and, eq, getTableColumns, sql, type SQL } from 'drizzle-orm'
import type { Context } from 'hono'
import { createMiddleware } from 'hono/factory'
import { routePath } from 'hono/route'
import type { AppEnv } from '../api'
import type { Config } from '../config'
import type { Database } from '../db/client'
import { sessions, users } from '../db/schema'
import { ApiError } from '../errors'
import { authenticateApiKey, isApiKey } from './api-keys'
import { readToken, type TokenClaims } from './tokens'
import { toAuthUser, type AccountRecord, type AuthUser } from './users'

export function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)$/i.exec(header ?? '')
  return match?.[1]
}

const unauthorized = (code: 'TOKEN_MISSING' | 'TOKEN_INVALID' | 'TOKEN_REVOKED', message?: string) =>
  new ApiError(code, { message, headers: { 'www-authenticate': 'Bearer' } })

const { passwordHash: _, ...accountColumns } = getTableColumns(users)

// The session's columns are named apart from the user's: in a batch D1 answers rows as objects, where a second `id`
// would overwrite the first.
const sessionId = sql<string | null>`${sessions.id}`.as('session_id')
const sessionRevokedAt = sql<number | null>`${sessions.revokedAt}`.as('session_revoked_at')

function sessionCheckQuery(db: Database, sub: unknown, sid: unknown) {
  return db
    .select({ account: accountColumns, sessionId, revokedAt: sessionRevokedAt })
    .from(users)
    .leftJoin(sessions, and(eq(sessions.id, sid as string), eq(sessions.userId, users.id)))
    .where(eq(users.id, sub as string))
    .limit(1)
}

type SessionCheckRow = Awaited<ReturnType<typeof sessionCheckQuery>>[number]

function prepareSessionCheck(db: Database) {
  return sessionCheckQuery(db, sql.placeholder('sub'), sql.placeholder('sid')).prepare()
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

type BearerOptions = {
  /** What a valid token of an account that is gone answers: this code, else 401 TOKEN_INVALID. */
  missingUser?: 'USER_NOT_FOUND'
  missingTokenMessage?: string
  request?: { method: string; routePath: string }
}

/**
 * The caller of an access token, with the session it belongs to, or of an API key (no session: `sessionId` empty);
 * throws 401 (404 USER_NOT_FOUND on request), or 403 when an API key's scopes do not reach `request`.
 */
export async function authenticateBearer(
  config: Config,
  db: Database,
  header: string | undefined,
  options: BearerOptions = {},
): Promise<{ user: AuthUser; account: AccountRecord; sessionId: string }> {
  const token = bearerToken(header)
  if (!token) throw unauthorized('TOKEN_MISSING', options.missingTokenMessage)
  if (isApiKey(token)) return { ...(await authenticateApiKey(db, token, options.request)), sessionId: '' }
  const claims = await verifiedClaims(config, token)
  return settleCheck(await sessionCheck(db).get({ sub: claims.sub, sid: claims.sid }), claims, options)
}

/** The access token's claims, its signature, expiry and type verified (no D1); throws 401. */
async function verifiedClaims(config: Config, token: string): Promise<TokenClaims & { sid: string }> {
  const claims = await readToken(config, token, 'auth')
  if (!claims?.sid) throw unauthorized('TOKEN_INVALID')
  return claims as TokenClaims & { sid: string }
}

function settleCheck(
  row: SessionCheckRow | undefined,
  claims: TokenClaims,
  options: { missingUser?: 'USER_NOT_FOUND' },
) {
  if (!row) {
    if (options.missingUser) throw new ApiError(options.missingUser)
    throw unauthorized('TOKEN_INVALID')
  }
  if (row.account.securityStamp !== claims.stm || !row.sessionId || row.revokedAt !== null)
    throw unauthorized('TOKEN_REVOKED')
  return { user: toAuthUser(row.account), account: row.account, sessionId: row.sessionId }
}

function setCaller(c: Context<AppEnv>, caller: { user: AuthUser; account: AccountRecord; sessionId: string }) {
  c.set('user', caller.user)
  c.set('account', caller.account)
  c.set('sessionId', caller.sessionId)
  c.set('pendingClaims', undefined)
}

export function requireAuth(options: { missingUser?: 'USER_NOT_FOUND'; sharesRoundTrip?: boolean } = {}) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const header = c.req.header('authorization')
    const token = bearerToken(header)
    if (!options.sharesRoundTrip || !token || isApiKey(token)) {
      setCaller(
        c,
        await authenticateBearer(c.var.config, c.var.db, header, {
          ...options,
          request: { method: c.req.method, routePath: routePath(c) },
        }),
      )
      return next()
    }
    c.set('pendingClaims', await verifiedClaims(c.var.config, token))
    await next()
    // The route never checked (it read nothing, or failed before): check here; a refusal replaces its answer.
    const claims = c.var.pendingClaims
    if (claims)
      setCaller(c, settleCheck(await sessionCheck(c.var.db).get({ sub: claims.sub, sid: claims.sid }), claims, options))
  })
}

/** For a route that authenticates by other means too (a signed URL): the bearer token verified, its session check
 * owed to the route's first authorizedBatch. */
export async function deferBearer(c: Context<AppEnv>, options: { missingTokenMessage?: string } = {}): Promise<void> {
  const header = c.req.header('authorization')
  const token = bearerToken(header)
  if (!token || isApiKey(token)) {
    setCaller(
      c,
      await authenticateBearer(c.var.config, c.var.db, header, {
        ...options,
        request: { method: c.req.method, routePath: routePath(c) },
      }),
    )
    return
  }
  c.set('pendingClaims', await verifiedClaims(c.var.config, token))
}

/** The caller's user id: from the verified token while the session check waits for the route's first batch. */
export function callerId(c: Context<AppEnv>): string {
  return c.var.pendingClaims?.sub ?? c.var.user.id
}

/** True in a WHERE clause while the session check still owed would pass (the token's session live, the account's
 * stamp the token's): it guards a write that goes in the check's own batch, so a refused token writes nothing. */
export function callerIsLive(c: Context<AppEnv>): SQL {
  const claims = c.var.pendingClaims
  if (!claims) return sql`1 = 1`
  return sql`exists (select 1 from ${sessions} join ${users} on ${users.id} = ${sessions.userId} where ${sessions.id} = ${claims.sid} and ${users.id} = ${claims.sub} and ${users.securityStamp} = ${claims.stm} and ${sessions.revokedAt} is null)`
}

/** The caller's security stamp: the verified token's while its session check is owed (the check passes only when the
 * account's stamp is still that one). */
export function callerStamp(c: Context<AppEnv>): string {
  return c.var.pendingClaims?.stm ?? c.var.user.securityStamp
}

/**
 * The session of the caller's access token: from the verified token while the session check waits.
 * API keys have none: ''.
 */
export function callerSessionId(c: Context<AppEnv>): string {
  return c.var.pendingClaims?.sid ?? c.var.sessionId
}

/**
 * The route's reads in one D1 round trip with the session check still owed (requireAuth `sharesRoundTrip`): a
 * refused token throws its 401 before any result is seen, and the caller is on c.var.user after it.
 */
export async function authorizedBatch<U extends BatchItem<'sqlite'>, T extends Readonly<[U, ...U[]]>>(
  c: Context<AppEnv>,
  queries: T,
): Promise<BatchResponse<T>> {
  const claims = c.var.pendingClaims
  if (!claims) return c.var.db.batch(queries)
  const [check, ...results] = await c.var.db.batch([sessionCheckQuery(c.var.db, claims.sub, claims.sid), ...queries])
  setCaller(c, settleCheck((check as SessionCheckRow[])[0], claims, {}))
  return results as unknown as BatchResponse<T>
}
