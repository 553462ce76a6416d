// Sessions and their refresh tokens. A login starts a session (device, client address); its refresh tokens are one
// family: 32 random bytes each, given once and stored only as SHA-256, rotated on every use. Presenting a rotated
// token again means it leaked, so the session ends. Access tokens carry the session id, so ending a session (logout,
// reuse, DELETE /auth/sessions/:id) ends them too.
import { and, desc, eq, gt, isNull } from 'drizzle-orm'
import type { Config } from '../config'
import type { Database } from '../db/client'
import { insertForUser, previousChanged } from '../db/guarded'
import { newId } from '../db/ids'
import { iso } from '../db/times'
import { refreshTokens, sessions, users } from '../db/schema'
import { ApiError } from '../errors'

export type SessionRow = typeof sessions.$inferSelect

export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text))
  return new Uint8Array(digest).toHex()
}

function newOpaqueToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32))
  return bytes.toBase64({ alphabet: 'base64url', omitPadding: true })
}

/** What a session remembers of the client that opened it: shown in GET /auth/sessions, never trusted. */
export interface ClientFacts {
  readonly device: string
  readonly address: string
}

/** A User-Agent as a device label: printable characters only (it is shown and logged), at most 200. */
export function deviceLabel(userAgent: string | undefined): string {
  return (userAgent ?? '').replace(/[\p{Cc}\p{Cf}]/gu, '').slice(0, 200)
}

/**
 * The writes that start a session for a login (the session, then its first refresh token), for the batch of the
 * login's last round trip; its id and refresh token. With `afterChange` each runs only when the batch's statement
 * before it changed a row (a code or token spent just before it): a login whose proof was spent concurrently gets
 * no session.
 */
export async function sessionStart(
  db: Database,
  config: Config,
  userId: string,
  client: ClientFacts,
  options: { afterChange?: boolean } = {},
) {
  const now = Date.now()
  const sessionId = newId(now)
  const session = {
    id: sessionId,
    userId,
    device: client.device,
    address: client.address,
    createdAt: now,
    lastUsedAt: now,
  }
  const { row, token } = await newRefreshToken(config, userId, sessionId)
  const statements = options.afterChange
    ? ([insertForUser(db, sessions, session, userId), insertForUser(db, refreshTokens, row, userId)] as const)
    : ([db.insert(sessions).values(session), db.insert(refreshTokens).values(row)] as const)
  return { statements, sessionId, refreshToken: token }
}

/** Starts a session for a login, in one round trip; returns its id and first refresh token. */
export async function startSession(
  db: Database,
  config: Config,
  userId: string,
  client: ClientFacts,
): Promise<{ sessionId: string; refreshToken: string }> {
  const { statements, sessionId, refreshToken } = await sessionStart(db, config, userId, client)
  await db.batch(statements)
  return { sessionId, refreshToken }
}

async function newRefreshToken(config: Config, userId: string, sessionId: string) {
  const token = newOpaqueToken()
  const now = Date.now()
  const row = {
    id: newId(now),
    userId,
    familyId: sessionId,
    tokenHash: await sha256Hex(token),
    expiresAt: now + config.AUTH_REFRESH_TTL * 1000,
    createdAt: now,
  }
  return { row, token }
}

const INVALID = () => new ApiError('INVALID_REFRESH_TOKEN')

export type StoredRefreshToken = typeof refreshTokens.$inferSelect

/** The stored row of a refresh token, spent or not (its owner is known before anything is decided), or 401. */
export async function findRefreshToken(db: Database, token: string): Promise<StoredRefreshToken> {
  const found = await db.query.refreshTokens.findFirst({ where: eq(refreshTokens.tokenHash, await sha256Hex(token)) })
  if (!found) throw INVALID()
  return found
}

/** When a live session of the user began (its sign-in), as a query a route can batch with others. */
export function sessionStartQuery(db: Database, userId: string, sessionId: string) {
  return db
    .select({ createdAt: sessions.createdAt })
    .from(sessions)
    .where(and(eq(sessions.id, sessionId), eq(sessions.userId, userId), isNull(sessions.revokedAt)))
    .limit(1)
}

/** Exchanges a refresh token for the next one of its session (and reads its account); reuse ends the session. */
export async function rotateRefreshToken(
  db: Database,
  config: Config,
  found: StoredRefreshToken,
  client: ClientFacts,
): Promise<{ user: typeof users.$inferSelect | undefined; sessionId: string; refreshToken: string }> {
  const now = Date.now()
  if (found.revokedAt !== null || found.expiresAt <= now) throw INVALID()
  const next = await newRefreshToken(config, found.userId, found.familyId)
  // One round trip: the claim, the session's touch only if claimed, the next token only if touched, and the account.
  // The conditional update is the lock: of two concurrent uses, only one sees its row change.
  const [claimed, touched, , [user]] = await db.batch([
    db
      .update(refreshTokens)
      .set({ rotatedAt: now })
      .where(and(eq(refreshTokens.id, found.id), isNull(refreshTokens.rotatedAt), isNull(refreshTokens.revokedAt)))
      .returning({ id: refreshTokens.id }),
    db
      .update(sessions)
      .set({ lastUsedAt: now, address: client.address, device: client.device })
      .where(and(eq(sessions.id, found.familyId), isNull(sessions.revokedAt), previousChanged))
      .returning({ id: sessions.id }),
    insertForUser(db, refreshTokens, next.row, found.userId),
    db.select().from(users).where(eq(users.id, found.userId)).limit(1),
  ])
  if (claimed.length === 0) {
    await endSession(db, found.userId, found.familyId)
    throw new ApiError('REFRESH_TOKEN_REUSED')
  }
  if (touched.length === 0) throw INVALID()
  return { user, sessionId: found.familyId, refreshToken: next.token }
}

/** Ends one session of the user: its refresh tokens and (through `sid`) its access tokens. False if not theirs. */
export async function endSession(db: Database, userId: string, sessionId: string): Promise<boolean> {
  const now = Date.now()
  const [ended] = await db.batch([
    db
      .update(sessions)
      .set({ revokedAt: now })
      .where(and(eq(sessions.id, sessionId), eq(sessions.userId, userId), isNull(sessions.revokedAt)))
      .returning({ id: sessions.id }),
    db
      .update(refreshTokens)
      .set({ revokedAt: now })
      .where(
        and(eq(refreshTokens.familyId, sessionId), eq(refreshTokens.userId, userId), isNull(refreshTokens.revokedAt)),
      ),
  ])
  return ended.length > 0
}

/** Logs out the session a refresh token belongs to, if it is the caller's. */
export async function endSessionOf(db: Database, userId: string, token: string): Promise<boolean> {
  const found = await db.query.refreshTokens.findFirst({
    where: and(eq(refreshTokens.tokenHash, await sha256Hex(token)), eq(refreshTokens.userId, userId)),
  })
  return found ? endSession(db, userId, found.familyId) : false
}

export async function endAllSessions(db: Database, userId: string): Promise<void> {
  await db.batch(allSessionsEnding(db, userId))
}

/** The writes that end every session of the user, for the batch of the write that ends them (a new security stamp). */
export function allSessionsEnding(db: Database, userId: string) {
  const now = Date.now()
  return [
    db
      .update(sessions)
      .set({ revokedAt: now })
      .where(and(eq(sessions.userId, userId), isNull(sessions.revokedAt))),
    db
      .update(refreshTokens)
      .set({ revokedAt: now })
      .where(and(eq(refreshTokens.userId, userId), isNull(refreshTokens.revokedAt))),
  ] as const
}

/** The user's live sessions, most recently used first: not ended, and used within the refresh-token lifetime. */
export function listSessions(db: Database, config: Config, userId: string) {
  const since = Date.now() - config.AUTH_REFRESH_TTL * 1000
  return db.query.sessions.findMany({
    where: and(eq(sessions.userId, userId), isNull(sessions.revokedAt), gt(sessions.lastUsedAt, since)),
    orderBy: desc(sessions.lastUsedAt),
    limit: 100,
  })
}

/** A session as the API shows it (GET /auth/sessions, the admin's view of a user's sessions). */
export function sessionView(row: typeof sessions.$inferSelect) {
  return {
    _id: row.id,
    device: row.device,
    address: row.address,
    created_at: iso(row.createdAt),
    last_used_at: iso(row.lastUsedAt),
  }
}
