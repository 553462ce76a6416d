// File records in D1: ownership in every WHERE clause (someone else's file is simply not found), listing with
// cursor pagination, the public shape of a record, and deleting a file with everything converted from it.
import { z } from '@hono/zod-openapi'
import { and, desc, eq, inArray, isNull, lt, sql, type SQL } from 'drizzle-orm'
import type { Config } from '../config'
import type { Database } from '../db/client'
import { files } from '../db/schema'
import { ApiError } from '../errors'
import { signFileToken } from './signed-url'

export type FileRow = typeof files.$inferSelect

export const FileResponseSchema = z
  .object({
    _id: z.string(),
    name: z.string(),
    extension: z.string().openapi({ example: '.pdf' }),
    content_type: z.string(),
    size: z.number().int(),
    url: z.string().openapi({ description: 'download URL with a signed token, valid for FILES_URL_TTL' }),
    parent_file: z.string().nullable(),
    hash: z.string().openapi({ description: 'SHA-256 of the bytes, hex' }),
    prefix: z.string(),
    file_modified_at: z.string().nullable(),
    part_index: z.number().int().nullable().openapi({ description: 'converted files: 0-based position among the outputs of their step' }),
    part_total: z.number().int().nullable(),
    metadata: z.record(z.string(), z.unknown()).openapi({ description: 'facts about the content: page_count, width, height, …' }),
    job_id: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi('File')

export type FileResponse = z.infer<typeof FileResponseSchema>

const iso = (ms: number) => new Date(ms).toISOString()

/** What a file's `url` is made of: the API's origin and the owner's security stamp (which the signature covers). */
export interface FileLinks {
  readonly origin: string
  readonly securityStamp: string
}

/** The record as clients see it: never the owner or the storage key; `url` is signed per response. */
export async function toFileResponse(row: FileRow, config: Config, links: FileLinks): Promise<FileResponse> {
  const token = await signFileToken(config, row.id, { id: row.userId, securityStamp: links.securityStamp })
  const { origin } = links
  return {
    _id: row.id,
    name: row.name,
    extension: row.extension,
    content_type: row.contentType,
    size: row.size,
    url: `${origin}/files/${row.id}/download?token=${token}`,
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

export async function findOwnedFile(db: Database, userId: string, id: string): Promise<FileRow> {
  const row = await db.query.files.findFirst({ where: and(eq(files.id, id), eq(files.userId, userId)) })
  if (!row) throw fileNotFound()
  return row
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

/** One page of the user's files, newest first; `next` is the cursor of the following page. */
export async function listFiles(db: Database, userId: string, query: FileListQuery): Promise<{ rows: FileRow[]; next?: string }> {
  const conditions: SQL[] = [eq(files.userId, userId)]
  if (query.cursor) conditions.push(lt(files.id, query.cursor))
  if (query.parentId) conditions.push(eq(files.parentId, query.parentId))
  if (query.extension) conditions.push(eq(files.extension, query.extension))
  if (query.contentType) conditions.push(eq(files.contentType, query.contentType))
  if (query.rootOnly) conditions.push(isNull(files.parentId))
  const rows = await db
    .select()
    .from(files)
    .where(and(...conditions))
    .orderBy(desc(files.id))
    .limit(query.limit + 1)
  const page = rows.slice(0, query.limit)
  return { rows: page, next: rows.length > query.limit ? page.at(-1)!.id : undefined }
}

/** Direct children in output order (page 1, 2, …), for GET /files/:id. */
export async function childrenOf(db: Database, userId: string, parentId: string): Promise<FileRow[]> {
  return db.query.files.findMany({
    where: and(eq(files.userId, userId), eq(files.parentId, parentId)),
    orderBy: [files.partIndex, files.id],
  })
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

/** The file and every file converted from it, at any depth. */
export async function fileTree(db: Database, userId: string, rootId: string): Promise<Array<{ id: string; key: string; size: number }>> {
  return db.all<{ id: string; key: string; size: number }>(sql`
    ${treeOf(userId, rootId)}
    SELECT files.id AS id, files.key AS key, files.size AS size FROM files JOIN tree ON files.id = tree.id`)
}

/**
 * Deletes records first, then bytes: a failure between the two leaves unreachable bytes (harmless, retried by
 * a later delete of the same keys), never a record whose bytes are gone.
 */
export async function deleteFiles(db: Database, bucket: R2Bucket, doomed: ReadonlyArray<{ id: string; key: string }>): Promise<void> {
  if (doomed.length === 0) return
  const ids = doomed.map((file) => file.id)
  // One batch is one transaction: all the records go, or none (D1 binds at most 100 parameters a statement).
  const statements = []
  for (let start = 0; start < ids.length; start += 90) statements.push(db.delete(files).where(inArray(files.id, ids.slice(start, start + 90))))
  await db.batch(statements as [(typeof statements)[number], ...typeof statements])
  await deleteObjects(bucket, doomed.map((file) => file.key))
}

/** R2 deletes at most 1000 keys a call. */
async function deleteObjects(bucket: R2Bucket, keys: readonly string[]): Promise<void> {
  for (let start = 0; start < keys.length; start += 1000) await bucket.delete(keys.slice(start, start + 1000))
}

/**
 * DELETE /files/:id: the file and its conversions; answers the deleted ids (404 when not the caller's). The tree
 * is found and deleted in one statement, so a conversion step storing a child meanwhile either lands before it
 * (and goes with the tree) or after it (and finds its source gone: the step removes what it stored).
 */
export async function deleteFileTree(db: Database, bucket: R2Bucket, userId: string, id: string): Promise<string[]> {
  const doomed = await db.all<{ id: string; key: string }>(sql`
    DELETE FROM files WHERE id IN (${treeOf(userId, id)} SELECT id FROM tree) RETURNING id, key`)
  if (doomed.length === 0) throw fileNotFound()
  await deleteObjects(bucket, doomed.map((file) => file.key))
  return doomed.map((file) => file.id)
}
