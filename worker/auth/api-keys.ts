// API keys for servers: `efk_` and 32 random bytes (base64url), shown once, stored only as SHA-256. A key stands for
// its user on the routes its scopes name (ROUTE_SCOPES) and nowhere else: account and key management, records and
// anything added later refuse it until it is listed here. It ends when revoked, when it expires, when its user's
// security stamp changes (password reset, sign out everywhere) and with its user (the foreign key).
import { and, count, desc, eq, getTableColumns, gt, isNull, or } from 'drizzle-orm'
import type { Database } from '../db/client'
import { newId } from '../db/ids'
import { apiKeys, users } from '../db/schema'
import { ApiError } from '../errors'
import { sha256Hex } from './sessions'
import { toAuthUser, type AccountRecord, type AuthUser } from './users'

/** The key's visible prefix: secret scanners (GitHub's push protection, trufflehog, gitleaks) match a fixed prefix
 * and a known length, so a leaked key can be found and reported; people reading a log tell it from a JWT. */
export const API_KEY_PREFIX = 'efk_'
/** `efk_` and 32 random bytes as 43 base64url characters. */
const API_KEY_PATTERN = /^efk_[A-Za-z0-9_-]{43}$/
/**
 * How much of a key GET /auth/api-keys shows: the prefix and 8 of its random characters.
 * 48 bits of 256 are no help to a guesser.
 */
const SHOWN_LENGTH = API_KEY_PREFIX.length + 8

export const API_KEY_SCOPES = ['files:read', 'files:write', 'convert'] as const
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number]

/** Keys one user may hold at once: each is a row read on every request it makes, and the list answers them all. */
export const MAX_API_KEYS_PER_USER = 50

/** last_used_at moves at most once a minute a key: a busy server's every request would otherwise be a D1 write. */
const LAST_USED_GRANULARITY_MS = 60_000

/**
 * The routes an API key may call, by method and Hono route path, and the scope each needs. Any other route answers
 * 403 INSUFFICIENT_SCOPE to a key (deny by default), so a key can never manage keys, sessions or the account.
 */
export const ROUTE_SCOPES: Readonly<Record<string, ApiKeyScope>> = {
  'GET /files': 'files:read',
  'GET /files/:id': 'files:read',
  'GET /files/:id/files': 'files:read',
  'GET /files/:id/download': 'files:read',
  'GET /files/:id/preview': 'files:read',
  'GET /files/:id/jobs': 'files:read',
  'GET /files/:id/tree': 'files:read',
  'GET /jobs/:id': 'files:read',
  'GET /jobs/:id/events': 'files:read',
  'POST /files': 'files:write',
  'PUT /files/:id': 'files:write',
  'DELETE /files/:id': 'files:write',
  'POST /files/uploads': 'files:write',
  'GET /files/uploads/:uploadId': 'files:write',
  'PUT /files/uploads/:uploadId/:part': 'files:write',
  'POST /files/uploads/:uploadId/complete': 'files:write',
  'DELETE /files/uploads/:uploadId': 'files:write',
  'POST /files/tus': 'files:write',
  'GET /files/tus/:id': 'files:write',
  'PATCH /files/tus/:id': 'files:write',
  'DELETE /files/tus/:id': 'files:write',
  'POST /files/tus/:id': 'files:write',
  'GET /convert/:extension': 'convert',
  'POST /files/:id/convert': 'convert',
  'POST /jobs/:id/retry': 'convert',
}

/**
 * The scope a request needs, or undefined when no key may make it. HEAD is GET's (Hono answers HEAD from GET routes).
 */
export function requiredScope(method: string, routePath: string): ApiKeyScope | undefined {
  const upper = method.toUpperCase()
  return ROUTE_SCOPES[`${upper} ${routePath}`] ?? (upper === 'HEAD' ? ROUTE_SCOPES[`GET ${routePath}`] : undefined)
}

export function isApiKey(token: string): boolean {
  return token.startsWith(API_KEY_PREFIX)
}

export type ApiKeyRow = typeof apiKeys.$inferSelect

function newApiKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32))
  return API_KEY_PREFIX + bytes.toBase64({ alphabet: 'base64url', omitPadding: true })
}

export interface NewApiKey {
  name: string
  scopes: readonly ApiKeyScope[]
  expiresAt?: number | undefined
}

/** The number of keys the user holds, as a statement a batch can carry (the session check's round trip). */
export function heldApiKeysQuery(db: Database, userId: string) {
  return db.select({ held: count() }).from(apiKeys).where(eq(apiKeys.userId, userId))
}

/** Makes a key for the user, who holds `held` (heldApiKeysQuery); returns its row and the key itself, which is never
 * stored nor shown again. 409 past the cap. */
export async function createApiKey(
  db: Database,
  user: { id: string; securityStamp: string },
  input: NewApiKey,
  held: number,
): Promise<{ row: ApiKeyRow; key: string }> {
  if (held >= MAX_API_KEYS_PER_USER)
    throw new ApiError('API_KEY_LIMIT_REACHED', {
      message: `at most ${MAX_API_KEYS_PER_USER} API keys per account; revoke one first`,
      details: { max_keys: MAX_API_KEYS_PER_USER },
    })
  const key = newApiKey()
  const now = Date.now()
  const [row] = await db
    .insert(apiKeys)
    .values({
      id: newId(now),
      userId: user.id,
      name: input.name,
      prefix: key.slice(0, SHOWN_LENGTH),
      keyHash: await sha256Hex(key),
      scopes: [...new Set(input.scopes)].sort(),
      securityStamp: user.securityStamp,
      expiresAt: input.expiresAt ?? null,
      createdAt: now,
    })
    .returning()
  return { row: row!, key }
}

/** The user's keys that still work (not expired, made under the current security stamp), newest first. */
export function listApiKeys(db: Database, userId: string, securityStamp: string) {
  return db
    .select()
    .from(apiKeys)
    .where(
      and(
        eq(apiKeys.userId, userId),
        eq(apiKeys.securityStamp, securityStamp),
        or(isNull(apiKeys.expiresAt), gt(apiKeys.expiresAt, Date.now())),
      ),
    )
    .orderBy(desc(apiKeys.id))
    .limit(MAX_API_KEYS_PER_USER)
}

/** Deletes one of the user's keys: its next request is refused. False when it is not theirs. */
export async function revokeApiKey(db: Database, userId: string, id: string): Promise<boolean> {
  const deleted = await db
    .delete(apiKeys)
    .where(and(eq(apiKeys.id, id), eq(apiKeys.userId, userId)))
    .returning({ id: apiKeys.id })
  return deleted.length > 0
}

const { passwordHash: _, ...accountColumns } = getTableColumns(users)

const unauthorized = (code: 'TOKEN_INVALID' | 'TOKEN_REVOKED') =>
  new ApiError(code, { headers: { 'www-authenticate': 'Bearer' } })

/**
 * The caller of an API key on a route, or 401 (unknown, expired, or ended by its user's new security stamp) or 403
 * (the route needs a scope the key lacks, or no key may call it; RFC 6750 §3.1 `insufficient_scope`).
 */
export async function authenticateApiKey(
  db: Database,
  key: string,
  request: { method: string; routePath: string } | undefined,
): Promise<{ user: AuthUser; account: AccountRecord; apiKeyId: string }> {
  if (!API_KEY_PATTERN.test(key)) throw unauthorized('TOKEN_INVALID')
  const [found] = await db
    .select({
      account: accountColumns,
      id: apiKeys.id,
      scopes: apiKeys.scopes,
      securityStamp: apiKeys.securityStamp,
      expiresAt: apiKeys.expiresAt,
      lastUsedAt: apiKeys.lastUsedAt,
    })
    .from(apiKeys)
    .innerJoin(users, eq(users.id, apiKeys.userId))
    .where(eq(apiKeys.keyHash, await sha256Hex(key)))
    .limit(1)
  if (!found) throw unauthorized('TOKEN_INVALID')
  const now = Date.now()
  if (found.expiresAt !== null && found.expiresAt <= now) throw unauthorized('TOKEN_INVALID')
  if (found.securityStamp !== found.account.securityStamp) throw unauthorized('TOKEN_REVOKED')
  const scope = request && requiredScope(request.method, request.routePath)
  if (!scope) throw insufficientScope('API keys cannot be used on this route; sign in as the user', undefined)
  if (!found.scopes.includes(scope)) throw insufficientScope(`this API key lacks the scope ${scope}`, scope)
  if (found.lastUsedAt === null || now - found.lastUsedAt >= LAST_USED_GRANULARITY_MS) {
    await db.update(apiKeys).set({ lastUsedAt: now }).where(eq(apiKeys.id, found.id))
  }
  return { user: toAuthUser(found.account), account: found.account, apiKeyId: found.id }
}

function insufficientScope(message: string, scope: ApiKeyScope | undefined) {
  const challenge = `Bearer error="insufficient_scope"${scope ? `, scope="${scope}"` : ''}`
  return new ApiError('INSUFFICIENT_SCOPE', {
    message,
    headers: { 'www-authenticate': challenge },
    details: scope ? { scope } : {},
  })
}
