// Where the records of a resource route live: the users table for Users, the shared records table (JSON
// documents) for custom models. Both answer in the shape rules see (wire names, `_id`), so routes and rules
// never care which one they talk to.
import { and, desc, eq, lt, sql, type SQL } from 'drizzle-orm'
import type { BatchItem } from 'drizzle-orm/batch'
import { alias, type SQLiteColumn } from 'drizzle-orm/sqlite-core'
import { createUser, findUser, findUserQuery, updateAccount, userFields, type UserRecord } from '../auth/users'
import type { Config } from '../config'
import type { Database } from '../db/client'
import { newId } from '../db/ids'
import { records, users } from '../db/schema'
import { iso } from '../db/times'
import { deleteUserFiles } from '../files/records'
import { ApiError } from '../errors'
import { userUploadsRemoval, type UploadRow } from '../files/resumable'
import type { ResourceFields, Scalar } from './evaluate'
import { jsonPath, type CallerResolver, type FieldAccess, type FieldResolver } from './to-where'
import type { UserField } from './parse'
import type { CompiledRoute } from './compile'

export interface StoreDeps {
  readonly db: Database
  readonly d1: D1Database
  readonly bucket: R2Bucket
  readonly config: Config
}

export interface ListQuery {
  /** The `_readAll` rule as SQL (specialised for the caller, or reading the caller's fields: callerFields). */
  readonly where: SQL
  /** field = value conditions: the relation's foreign key and the client's filters on readable fields. */
  readonly equals: ReadonlyArray<readonly [field: string, value: Scalar]>
  readonly limit: number
  /** Rows older than this id (ids are time-ordered): the next page. */
  readonly before?: string
}

export interface ModelStore {
  readonly resolve: FieldResolver
  find(id: string): Promise<ResourceFields | undefined>
  /** The read of one record as a statement a batch can carry (the session check's round trip), and what turns its
   * rows into the record. */
  findQuery(id: string): { query: BatchItem<'sqlite'>; found(rows: unknown): ResourceFields | undefined }
  /** The list as a statement a batch can carry (the session check's round trip), and what turns its rows into
   * records. */
  listQuery(query: ListQuery): Promise<{ query: BatchItem<'sqlite'>; found(rows: unknown): ResourceFields[] }>
  insert(fields: Record<string, unknown>): Promise<ResourceFields>
  /** `current`: the record as find or findQuery answered it this request, so that it is not read again. */
  update(id: string, fields: Record<string, unknown>, current?: ResourceFields): Promise<ResourceFields>
  remove(id: string): Promise<void>
  /** What a client may read of a record: `_id`, the readable fields and the timestamps. */
  present(record: ResourceFields): Record<string, unknown>
}

function equalsCondition(access: FieldAccess, value: Scalar): SQL {
  if (access.kind === 'column') return sql`${access.column} = ${typeof value === 'boolean' ? Number(value) : value}`
  const path = sql.raw(`'${jsonPath(access.path)}'`)
  if (typeof value === 'boolean') return sql`json_type(${access.document}, ${path}) = ${value ? 'true' : 'false'}`
  return sql`json_extract(${access.document}, ${path}) = ${value}`
}

function listConditions(resolve: FieldResolver, query: ListQuery, idColumn: SQL | typeof users.id): SQL[] {
  const conditions = [query.where, ...query.equals.map(([field, value]) => equalsCondition(resolve(field), value))]
  if (query.before) conditions.push(lt(idColumn as typeof users.id, query.before))
  return conditions
}

/** The alias the caller's row is read under, apart from the rows a list of users reads. */
const CALLER = 'caller'

/**
 * The caller's fields (`@user.*`) read in SQL from their row, by the id their token names: a list's rule needs no
 * read of the caller before the list (the role is not in the token).
 */
export function callerFields(callerId: string): CallerResolver {
  const caller = alias(users, CALLER)
  const ofCaller = (column: SQLiteColumn) =>
    sql`(select ${column} from ${users} as ${sql.identifier(CALLER)} where ${caller.id} = ${callerId})`
  const fields: Record<UserField, FieldAccess> = {
    _id: { kind: 'column', column: sql`${callerId}`, type: 'text' },
    email: { kind: 'column', column: ofCaller(caller.email), type: 'text' },
    role: { kind: 'column', column: ofCaller(caller.role), type: 'text' },
    email_verified: { kind: 'column', column: ofCaller(caller.emailVerified), type: 'boolean' },
  }
  return (field) => fields[field]
}

// ---- Users -----------------------------------------------------------------------------------------------

const USER_COLUMNS: Record<string, FieldAccess> = {
  _id: { kind: 'column', column: sql`${users.id}`, type: 'text' },
  email: { kind: 'column', column: sql`${users.email}`, type: 'text' },
  name: { kind: 'column', column: sql`${users.name}`, type: 'text' },
  role: { kind: 'column', column: sql`${users.role}`, type: 'text' },
  email_verified: { kind: 'column', column: sql`${users.emailVerified}`, type: 'boolean' },
}

/** An account as the rules read it: its custom fields, all of them, under its built-in ones. */
const accountFields = (user: UserRecord): ResourceFields => ({ ...user.values, ...userFields(user) })

const BUILT_IN_USER_FIELDS = ['_id', 'email', 'name', 'role', 'email_verified', 'created_at', 'updated_at']

/**
 * @param children relation routes under /users whose records belong to a user and go with the account.
 */
export function usersStore(deps: StoreDeps, route: CompiledRoute, children: readonly CompiledRoute[]): ModelStore {
  const { db } = deps
  const resolve: FieldResolver = (field) =>
    USER_COLUMNS[field] ?? { kind: 'json', document: sql`${users.values}`, path: field }
  const customFields = Object.keys(route.values)
  // The rows behind the records this store answered, for an update that follows its own read.
  const rowsOf = new WeakMap<ResourceFields, UserRecord>()
  const fieldsOf = (user: UserRecord) => {
    const fields = accountFields(user)
    rowsOf.set(fields, user)
    return fields
  }

  return {
    resolve,
    async find(id) {
      const user = await findUser(db, id)
      return user && fieldsOf(user)
    },
    findQuery(id) {
      return {
        query: findUserQuery(db, id),
        found: (rows) => (rows as UserRecord[])[0] && fieldsOf((rows as UserRecord[])[0]!),
      }
    },
    async listQuery(query) {
      return {
        query: db
          .select()
          .from(users)
          .where(and(...listConditions(resolve, query, users.id)))
          .orderBy(desc(users.id))
          .limit(query.limit),
        found: (rows) => (rows as UserRecord[]).map(accountFields),
      }
    },
    async insert(fields) {
      const values = Object.fromEntries(
        customFields.filter((name) => fields[name] !== undefined).map((name) => [name, fields[name]]),
      )
      const user = await createUser(db, route.values, {
        email: String(fields.email),
        password: String(fields.password),
        name: typeof fields.name === 'string' ? fields.name : undefined,
        role: typeof fields.role === 'string' ? fields.role : deps.config.AUTH_DEFAULT_ROLE,
        emailVerified: fields.email_verified === true,
        values,
      })
      return accountFields(user)
    },
    async update(id, fields, known) {
      const current = (known && rowsOf.get(known)) ?? (await findUser(db, id))
      if (!current) throw new ApiError('USER_NOT_FOUND')
      const text = (value: unknown) => (typeof value === 'string' ? value : undefined)
      const custom = customFields.filter((name) => fields[name] !== undefined)
      // A new address is unverified until its owner follows the link sent to it (an admin may say otherwise).
      const { user } = await updateAccount(db, deps.config, current, {
        name: text(fields.name),
        role: text(fields.role),
        email: text(fields.email),
        emailVerified: typeof fields.email_verified === 'boolean' ? fields.email_verified : undefined,
        values: Object.fromEntries(custom.map((name) => [name, fields[name]])),
      })
      return accountFields(user)
    },
    async remove(id) {
      await deleteAccount(deps, id, children)
    },
    present(record) {
      const readable = [...BUILT_IN_USER_FIELDS, ...route.schemas.readable]
      return Object.fromEntries(readable.filter((name) => name in record).map((name) => [name, record[name]]))
    },
  }
}

/** What deleting an account reads first, for one batch (DELETE /auth/user adds its session check to it). */
/**
 * Deletes the account and everything it owns. One D1 batch (all or nothing) removes its unfinished uploads, its
 * files, their previews, the user row and the records of `children` (relation routes under /users whose records
 * belong to a user). Then go the stored bytes and the R2 side of the uploads the batch removed: the cascade would
 * drop their rows but leave the R2 multipart uploads. Sessions, refresh tokens, API keys, second factors, passkeys
 * and jobs go with the user row (their foreign keys cascade).
 */
export async function deleteAccount(
  deps: Pick<StoreDeps, 'db' | 'bucket'>,
  userId: string,
  children: readonly CompiledRoute[],
): Promise<void> {
  const { db } = deps
  const owned = children.map((child) =>
    db
      .delete(records)
      .where(and(eq(records.model, child.model), equalsCondition(recordResolver(child.parent!.foreignKey), userId))),
  )
  const uploadsRemoval = userUploadsRemoval(db, userId)
  const [removedUploads] = await deleteUserFiles(db, deps.bucket, userId, [
    uploadsRemoval.statement,
    db.delete(users).where(eq(users.id, userId)),
    ...owned,
  ])
  await uploadsRemoval.abortRemoved(deps.bucket, removedUploads as UploadRow[])
}

// ---- Custom models ---------------------------------------------------------------------------------------

function recordResolver(field: string): FieldAccess {
  if (field === '_id') return { kind: 'column', column: sql`${records.id}`, type: 'text' }
  return { kind: 'json', document: sql`${records.data}`, path: field }
}

type RecordRow = typeof records.$inferSelect

function recordFields(row: RecordRow): ResourceFields {
  return { ...row.data, _id: row.id, created_at: iso(row.createdAt), updated_at: iso(row.updatedAt) }
}

const indexedModels = new WeakMap<D1Database, Set<string>>()

/**
 * Expression indexes on the fields a model's rules and relation filter by, created once per isolate and
 * database (IF NOT EXISTS makes a repeat harmless), so a filtered list stays an index lookup as records grow.
 */
async function ensureIndexes(d1: D1Database, route: CompiledRoute, fields: readonly string[]): Promise<void> {
  const done = indexedModels.get(d1) ?? new Set<string>()
  indexedModels.set(d1, done)
  if (done.has(route.model)) return
  const statements = fields
    .filter((field) => field !== '_id' && field !== 'user_id')
    .map((field) => {
      const name = `records_${route.model}_${field}`.toLowerCase()
      return d1.prepare(
        `CREATE INDEX IF NOT EXISTS ${name} ON records (model, json_extract(data, '${jsonPath(field)}'))`,
      )
    })
  if (statements.length > 0) await d1.batch(statements)
  done.add(route.model)
}

export function recordsStore(deps: StoreDeps, route: CompiledRoute, indexedFields: readonly string[]): ModelStore {
  const { db } = deps
  const ofModel = eq(records.model, route.model)
  const rowsOf = new WeakMap<ResourceFields, RecordRow>()
  const fieldsOf = (row: RecordRow) => {
    const fields = recordFields(row)
    rowsOf.set(fields, row)
    return fields
  }
  const findQuery = (id: string) =>
    db
      .select()
      .from(records)
      .where(and(ofModel, eq(records.id, id)))
      .limit(1)
  return {
    resolve: recordResolver,
    async find(id) {
      const [row] = await findQuery(id)
      return row && fieldsOf(row)
    },
    findQuery(id) {
      return { query: findQuery(id), found: (rows) => (rows as RecordRow[])[0] && fieldsOf((rows as RecordRow[])[0]!) }
    },
    async listQuery(query) {
      await ensureIndexes(deps.d1, route, indexedFields)
      return {
        query: db
          .select()
          .from(records)
          .where(and(ofModel, ...listConditions(recordResolver, query, records.id as unknown as typeof users.id)))
          .orderBy(desc(records.id))
          .limit(query.limit),
        found: (rows) => (rows as RecordRow[]).map(recordFields),
      }
    },
    async insert(fields) {
      const now = Date.now()
      const [row] = await db
        .insert(records)
        .values({ id: newId(now), model: route.model, data: fields, createdAt: now, updatedAt: now })
        .returning()
      return recordFields(row!)
    },
    async update(id, fields, known) {
      const current = (known && rowsOf.get(known)) ?? (await findQuery(id))[0]
      if (!current) throw new ApiError('RECORD_NOT_FOUND', { message: `${route.model} record not found` })
      const [row] = await db
        .update(records)
        .set({ data: { ...current.data, ...fields }, updatedAt: Date.now() })
        .where(and(ofModel, eq(records.id, id)))
        .returning()
      return recordFields(row!)
    },
    async remove(id) {
      await db.delete(records).where(and(ofModel, eq(records.id, id)))
    },
    present(record) {
      const readable = ['_id', ...route.schemas.readable, 'created_at', 'updated_at']
      return Object.fromEntries(readable.filter((name) => name in record).map((name) => [name, record[name]]))
    },
  }
}
