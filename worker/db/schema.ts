// The D1 schema as drizzle tables: the single source the migrations in migrations/ are written from.
// Times are epoch milliseconds; ids are 24 hex characters, time-ordered (see ids.ts).
import { sql } from 'drizzle-orm'
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core'
import type { ErrorCode } from '../errors'

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

/** Sessions: one per login; its refresh tokens are a family (`refresh_tokens.family_id`), its access tokens carry
 * its id (`sid`). `lastUsedAt` moves on login and refresh, never per request (the per-request check only reads). */
export const sessions = sqliteTable(
  'sessions',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    device: text('device').notNull().default(''),
    address: text('address').notNull().default(''),
    createdAt: integer('created_at').notNull(),
    lastUsedAt: integer('last_used_at').notNull(),
    revokedAt: integer('revoked_at'),
  },
  (table) => [index('sessions_user').on(table.userId)],
)

/** API keys for servers (worker/auth/api-keys.ts): stored as the key's SHA-256, shown by `prefix`; `securityStamp`
 * is the user's when the key was made, so a password reset or "sign out everywhere" ends the key. */
export const apiKeys = sqliteTable(
  'api_keys',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    prefix: text('prefix').notNull(),
    keyHash: text('key_hash').notNull(),
    scopes: text('scopes', { mode: 'json' }).$type<string[]>().notNull(),
    securityStamp: text('security_stamp').notNull(),
    expiresAt: integer('expires_at'),
    createdAt: integer('created_at').notNull(),
    lastUsedAt: integer('last_used_at'),
  },
  (table) => [uniqueIndex('api_keys_hash_unique').on(table.keyHash), index('api_keys_user').on(table.userId, table.id)],
)

/** An account's TOTP second factor (worker/auth/totp.ts): the secret encrypted with a key derived from JWT_SECRET,
 * enforced once confirmed; `lastUsedStep` refuses a code used before. */
export const totpFactors = sqliteTable('totp_factors', {
  userId: text('user_id')
    .primaryKey()
    .references(() => users.id, { onDelete: 'cascade' }),
  secret: text('secret').notNull(),
  confirmedAt: integer('confirmed_at'),
  lastUsedStep: integer('last_used_step').notNull().default(0),
  createdAt: integer('created_at').notNull(),
})

/** Recovery codes of the second factor, stored as SHA-256, each spent once. */
export const recoveryCodes = sqliteTable(
  'recovery_codes',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    codeHash: text('code_hash').notNull(),
    usedAt: integer('used_at'),
  },
  (table) => [
    uniqueIndex('recovery_codes_hash_unique').on(table.codeHash),
    index('recovery_codes_user').on(table.userId),
  ],
)

/** A started provider sign-in (worker/auth/oidc.ts): its state as SHA-256, PKCE verifier and nonce; taken once. */
export const oauthStates = sqliteTable(
  'oauth_states',
  {
    stateHash: text('state_hash').primaryKey(),
    provider: text('provider').notNull(),
    codeVerifier: text('code_verifier').notNull(),
    nonce: text('nonce'),
    redirectUrl: text('redirect_url').notNull(),
    linkUserId: text('link_user_id').references(() => users.id, { onDelete: 'cascade' }),
    expiresAt: integer('expires_at').notNull(),
  },
  (table) => [index('oauth_states_expiry').on(table.expiresAt)],
)

/** The one-time code an app exchanges for the session of a provider sign-in, as SHA-256. */
export const oauthExchanges = sqliteTable(
  'oauth_exchanges',
  {
    codeHash: text('code_hash').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    expiresAt: integer('expires_at').notNull(),
  },
  (table) => [index('oauth_exchanges_expiry').on(table.expiresAt)],
)

/** A provider's subject linked to an account. */
export const oauthIdentities = sqliteTable(
  'oauth_identities',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    provider: text('provider').notNull(),
    subject: text('subject').notNull(),
    email: text('email').notNull().default(''),
    createdAt: integer('created_at').notNull(),
    lastUsedAt: integer('last_used_at').notNull(),
  },
  (table) => [
    uniqueIndex('oauth_identities_subject').on(table.provider, table.subject),
    index('oauth_identities_user').on(table.userId, table.id),
  ],
)

/** Passkeys (worker/auth/passkeys.ts): a WebAuthn credential of an account, its public key and signature counter. */
export const passkeys = sqliteTable(
  'passkeys',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    credentialId: text('credential_id').notNull(),
    publicKey: text('public_key').notNull(),
    counter: integer('counter').notNull().default(0),
    transports: text('transports', { mode: 'json' }).$type<string[]>().notNull().default(sql`'[]'`),
    deviceType: text('device_type').notNull(),
    backedUp: integer('backed_up', { mode: 'boolean' }).notNull().default(false),
    name: text('name').notNull().default(''),
    createdAt: integer('created_at').notNull(),
    lastUsedAt: integer('last_used_at'),
  },
  (table) => [
    uniqueIndex('passkeys_credential_unique').on(table.credentialId),
    index('passkeys_user').on(table.userId, table.id),
  ],
)

/** A WebAuthn challenge given out for one registration (with its user) or one sign-in, as SHA-256; taken once. */
export const passkeyChallenges = sqliteTable(
  'passkey_challenges',
  {
    challengeHash: text('challenge_hash').primaryKey(),
    purpose: text('purpose', { enum: ['register', 'login'] }).notNull(),
    userId: text('user_id').references(() => users.id, { onDelete: 'cascade' }),
    expiresAt: integer('expires_at').notNull(),
  },
  (table) => [index('passkey_challenges_expiry').on(table.expiresAt)],
)

/** Single-use tokens (verify, reset) that were spent, by their `jti`, kept until they would expire anyway. */
export const spentTokens = sqliteTable('spent_tokens', {
  jti: text('jti').primaryKey(),
  expiresAt: integer('expires_at').notNull(),
})

/**
 * Stored files: uploads and the files converted from them (`parentId`). Bytes live in R2 under `key`, which the
 * server chooses and never returns. `originKey` makes converted outputs idempotent: one record per
 * (conversion step, output index), however often a queue message is delivered.
 */
export const files = sqliteTable(
  'files',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    parentId: text('parent_id'),
    name: text('name').notNull(),
    extension: text('extension').notNull(),
    contentType: text('content_type').notNull(),
    size: integer('size').notNull(),
    hash: text('hash').notNull(),
    key: text('key').notNull(),
    prefix: text('prefix').notNull().default(''),
    fileModifiedAt: integer('file_modified_at'),
    /** For converted files: position among the outputs of the step that made it (0-based), and their count. */
    partIndex: integer('part_index'),
    partTotal: integer('part_total'),
    /** Facts about the content: page_count, width, height, word_count, language, … */
    metadata: text('metadata', { mode: 'json' }).$type<Record<string, unknown>>().notNull().default(sql`'{}'`),
    jobId: text('job_id'),
    originKey: text('origin_key'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (table) => [
    uniqueIndex('files_key_unique').on(table.key),
    uniqueIndex('files_origin_unique').on(table.originKey),
    index('files_user_id').on(table.userId, table.id),
    index('files_parent').on(table.parentId, table.partIndex),
    index('files_user_size').on(table.userId, table.size),
  ],
)

/**
 * Previews of stored files: one R2 object each, under a key made of the file's content hash and the preview's
 * parameters. They count in their owner's quota and go with their file. The foreign key refuses a preview of a
 * file deleted while it is drawn; the files module deletes the objects. The consumer Worker draws them.
 * A row is `queued` from the first request until it is `ready` (object stored, size counted) or `failed`.
 * A failure keeps its reason and status for PREVIEW_FAILURE_TTL, so a hostile file is not drawn on every request.
 */
export const previews = sqliteTable(
  'previews',
  {
    fileId: text('file_id')
      .notNull()
      .references(() => files.id, { onDelete: 'cascade' }),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    key: text('key').notNull(),
    size: integer('size').notNull(),
    status: text('status', { enum: ['queued', 'ready', 'failed'] })
      .notNull()
      .default('ready'),
    error: text('error'),
    /** Written for the Workers of the deploy before error_code (migrations/0017_error_codes.sql); read by none. */
    errorStatus: integer('error_status'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull().default(0),
    /** The failure's code (worker/errors.ts), as its conversion answers it. */
    errorCode: text('error_code').$type<ErrorCode>(),
  },
  (table) => [
    primaryKey({ columns: [table.fileId, table.key] }),
    uniqueIndex('previews_key_unique').on(table.key),
    index('previews_user').on(table.userId),
    index('previews_status').on(table.status, table.updatedAt),
  ],
)

/**
 * Records of the custom models declared in worker/models/resources.ts: one table for all of them, the fields as
 * a JSON document validated by the model's `values` schemas, so adding a model needs no migration. Fields that
 * rules filter on get expression indexes on json_extract (created by the rules store).
 */
export const records = sqliteTable(
  'records',
  {
    id: text('id').primaryKey(),
    model: text('model').notNull(),
    data: text('data', { mode: 'json' }).$type<Record<string, unknown>>().notNull(),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (table) => [
    index('records_model').on(table.model, table.id),
    index('records_user_id').on(table.model, sql`json_extract(data, '$.user_id')`),
  ],
)

/** A conversion job: the chain started from one file by POST /files/:id/convert (or an auto-convert upload). */
export const jobs = sqliteTable(
  'jobs',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    fileId: text('file_id').notNull(),
    /** queued → running → done | failed */
    status: text('status').$type<'queued' | 'running' | 'done' | 'failed'>().notNull(),
    options: text('options', { mode: 'json' })
      .$type<Record<string, string | number | boolean>>()
      .notNull()
      .default(sql`'{}'`),
    callbackUrl: text('callback_url'),
    /** The extension the client asked the chain to end at (`to: ".txt"`); null for the default chain. */
    target: text('target'),
    error: text('error'),
    /** Written for the Workers of the deploy before error_code (migrations/0017_error_codes.sql); read by none. */
    errorStatus: integer('error_status'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
    finishedAt: integer('finished_at'),
    /** The R2 key the file had when the job started: its content version (a replace writes a new key). */
    sourceKey: text('source_key'),
    /** The failure's code (worker/errors.ts), chosen by the converter that failed; the API answers it. */
    errorCode: text('error_code').$type<ErrorCode>(),
  },
  (table) => [
    index('jobs_user').on(table.userId, table.id),
    index('jobs_file').on(table.fileId, table.id),
    // One conversion per content, options and target at a time (`options` is stored with its keys sorted).
    uniqueIndex('jobs_active_unique')
      .on(table.fileId, table.sourceKey, table.options, sql`COALESCE(target, '')`)
      .where(sql`status IN ('queued', 'running')`),
  ],
)

/**
 * One step of a job: one converter on one source file (or one range of its outputs, for converters that fan
 * out). A queue message names a step; the unique (job, source, part) makes creating a step idempotent.
 */
export const jobSteps = sqliteTable(
  'job_steps',
  {
    id: text('id').primaryKey(),
    jobId: text('job_id')
      .notNull()
      .references(() => jobs.id, { onDelete: 'cascade' }),
    sourceFileId: text('source_file_id').notNull(),
    converter: text('converter').notNull(),
    /** For a part of a split step: outputs [start, end) of the step's total; -1 when not split. */
    partStart: integer('part_start').notNull().default(-1),
    partEnd: integer('part_end'),
    /** queued → running → done | failed; `split` when the step was divided into parts. */
    status: text('status').$type<'queued' | 'running' | 'done' | 'failed' | 'split'>().notNull(),
    attempts: integer('attempts').notNull().default(0),
    error: text('error'),
    outputIds: text('output_ids', { mode: 'json' }).$type<string[]>().notNull().default(sql`'[]'`),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
    /** The key its source file had when the step was made: the step fails when the file has other content now. */
    sourceKey: text('source_key'),
  },
  (table) => [
    uniqueIndex('job_steps_unique').on(table.jobId, table.sourceFileId, table.partStart),
    index('job_steps_job').on(table.jobId),
  ],
)

/** A resumable upload: an R2 multipart upload under a server-chosen key, completed into a file record. */
export const uploads = sqliteTable(
  'uploads',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    r2UploadId: text('r2_upload_id').notNull(),
    key: text('key').notNull(),
    name: text('name').notNull(),
    extension: text('extension').notNull(),
    prefix: text('prefix').notNull().default(''),
    fileModifiedAt: integer('file_modified_at'),
    createdAt: integer('created_at').notNull(),
    /** `parts` (POST /files/uploads) or `tus` (/files/tus): one engine, two ways in. */
    protocol: text('protocol', { enum: ['parts', 'tus'] })
      .notNull()
      .default('parts'),
    /** Fixed at the start: every R2 part but the last has exactly this many bytes. */
    partBytes: integer('part_bytes').notNull(),
    /** The declared total (tus's Upload-Length), when known. */
    length: integer('length'),
    /** tus: the bytes received, stored as parts plus the tail. */
    offset: integer('offset').notNull().default(0),
    /** tus: the bytes after the last full part, kept as their own object until the next PATCH fills a part. */
    tailKey: text('tail_key'),
    tailBytes: integer('tail_bytes').notNull().default(0),
    /** tus: the next free R2 part number, taken one at a time; a PATCH that loses a race leaves its numbers unused. */
    nextPart: integer('next_part').notNull().default(1),
    /** tus: the PATCH that last moved the offset (its parts are recorded only if it did). */
    patchId: text('patch_id'),
    /**
     * tus: a PATCH that carries what is left holds the offset until then (R2 joins the parts before its batch writes
     * the offset and the record): no other PATCH's claim moves the offset while a holder may be joining.
     */
    leaseUntil: integer('lease_until'),
    /** tus: the completing PATCHes holding the lease (a reset to 1 once it has ended: one that died stops counting). */
    leaseHolders: integer('lease_holders').notNull().default(0),
    /** tus: Upload-Metadata as the client sent it (answered on HEAD). */
    metadata: text('metadata'),
    /** The file record the upload became; the row stays until it expires so HEAD still answers. */
    fileId: text('file_id'),
    expiresAt: integer('expires_at').notNull(),
  },
  (table) => [
    uniqueIndex('uploads_key_unique').on(table.key),
    index('uploads_user').on(table.userId, table.id),
    index('uploads_expiry').on(table.expiresAt),
  ],
)

export const uploadParts = sqliteTable(
  'upload_parts',
  {
    uploadId: text('upload_id')
      .notNull()
      .references(() => uploads.id, { onDelete: 'cascade' }),
    partNumber: integer('part_number').notNull(),
    etag: text('etag').notNull(),
    size: integer('size').notNull(),
  },
  (table) => [primaryKey({ columns: [table.uploadId, table.partNumber] })],
)

/**
 * Bytes held against a user's quota (FILES_QUOTA_BYTES) before they are written: an upload, a replace, a
 * conversion output, a resumable upload's parts. A user's usage is the sum of their files' sizes plus their
 * unexpired reservations; worker/files/quota.ts is the only writer.
 */
export const storageReservations = sqliteTable(
  'storage_reservations',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    bytes: integer('bytes').notNull(),
    /** A reservation whose holder died stops counting at this time; the scheduled sweep removes it. */
    expiresAt: integer('expires_at').notNull(),
  },
  (table) => [index('storage_reservations_user').on(table.userId, table.expiresAt)],
)

/** R2 keys whose delete failed (worker/files/objects.ts): retried by the scheduled sweep until they are gone. */
export const pendingDeletes = sqliteTable(
  'pending_deletes',
  {
    key: text('key').primaryKey(),
    attempts: integer('attempts').notNull(),
    error: text('error'),
    createdAt: integer('created_at').notNull(),
  },
  (table) => [index('pending_deletes_age').on(table.createdAt)],
)
