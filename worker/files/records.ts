// File records in D1: ownership in every WHERE clause (someone else's file is simply not found), listing with
// cursor pagination, the public shape of a record, and deleting a file with everything converted from it.
import { z } from '@hono/zod-openapi'
import { and, desc, eq, inArray, isNull, like, lt, or, sql, type SQL, type SQLWrapper } from 'drizzle-orm'
import type { BatchItem } from 'drizzle-orm/batch'
import type { Config } from '../config'
import type { Database } from '../db/client'
import { files, previews, users } from '../db/schema'
import { iso } from '../db/times'
import { ApiError } from '../errors'
import { previewKind } from './preview-kind'
import { deleteObjects } from './objects'
import { signFileToken } from './signed-url'

export type FileRow = typeof files.$inferSelect

export const FileResponseSchema = z
  .object({
    _id: z.string(),
    name: z.string().openapi({
      example: 'Q3 (1 of 5)',
      description:
        'the file name; converted files are named "<name> (<n> of <m>)" after the uploaded file, without extension (downloads add it)',
    }),
    extension: z.string().openapi({ example: '.png' }),
    content_type: z.string(),
    size: z.number().int(),
    url: z.string().openapi({ description: 'download URL with a signed token, valid for FILES_URL_TTL' }),
    preview_url: z.string().nullable().openapi({
      description:
        'preview URL (GET /files/:id/preview) with the same signed token; null for kinds without previews (audio)',
    }),
    parent_file: z.string().nullable(),
    hash: z.string().openapi({ description: 'SHA-256 of the bytes, hex' }),
    prefix: z.string(),
    file_modified_at: z.string().nullable(),
    part_index: z
      .number()
      .int()
      .nullable()
      .openapi({ description: 'converted files: 0-based position among the outputs of their step' }),
    part_total: z.number().int().nullable(),
    metadata: z
      .record(z.string(), z.unknown())
      .openapi({ description: 'facts about the content: page_count, width, height, …' }),
    job_id: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi('File')

export type FileResponse = z.infer<typeof FileResponseSchema>

/** What a file's `url` is made of: the API's origin and the owner's security stamp (which the signature covers). */
export interface FileLinks {
  readonly origin: string
  readonly securityStamp: string
}

/** The record as clients see it: never the owner or the storage key; `url` is signed per response. */
export async function toFileResponse(row: FileRow, config: Config, links: FileLinks): Promise<FileResponse> {
  const token = await signFileToken(config, row.id, { id: row.userId, securityStamp: links.securityStamp })
  const { origin } = links
  const { _id, name, extension, content_type, size, ...rest } = toFileMetadata(row)
  return {
    _id,
    name,
    extension,
    content_type,
    size,
    url: `${origin}/files/${row.id}/download?token=${token}`,
    preview_url: previewKind(row) ? `${origin}/files/${row.id}/preview?token=${token}` : null,
    ...rest,
  }
}

export const FileMetadataSchema = FileResponseSchema.omit({ url: true, preview_url: true }).openapi('FileMetadata')

/** The record without its signed links: what an admin sees of another user's file (worker/admin/routes.ts). */
export function toFileMetadata(row: FileRow): z.infer<typeof FileMetadataSchema> {
  return {
    _id: row.id,
    name: row.name,
    extension: row.extension,
    content_type: row.contentType,
    size: row.size,
    parent_file: row.parentId,
    hash: row.hash,
    prefix: row.prefix,
    file_modified_at: row.fileModifiedAt === null ? null : iso(row.fileModifiedAt),
    part_index: row.partIndex,
    part_total: row.partTotal,
    metadata: row.metadata,
    job_id: row.jobId,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  }
}

export const fileNotFound = () => new ApiError('FILE_NOT_FOUND')

/** The user's file, or undefined: for callers to whom a missing file is not a 404 (the queue consumer). */
export async function findFileOf(db: Database, userId: string, id: string): Promise<FileRow | undefined> {
  return db.query.files.findFirst({ where: and(eq(files.id, id), eq(files.userId, userId)) })
}

/**
 * The files of the jobs `jobIds` (a parenthesised list, or a select of job ids, which drizzle parenthesises)
 * made, or their steps took from an earlier job (a reusable converter's output, an Office document's PDF): a
 * step's `output_ids` names both.
 */
export function madeOrReusedBy(jobIds: SQL): SQL {
  return or(
    inArray(files.jobId, jobIds),
    sql`${files.id} IN (SELECT value FROM job_steps, json_each(job_steps.output_ids) WHERE job_steps.job_id IN ${jobIds})`,
  )!
}

/** The files a conversion job made, and those its steps took from an earlier job. */
export function filesOfJob(db: Database, userId: string | SQLWrapper, jobId: string | SQLWrapper) {
  return db.query.files.findMany({ where: and(madeOrReusedBy(sql`(${jobId})`), eq(files.userId, userId)) })
}

/**
 * The files the jobs of `jobIds` (a subquery of the caller's jobs) made or took, as a query a
 * route can batch with others.
 */
export function filesOfJobs(db: Database, userId: string, jobIds: SQLWrapper) {
  return db.query.files.findMany({ where: and(eq(files.userId, userId), madeOrReusedBy(sql`${jobIds}`)) })
}

/**
 * The newest of the user's files made from `parentId` by one of the steps `stepIds` selects, as a query a batch can
 * carry. An output's origin key is `<step id>:<index>`: it names the step that made it.
 */
export function newestOutputOfSteps(db: Database, userId: string, parentId: string, stepIds: SQLWrapper) {
  const madeBy = sql`substr(${files.originKey}, 1, instr(${files.originKey}, ':') - 1)`
  return db
    .select()
    .from(files)
    .where(and(eq(files.parentId, parentId), eq(files.userId, userId), sql`${madeBy} IN ${stepIds}`))
    .orderBy(desc(files.id))
    .limit(1)
}

/** The caller's file, as a query a route can batch with others (ownedFile turns its rows into the row or a 404). */
export function ownedFileQuery(db: Database, userId: string, id: string) {
  return db
    .select()
    .from(files)
    .where(and(eq(files.id, id), eq(files.userId, userId)))
    .limit(1)
}

export function ownedFile(rows: FileRow[]): FileRow {
  const row = rows[0]
  if (!row) throw fileNotFound()
  return row
}

export async function findOwnedFile(db: Database, userId: string, id: string): Promise<FileRow> {
  return ownedFile(await ownedFileQuery(db, userId, id))
}

export async function renameFile(db: Database, row: FileRow, name: string): Promise<FileRow> {
  const [updated] = await db.update(files).set({ name, updatedAt: Date.now() }).where(eq(files.id, row.id)).returning()
  return updated!
}

export interface FileListQuery {
  readonly limit: number
  readonly cursor?: string
  readonly parentId?: string
  readonly extension?: string
  readonly contentType?: string
  readonly rootOnly?: boolean
}

/** One page of the user's files, newest first, as a query (one row more than the page: filePage cuts it). */
export function listFilesQuery(db: Database, userId: string, query: FileListQuery) {
  const conditions: SQL[] = [eq(files.userId, userId)]
  if (query.cursor) conditions.push(lt(files.id, query.cursor))
  if (query.parentId) conditions.push(eq(files.parentId, query.parentId))
  if (query.extension) conditions.push(eq(files.extension, query.extension))
  if (query.contentType) conditions.push(eq(files.contentType, query.contentType))
  if (query.rootOnly) conditions.push(isNull(files.parentId))
  return db
    .select()
    .from(files)
    .where(and(...conditions))
    .orderBy(desc(files.id))
    .limit(query.limit + 1)
}

/** The page of listFilesQuery's rows; `next` is the cursor of the following page. */
export function filesPage(rows: FileRow[], limit: number): { rows: FileRow[]; next?: string } {
  const page = rows.slice(0, limit)
  return { rows: page, next: rows.length > limit ? page.at(-1)!.id : undefined }
}

export async function listFiles(
  db: Database,
  userId: string,
  query: FileListQuery,
): Promise<{ rows: FileRow[]; next?: string }> {
  return filesPage(await listFilesQuery(db, userId, query), query.limit)
}

/** Direct children in output order (page 1, 2, …), for GET /files/:id. */
export function childrenOf(db: Database, userId: string, parentId: string) {
  return db.query.files.findMany({
    where: and(eq(files.userId, userId), eq(files.parentId, parentId)),
    orderBy: [files.partIndex, files.id],
  })
}

/** The ids of the file and of every file converted from it, at any depth (the caller's only), as a subquery. */
export function treeIds(userId: string, rootId: string): SQL {
  return sql`${treeOf(userId, rootId)} SELECT id FROM tree`
}

/**
 * The file and every file converted from it, at any depth, in the order they were made (a step's outputs by
 * position), at most `limit` rows: one query (a recursive CTE), for one batch.
 */
export function treeQuery(db: Database, userId: string, rootId: string, limit: number) {
  return db
    .select()
    .from(files)
    .where(and(eq(files.userId, userId), sql`${files.id} IN (${treeIds(userId, rootId)})`))
    .orderBy(files.createdAt, files.partIndex, files.id)
    .limit(limit)
}

/** `tree(id)`: the ids of the file and of every file converted from it, at any depth (the caller's only). */
function treeOf(userId: string, rootId: string): SQL {
  return sql`
    WITH RECURSIVE tree(id) AS (
      SELECT id FROM files WHERE id = ${rootId} AND user_id = ${userId}
      UNION
      SELECT files.id FROM files JOIN tree ON files.parent_id = tree.id WHERE files.user_id = ${userId}
    )`
}

/**
 * For the batch that replaces a file's content: deletes every file converted from it (at any depth, as the
 * batch finds them) once the record points at `newKey`, and answers their keys.
 */
export function deleteConversionsOf(db: Database, row: FileRow, newKey: string) {
  return db
    .delete(files)
    .where(sql`${files.id} IN (${treeOf(row.userId, row.id)} SELECT id FROM tree WHERE id != ${row.id})
      AND EXISTS (SELECT 1 FROM files AS root WHERE root.id = ${row.id} AND root.key = ${newKey})`)
    .returning({ id: files.id, key: files.key })
}

/**
 * The previews of a replaced file and of everything converted from it, in the replace's batch: like
 * deleteConversionsOf, only once the record points at the new content. Run it before deleteConversionsOf.
 */
export function deletePreviewsOfReplaced(db: Database, row: FileRow, newKey: string) {
  return db
    .delete(previews)
    .where(sql`${previews.fileId} IN (${treeOf(row.userId, row.id)} SELECT id FROM tree)
      AND EXISTS (SELECT 1 FROM files AS root WHERE root.id = ${row.id} AND root.key = ${newKey})`)
    .returning({ key: previews.key })
}

/** The file and every file converted from it, at any depth. */
export async function fileTree(
  db: Database,
  userId: string,
  rootId: string,
): Promise<Array<{ id: string; key: string; size: number }>> {
  return db.all<{ id: string; key: string; size: number }>(sql`
    ${treeOf(userId, rootId)}
    SELECT files.id AS id, files.key AS key, files.size AS size FROM files JOIN tree ON files.id = tree.id`)
}

/** A file by id whoever owns it: only for a request that proved its right another way (a signed file link). */
export async function findFileById(db: Database, id: string): Promise<FileRow | undefined> {
  return db.query.files.findFirst({ where: eq(files.id, id) })
}

/**
 * A file by id whoever owns it, with its owner's security stamp, in one read: for a request that proves its right by
 * a signed file link, which a changed stamp voids.
 */
export async function findFileWithOwnerStamp(
  db: Database,
  id: string,
): Promise<{ file: FileRow; securityStamp: string } | undefined> {
  const [found] = await db
    .select({ file: files, securityStamp: users.securityStamp })
    .from(files)
    .innerJoin(users, eq(users.id, files.userId))
    .where(eq(files.id, id))
    .limit(1)
  return found
}

/** Adds facts about the content (page_count, …) to a file's metadata. */
export async function mergeFileMetadata(db: Database, row: FileRow, metadata: Record<string, unknown>): Promise<void> {
  await db
    .update(files)
    .set({ metadata: { ...row.metadata, ...metadata } })
    .where(eq(files.id, row.id))
}

const inIdBatches = (db: Database, ids: readonly string[]) => {
  // D1 binds at most 100 parameters a statement.
  const statements = []
  for (let start = 0; start < ids.length; start += 90)
    statements.push(db.delete(files).where(inArray(files.id, ids.slice(start, start + 90))))
  return statements
}

/**
 * Deletes records first, then bytes: a failure between the two leaves unreachable bytes (recorded in
 * pending_deletes and swept), never a record whose bytes are gone.
 */
export async function deleteFiles(
  db: Database,
  bucket: R2Bucket,
  doomed: ReadonlyArray<{ id: string; key: string }>,
): Promise<void> {
  if (doomed.length === 0) return
  // One batch is one transaction: all the records and their previews go, or none.
  const ids = doomed.map((file) => file.id)
  const previewDeletes = []
  for (let start = 0; start < ids.length; start += 90) {
    previewDeletes.push(
      db
        .delete(previews)
        .where(inArray(previews.fileId, ids.slice(start, start + 90)))
        .returning({ key: previews.key }),
    )
  }
  const statements = inIdBatches(db, ids)
  const results = await db.batch([...previewDeletes, ...statements] as unknown as [(typeof previewDeletes)[number]])
  const previewKeys = (results as unknown[])
    .slice(0, previewDeletes.length)
    .flatMap((rows) => (rows as Array<{ key: string }>).map((row) => row.key))
  await deleteObjects(db, bucket, [...doomed.map((file) => file.key), ...previewKeys])
}

/**
 * What any delivery of a conversion step stored: records by origin key (`<step id>:<index>`), objects by key
 * prefix (which also finds an object whose record was never written). Removed when the step fails for good.
 */
export async function deleteStepOutputs(
  db: Database,
  bucket: R2Bucket,
  stepId: string,
  keyPrefix: string | undefined,
): Promise<void> {
  const records = await db.query.files.findMany({
    columns: { id: true, key: true },
    where: like(files.originKey, `${stepId}:%`),
  })
  await deleteFiles(db, bucket, records)
  if (keyPrefix === undefined) return
  for (
    let listed = await bucket.list({ prefix: keyPrefix });
    listed.objects.length > 0;
    listed = await bucket.list({ prefix: keyPrefix })
  ) {
    await deleteObjects(
      db,
      bucket,
      listed.objects.map((object) => object.key),
    )
    if (!listed.truncated) break
  }
}

/**
 * A user's account deletion: every file record goes in the same D1 batch as `alongside` (the user row, their
 * records), then the bytes. Answers what the statements of `alongside` answered.
 */
export async function deleteUserFiles<T extends BatchItem<'sqlite'>>(
  db: Database,
  bucket: R2Bucket,
  userId: string,
  alongside: readonly T[],
): Promise<unknown[]> {
  const ofUser = sql`${previews.fileId} IN (SELECT id FROM files WHERE user_id = ${userId})`
  // One round trip: the rows go and answer their keys (the previews first: their keys are not derived from the files').
  const [previewKeys, keys, ...results] = await db.batch([
    db.delete(previews).where(ofUser).returning({ key: previews.key }),
    db.delete(files).where(eq(files.userId, userId)).returning({ key: files.key }),
    ...alongside,
  ])
  await deleteObjects(
    db,
    bucket,
    [...keys, ...previewKeys].map((row) => row.key),
  )
  return results
}

/**
 * DELETE /files/:id: the file and its conversions; answers the deleted ids (404 when not the caller's). The tree
 * is found and deleted in one statement, so a conversion step storing a child meanwhile either lands before it
 * (and goes with the tree) or after it (and finds its source gone: the step removes what it stored).
 */
export async function deleteFileTree(db: Database, bucket: R2Bucket, userId: string, id: string): Promise<string[]> {
  // The tree's previews first, in the same transaction (their keys are not derived from the files' keys).
  const inTree = (column: typeof files.id | typeof previews.fileId) =>
    sql`${column} IN (${treeOf(userId, id)} SELECT id FROM tree)`
  const [previewed, doomed] = await db.batch([
    db.delete(previews).where(inTree(previews.fileId)).returning({ key: previews.key }),
    db.delete(files).where(inTree(files.id)).returning({ id: files.id, key: files.key }),
  ])
  if (doomed.length === 0) throw fileNotFound()
  await deleteObjects(db, bucket, [...doomed.map((file) => file.key), ...previewed.map((preview) => preview.key)])
  return doomed.map((file) => file.id)
}

/** An Office document's PDF (a conversion of its current content), if the chain has made it. */
export async function findConvertedPdf(db: Database, file: FileRow): Promise<FileRow | undefined> {
  return db.query.files.findFirst({
    where: and(eq(files.parentId, file.id), eq(files.userId, file.userId), eq(files.contentType, 'application/pdf')),
    orderBy: desc(files.id),
  })
}
