// User accounts: creating, authenticating, verifying and resetting, and the public shapes of a user.
import { and, desc, eq, lt, sql, type SQL } from 'drizzle-orm'
import type { Config } from '../config'
import type { Database } from '../db/client'
import { insertForUser } from '../db/guarded'
import { newId } from '../db/ids'
import { spentTokens, totpFactors, users } from '../db/schema'
import { iso } from '../db/times'
import { ApiError } from '../errors'
import { userValueSchemas } from '../models/resources'
import { readableValues, withDefaults, type ValueSchemas, type ValuesMap } from '../models/values'
import { deliverAccountEmail } from './delivery'
import { hashPassword, spendDummyCheck, verifyPassword } from './passwords'
import { allSessionsEnding } from './sessions'

export type UserRecord = typeof users.$inferSelect
/** A user row without its password hash: what the per-request auth check reads. */
export type AccountRecord = Omit<UserRecord, 'passwordHash'>

/** The authenticated caller, as middleware puts it on the request. */
export interface AuthUser {
  id: string
  email: string
  name: string
  role: string
  emailVerified: boolean
  /** Signs the caller's file URLs: a new stamp (reset, logout-all) ends them. */
  securityStamp: string
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase()
}

export function newSecurityStamp(): string {
  return crypto.randomUUID()
}

export function toAuthUser(user: AccountRecord): AuthUser {
  return {
    id: user.id,
    email: user.email,
    name: user.name,
    role: user.role,
    emailVerified: user.emailVerified,
    securityStamp: user.securityStamp,
  }
}

/** The user object of the login response: exactly these four keys (spec). */
export function loginShape(user: UserRecord) {
  return { _id: user.id, email: user.email, name: user.name, role: user.role }
}

/** An account's built-in fields as the API answers them: the one view of a user that the other views extend. */
export function userFields(user: AccountRecord) {
  return {
    _id: user.id,
    email: user.email,
    name: user.name,
    role: user.role,
    email_verified: user.emailVerified,
    created_at: iso(user.createdAt),
    updated_at: iso(user.updatedAt),
  }
}

/** Everything a user may read about an account: built-in fields and the custom fields with `r` (of the Users model
 * the app was made with). */
export function publicShape(user: AccountRecord, schemas: ValueSchemas = userValueSchemas) {
  return { ...userFields(user), ...readableValues(schemas, user.values) }
}

/** An account as a sign-in reads it: with whether it confirmed a TOTP second factor (then the sign-in needs its
 * second step), in the same read. */
export type SignInRecord = UserRecord & { hasSecondFactor: boolean }

const secondFactorConfirmed = sql<number>`exists (select 1 from ${totpFactors} where ${totpFactors.userId} = ${users.id} and ${totpFactors.confirmedAt} is not null)`

/** The account `where` names, as a sign-in reads it (a list of at most one, for a batch). */
export function signInQuery(db: Database, where: SQL | undefined) {
  return db
    .select({ user: users, hasSecondFactor: secondFactorConfirmed.as('has_second_factor') })
    .from(users)
    .where(where)
    .limit(1)
}

export function toSignInRecord(
  row: { user: UserRecord; hasSecondFactor: number } | undefined,
): SignInRecord | undefined {
  return row && { ...row.user, hasSecondFactor: Boolean(row.hasSecondFactor) }
}

export async function findUser(db: Database, id: string): Promise<UserRecord | undefined> {
  return (await findUserQuery(db, id))[0]
}

/** The account with this id (its password hash too), as a statement a batch can carry (a list of at most one). */
export function findUserQuery(db: Database, id: string) {
  return db.select().from(users).where(eq(users.id, id)).limit(1)
}

/** Whether the account exists, as a statement a batch can carry (a list of at most one id). */
export function userExistsQuery(db: Database, id: string) {
  return db.select({ id: users.id }).from(users).where(eq(users.id, id)).limit(1)
}

/**
 * Accounts whose email or name contains `text` (every account without it), newest first: `limit` of them after
 * `cursor` (the last _id of the previous page), as a statement a batch can carry.
 */
export function searchUsersQuery(db: Database, options: { text?: string; cursor?: string; limit: number }) {
  const pattern = options.text ? containing(options.text) : undefined
  // drizzle's like() has no ESCAPE clause, without which the pattern's backslashes would be literal.
  const matches = pattern
    ? sql`(${users.email} LIKE ${pattern} ESCAPE '\\' OR ${users.name} LIKE ${pattern} ESCAPE '\\')`
    : undefined
  return db
    .select()
    .from(users)
    .where(and(matches, options.cursor ? lt(users.id, options.cursor) : undefined))
    .orderBy(desc(users.id))
    .limit(options.limit)
}

/** `%text%` for LIKE, its own % and _ matched literally. */
const containing = (text: string) => `%${text.replace(/[\\%_]/g, (character) => `\\${character}`)}%`

export async function findUserByEmail(db: Database, email: string): Promise<UserRecord | undefined> {
  return db.query.users.findFirst({ where: eq(users.email, normalizeEmail(email)) })
}

export interface Registration {
  email: string
  password: string
  name?: string | undefined
  values: Record<string, unknown>
}

export async function registerUser(
  db: Database,
  config: Config,
  values: ValuesMap,
  input: Registration,
): Promise<UserRecord> {
  if (!config.AUTH_REGISTRATION_ENABLED) throw new ApiError('REGISTRATION_DISABLED')
  return createUser(db, values, { ...input, role: config.AUTH_DEFAULT_ROLE, emailVerified: false })
}

export interface NewUser extends Omit<Registration, 'password'> {
  /** null: an account with no password (signed up through a sign-in provider); it may set one later. */
  password: string | null
  role: string
  emailVerified: boolean
}

/**
 * The stored hash of an account without a password: no hash format starts with `!` (as Django marks an unusable
 * password), so no password verifies against it.
 */
const NO_PASSWORD = '!'

/** Whether the account has a password (not one made through a sign-in provider that never set one). */
export function hasPassword(user: Pick<UserRecord, 'passwordHash'>): boolean {
  return !user.passwordHash.startsWith(NO_PASSWORD)
}

/**
 * Inserts an account (registration, or an admin through /users); a taken email answers 409. `values` is the
 * Users model of the caller's configuration, whose defaults fill the custom fields not given. The unique index on
 * the address decides, in the insert's own round trip (no read before it).
 */
export async function createUser(db: Database, values: ValuesMap, input: NewUser): Promise<UserRecord> {
  const email = normalizeEmail(input.email)
  const now = Date.now()
  const record = {
    id: newId(now),
    email,
    passwordHash: input.password === null ? NO_PASSWORD : await hashPassword(input.password),
    name: input.name?.trim() ?? '',
    role: input.role,
    emailVerified: input.emailVerified,
    securityStamp: newSecurityStamp(),
    values: withDefaults(values, input.values),
    createdAt: now,
    updatedAt: now,
  }
  try {
    const [created] = await db.insert(users).values(record).returning()
    return created!
  } catch (error) {
    throw isUniqueViolation(error) ? emailTaken() : error
  }
}

/** Two writes racing for one address: the unique index decides. */
export function isUniqueViolation(error: unknown): boolean {
  return String((error as Error)?.cause ?? error).includes('UNIQUE')
}

export const emailTaken = () => new ApiError('EMAIL_TAKEN')

/** The user for these credentials, or 401; an unknown email costs the same hash work as a wrong password. */
export async function authenticate(db: Database, email: string, password: string): Promise<SignInRecord> {
  const user = toSignInRecord((await signInQuery(db, eq(users.email, normalizeEmail(email))))[0])
  // An account without a password costs the same work too: the answer does not tell it apart.
  if (!user || !hasPassword(user)) {
    await spendDummyCheck(password)
    throw invalidCredentials()
  }
  const check = await verifyPassword(user.passwordHash, password)
  if (!check.matches) throw invalidCredentials()
  if (check.needsRehash) {
    const passwordHash = await hashPassword(password)
    await db.update(users).set({ passwordHash }).where(eq(users.id, user.id))
    return { ...user, passwordHash }
  }
  return user
}

const invalidCredentials = () => new ApiError('INVALID_CREDENTIALS')

/** Records a single-use token as spent; false when it already was. */
export async function spendToken(db: Database, jti: string, expiresAtSeconds: number): Promise<boolean> {
  return (await tokenSpending(db, jti, expiresAtSeconds)).length === 1
}

/**
 * The write that records a user's single-use token as spent, for a batch. It answers one row when it did. It
 * answers none, and writes nothing, when the token was spent already or, with a condition, when the user is gone or
 * `condition` does not hold.
 */
export function tokenSpending(
  db: Database,
  jti: string,
  expiresAtSeconds: number,
  guard?: { userId: string; condition: SQL },
) {
  const row = { jti, expiresAt: expiresAtSeconds * 1000 }
  const insert = guard
    ? insertForUser(db, spentTokens, row, guard.userId, guard.condition)
    : db.insert(spentTokens).values(row)
  return insert.onConflictDoNothing().returning({ jti: spentTokens.jti })
}

/** True in a WHERE clause on users while the account still has this security stamp (the token that named it holds). */
export function stampHolds(securityStamp: string): SQL {
  return eq(users.securityStamp, securityStamp)
}

/** Marks the address verified, if it is still the one the verify token was sent to. */
export async function markEmailVerified(db: Database, userId: string, email: string): Promise<UserRecord | undefined> {
  const [updated] = await db
    .update(users)
    .set({ emailVerified: true, updatedAt: Date.now() })
    .where(and(eq(users.id, userId), eq(users.email, email)))
    .returning()
  return updated
}

export interface AccountChanges {
  name?: string | undefined
  email?: string | undefined
  role?: string | undefined
  emailVerified?: boolean | undefined
  /** Custom fields of the Users model, merged into the stored ones. */
  values?: Record<string, unknown> | undefined
  password?: string | undefined
}

/**
 * Writes the changes in one statement and answers the stored account (404 when it is gone, 409 when the address is
 * taken). A new address is unverified until its owner follows the link mailed to it, unless `emailVerified` says
 * otherwise; `emailSent` tells whether that mail went. A new password comes with a new security stamp: every token
 * issued before it stops working (the caller ends the sessions).
 */
export async function updateAccount(
  db: Database,
  config: Config,
  current: UserRecord,
  input: AccountChanges,
): Promise<{ user: UserRecord; emailSent?: boolean }> {
  const changes: Partial<typeof users.$inferInsert> = { updatedAt: Date.now() }
  if (input.name !== undefined) changes.name = input.name.trim()
  if (input.role !== undefined) changes.role = input.role
  if (input.email !== undefined) changes.email = normalizeEmail(input.email)
  const emailChanged = changes.email !== undefined && changes.email !== current.email
  if (emailChanged) changes.emailVerified = false
  if (input.emailVerified !== undefined) changes.emailVerified = input.emailVerified
  if (input.values && Object.keys(input.values).length > 0) changes.values = { ...current.values, ...input.values }
  if (input.password !== undefined) {
    changes.passwordHash = await hashPassword(input.password)
    changes.securityStamp = newSecurityStamp()
  }
  let updated: UserRecord | undefined
  try {
    ;[updated] = await db.update(users).set(changes).where(eq(users.id, current.id)).returning()
  } catch (error) {
    throw isUniqueViolation(error) ? emailTaken() : error
  }
  if (!updated) throw new ApiError('USER_NOT_FOUND')
  if (!emailChanged || updated.emailVerified) return { user: updated }
  return { user: updated, emailSent: await deliverAccountEmail(config, 'emailVerification', updated) }
}

/** Sets a new password and a new security stamp: every session and token issued before stops working. */
export async function replacePassword(db: Database, userId: string, password: string): Promise<void> {
  const passwordHash = await hashPassword(password)
  await db.batch([
    db
      .update(users)
      .set({ passwordHash, securityStamp: newSecurityStamp(), updatedAt: Date.now() })
      .where(eq(users.id, userId)),
    ...allSessionsEnding(db, userId),
  ])
}

/** Ends every session of the user, access tokens included (a new security stamp). */
export async function signOutEverywhere(db: Database, userId: string): Promise<void> {
  await db.batch([
    db.update(users).set({ securityStamp: newSecurityStamp() }).where(eq(users.id, userId)),
    ...allSessionsEnding(db, userId),
  ])
}
