// The D1 schema as drizzle tables: the single source the migrations in migrations/ are written from.
// Times are epoch milliseconds; ids are 24 hex characters, time-ordered (see ids.ts).
import { sql } from 'drizzle-orm'
import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core'

export const users = sqliteTable(
  'users',
  {
    id: text('id').primaryKey(),
    email: text('email').notNull(),
    passwordHash: text('password_hash').notNull(),
    name: text('name').notNull().default(''),
    role: text('role').notNull(),
    emailVerified: integer('email_verified', { mode: 'boolean' }).notNull().default(false),
    /** Changes when the password is reset: every token issued before carries the old stamp and stops working. */
    securityStamp: text('security_stamp').notNull(),
    /** Custom fields of the Users model (`values` map), as a JSON object. */
    values: text('values', { mode: 'json' }).$type<Record<string, unknown>>().notNull().default(sql`'{}'`),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (table) => [uniqueIndex('users_email_unique').on(table.email)],
)

/** Refresh tokens: opaque to clients, stored as SHA-256 hashes, rotated on every use within a family. */
export const refreshTokens = sqliteTable(
  'refresh_tokens',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    familyId: text('family_id').notNull(),
    tokenHash: text('token_hash').notNull(),
    expiresAt: integer('expires_at').notNull(),
    createdAt: integer('created_at').notNull(),
    /** Set when the token was exchanged for a new one; presenting it again is reuse. */
    rotatedAt: integer('rotated_at'),
    revokedAt: integer('revoked_at'),
  },
  (table) => [
    uniqueIndex('refresh_tokens_hash_unique').on(table.tokenHash),
    index('refresh_tokens_user').on(table.userId),
    index('refresh_tokens_family').on(table.familyId),
  ],
)

/** Single-use tokens (verify, reset) that were spent, by their `jti`, kept until they would expire anyway. */
export const spentTokens = sqliteTable('spent_tokens', {
  jti: text('jti').primaryKey(),
  expiresAt: integer('expires_at').notNull(),
})
