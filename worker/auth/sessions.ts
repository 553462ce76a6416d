// Refresh-token sessions. A refresh token is 32 random bytes, given once to the client and stored only as its
// SHA-256. Each use rotates it within its family; presenting a rotated token again means it leaked, so the
// whole family is revoked.
import { and, eq, isNull } from 'drizzle-orm'
import type { Config } from '../config'
import type { Database } from '../db/client'
import { newId } from '../db/ids'
import { refreshTokens } from '../db/schema'
import { ApiError } from '../errors'

export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text))
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('')
}

function newOpaqueToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32))
  return btoa(String.fromCharCode(...bytes)).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '')
}

/** Starts a session (a new family) or continues one, and returns the refresh token to hand out. */
export async function issueRefreshToken(db: Database, config: Config, userId: string, familyId = newId()): Promise<string> {
  const token = newOpaqueToken()
  const now = Date.now()
  await db.insert(refreshTokens).values({
    id: newId(now),
    userId,
    familyId,
    tokenHash: await sha256Hex(token),
    expiresAt: now + config.AUTH_REFRESH_TTL * 1000,
    createdAt: now,
  })
  return token
}

const INVALID = () => new ApiError('INVALID_REFRESH_TOKEN')

export type StoredRefreshToken = typeof refreshTokens.$inferSelect

/** The stored row of a refresh token, spent or not (its owner is known before anything is decided), or 401. */
export async function findRefreshToken(db: Database, token: string): Promise<StoredRefreshToken> {
  const found = await db.query.refreshTokens.findFirst({ where: eq(refreshTokens.tokenHash, await sha256Hex(token)) })
  if (!found) throw INVALID()
  return found
}

/** Exchanges a refresh token for the next one of its family; reuse revokes the family. Returns the user id. */
export async function rotateRefreshToken(db: Database, config: Config, found: StoredRefreshToken): Promise<{ userId: string; refreshToken: string }> {
  const now = Date.now()
  if (found.revokedAt !== null || found.expiresAt <= now) throw INVALID()
  // The conditional update is the lock: of two concurrent uses, only one sees its row change.
  const claimed = await db
    .update(refreshTokens)
    .set({ rotatedAt: now })
    .where(and(eq(refreshTokens.id, found.id), isNull(refreshTokens.rotatedAt), isNull(refreshTokens.revokedAt)))
    .returning({ id: refreshTokens.id })
  if (claimed.length === 0) {
    await revokeFamily(db, found.familyId)
    throw new ApiError('REFRESH_TOKEN_REUSED')
  }
  return { userId: found.userId, refreshToken: await issueRefreshToken(db, config, found.userId, found.familyId) }
}

export async function revokeFamily(db: Database, familyId: string): Promise<void> {
  await db
    .update(refreshTokens)
    .set({ revokedAt: Date.now() })
    .where(and(eq(refreshTokens.familyId, familyId), isNull(refreshTokens.revokedAt)))
}

/** Logs out one session: the family of the presented token, if it is the caller's. */
export async function revokeSessionOf(db: Database, userId: string, token: string): Promise<boolean> {
  const found = await db.query.refreshTokens.findFirst({
    where: and(eq(refreshTokens.tokenHash, await sha256Hex(token)), eq(refreshTokens.userId, userId)),
  })
  if (!found) return false
  await revokeFamily(db, found.familyId)
  return true
}

export async function revokeAllSessions(db: Database, userId: string): Promise<void> {
  await db
    .update(refreshTokens)
    .set({ revokedAt: Date.now() })
    .where(and(eq(refreshTokens.userId, userId), isNull(refreshTokens.revokedAt)))
}
