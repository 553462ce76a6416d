// File endpoints: parse the request, call the files module, shape the answer. Every route but the download
// (which also accepts a signed URL) requires the bearer token, and every lookup is scoped to the caller.
import { z, type RouteConfig } from '@hono/zod-openapi'
import type { Context } from 'hono'
import { errorResponse, jsonBody, jsonResponse, newRouter, securedRoute, type AppEnv, Id } from '../api'
import { authorizedBatch, callerId, callerIsLive, deferBearer, requireAuth } from '../auth/middleware'
import { iso } from '../db/times'
import { ApiError } from '../errors'
import { requestOrigin } from '../origin'
import { streamDownload } from './download'
import {
  childrenOf,
  deleteFileTree,
  filesPage,
  renameFile,
  fileTree,
  FileResponseSchema,
  listFilesQuery,
  ownedFile,
  ownedFileQuery,
  findFileWithOwnerStamp,
  toFileResponse,
  type FileRow,
} from './records'
import { verifyFileToken } from './signed-url'
import { replaceFileContent, storeFile } from './store'
import { cleanFileName, extensionOf, readUpload, reserveUpload, reserveUploadWithCheck } from './upload'
import {
  completeUpload,
  finishAbort,
  uploadRemovalQueries,
  DEFAULT_PART_BYTES,
  listParts,
  MAX_PARTS,
  MIN_PART_BYTES,
  ownedUpload,
  ownedUploadQuery,
  raceOutcome,
  startUpload,
  completionReservation,
  partReservation,
  uploadNotFound,
  uploadPart,
  type PartRow,
  type UploadRow,
} from './resumable'

const tags = ['Files']
const IdParams = z.object({ id: Id })
const FileWithChildren = FileResponseSchema.extend({ files: z.array(FileResponseSchema) }).openapi('FileWithChildren')
const PAGE_MAX = 200

const uploadHeaders = z.object({
  'x-edgefloor-name': z
    .string()
    .optional()
    .openapi({ description: 'file name, URI-encoded (X-Basefloor-Name also accepted)' }),
  'x-edgefloor-size': z.string().optional().openapi({ description: 'exact size in bytes; the upload must match it' }),
  'x-edgefloor-type': z.string().optional().openapi({ description: 'declared MIME type: a hint, the bytes decide' }),
  'x-edgefloor-modified': z
    .string()
    .optional()
    .openapi({ description: 'last modified: epoch milliseconds or ISO date' }),
  'x-edgefloor-prefix': z
    .string()
    .optional()
    .openapi({ description: "storage path prefix; @user._id (or Basefloor's @req_user._id) expands to the caller" }),
})

// Plain schemas, not zod: a zod form validator would buffer the whole upload to parse it. The file comes as the
// multipart field "file", or as the raw body (any other Content-Type: the fast path, see docs/files-and-uploads.md).
const multipartFile = {
  'multipart/form-data': {
    schema: {
      type: 'object' as const,
      properties: { file: { type: 'string' as const, format: 'binary' } },
      required: ['file'],
    },
  },
  'application/octet-stream': { schema: { type: 'string' as const, format: 'binary' } },
}

const listQuery = z.object({
  limit: z.coerce.number().int().min(1).max(PAGE_MAX).default(50),
  cursor: Id.optional().openapi({ description: 'from the Link header of the previous page' }),
  parent_file: Id.optional(),
  extension: z.string().max(20).optional().openapi({ example: '.png' }),
  content_type: z.string().max(200).optional(),
  root: z.enum(['true', 'false']).optional().openapi({ description: 'true: only uploads, not converted files' }),
})

const route = <const R extends RouteConfig>(config: R) => securedRoute(tags, config)

const upload = route({
  method: 'post',
  path: '/files',
  summary: 'Upload a file (the raw body, or multipart field "file"), streamed to storage',
  middleware: [requireAuth({ sharesRoundTrip: true })] as const,
  request: { headers: uploadHeaders, body: { required: true, content: multipartFile } },
  responses: {
    201: jsonResponse(FileResponseSchema, 'The stored file'),
    400: errorResponse('No body, no "file" field, size mismatch, a body that ended early, bad header'),
    413: errorResponse('Larger than FILES_MAX_BYTES or the quota'),
  },
})

const list = route({
  method: 'get',
  path: '/files',
  summary: "The caller's files, newest first (next page in the Link header)",
  middleware: [requireAuth({ sharesRoundTrip: true })] as const,
  request: { query: listQuery },
  responses: { 200: jsonResponse(z.array(FileResponseSchema), 'One page of files'), 400: errorResponse('Bad query') },
})

const read = route({
  method: 'get',
  path: '/files/{id}',
  summary: 'One file, with its direct children (the files converted from it)',
  middleware: [requireAuth({ sharesRoundTrip: true })] as const,
  request: { params: IdParams },
  responses: { 200: jsonResponse(FileWithChildren, 'The file'), 404: errorResponse('Not found (or not yours)') },
})

const children = route({
  method: 'get',
  path: '/files/{id}/files',
  summary: 'The files converted from this one (same pagination and filters as the list)',
  middleware: [requireAuth({ sharesRoundTrip: true })] as const,
  request: { params: IdParams, query: listQuery.omit({ parent_file: true, root: true }) },
  responses: {
    200: jsonResponse(z.array(FileResponseSchema), 'One page of children'),
    404: errorResponse('Not found (or not yours)'),
  },
})

const UpdateBody = z.strictObject({ name: z.string().min(1).max(255) }).openapi('FileUpdate')

const update = route({
  method: 'put',
  path: '/files/{id}',
  summary: 'Rename (JSON { name }) or replace the content (multipart "file"; its conversions are deleted)',
  middleware: [requireAuth({ sharesRoundTrip: true })] as const,
  request: {
    params: IdParams,
    headers: uploadHeaders,
    // Not `required`: the JSON schema then validates JSON bodies only, and multipart passes to the handler.
    body: { required: false, content: { 'application/json': { schema: UpdateBody }, ...multipartFile } },
  },
  responses: {
    200: jsonResponse(FileResponseSchema, 'The updated file'),
    400: errorResponse('Validation error'),
    404: errorResponse('Not found (or not yours)'),
    413: errorResponse('Larger than FILES_MAX_BYTES or the quota (the bytes replaced do not count)'),
    415: errorResponse('Neither JSON nor multipart', 'CONTENT_TYPE_UNSUPPORTED'),
  },
})

const remove = route({
  method: 'delete',
  path: '/files/{id}',
  summary: 'Delete a file and every file converted from it',
  middleware: [requireAuth()] as const,
  request: { params: IdParams },
  responses: {
    200: jsonResponse(z.object({ deleted: z.array(z.string()) }).openapi('Deleted'), 'The ids deleted'),
    404: errorResponse('Not found (or not yours)'),
  },
})

// Conditional and range headers are free text on purpose: RFC 9110 has a malformed Range ignored, not refused.
const downloadHeaders = z.object({
  range: z.string().optional().openapi({
    description: 'one range, `bytes=<first>-<last>`, `bytes=<first>-` or `bytes=-<suffix>`; others are ignored',
    example: 'bytes=0-1023',
  }),
  'if-range': z
    .string()
    .optional()
    .openapi({ description: 'the ETag or Last-Modified the range is for; otherwise the whole file' }),
  'if-match': z.string().optional().openapi({ description: 'ETags (strong comparison) or *; none matching → 412' }),
  'if-unmodified-since': z
    .string()
    .optional()
    .openapi({ description: 'HTTP date; modified since → 412 (ignored with If-Match)' }),
  'if-none-match': z.string().optional().openapi({ description: 'ETags or *; one matching → 304' }),
  'if-modified-since': z
    .string()
    .optional()
    .openapi({ description: 'HTTP date; not modified since → 304 (ignored with If-None-Match)' }),
})
const validatorHeaders = z.object({
  etag: z.string().openapi({ description: 'the quoted SHA-256 of the bytes' }),
  'last-modified': z.string().openapi({ description: 'when the record last changed' }),
})
const bytesHeaders = validatorHeaders.extend({ 'accept-ranges': z.literal('bytes'), 'content-length': z.string() })
const binary = { 'application/octet-stream': { schema: z.string().openapi({ format: 'binary' }) } }

const download = route({
  method: 'get',
  path: '/files/{id}/download',
  summary: 'The bytes (Range, ETag and conditional requests); the bearer token or the signed ?token= of `url`',
  security: [{ bearer: [] }, { signedUrl: [] }],
  request: {
    params: IdParams,
    headers: downloadHeaders,
    query: z.object({
      token: z.string().max(200).optional().openapi({ description: "the signed token from the record's url" }),
      download: z.enum(['0', '1']).optional().openapi({ description: '1: Content-Disposition attachment' }),
      force: z.enum(['0', '1']).optional().openapi({ description: "Basefloor's name for download=1" }),
    }),
  },
  responses: {
    200: { description: 'The file', headers: bytesHeaders, content: binary },
    206: {
      description: 'The requested byte range (an end past the file is clamped)',
      headers: bytesHeaders.extend({ 'content-range': z.string().openapi({ example: 'bytes 0-1023/48213' }) }),
      content: binary,
    },
    304: { description: 'Not modified (If-None-Match or If-Modified-Since)', headers: validatorHeaders },
    401: errorResponse('No bearer token and no valid signed token'),
    404: errorResponse('Not found'),
    412: errorResponse('If-Match or If-Unmodified-Since failed'),
    416: {
      ...errorResponse('The range starts past the end of the file'),
      headers: z.object({ 'content-range': z.string().openapi({ example: 'bytes */48213' }) }),
    },
  },
})

const UploadId = z.object({ uploadId: Id })
const UploadSchema = z
  .object({
    upload_id: z.string(),
    name: z.string(),
    parts: z.array(z.object({ part: z.number().int(), size: z.number().int() })),
    part_bytes: z.number().int().openapi({
      description:
        'every part but the last has exactly this many bytes, the last no more (R2: "All parts except the last one must be the same size")',
    }),
    size: z.number().int().nullable().openapi({ description: 'the declared total size, if any' }),
    expires_at: z
      .string()
      .openapi({ description: 'when the unfinished upload is aborted (FILES_UPLOAD_TTL after the last part)' }),
    min_part_bytes: z.number().int().openapi({ description: "R2's smallest non-final part" }),
    max_part_bytes: z.number().int().openapi({ description: 'no part may have more (FILES_MAX_PART_BYTES)' }),
    max_bytes: z
      .number()
      .int()
      .openapi({ description: 'all parts together may have at most this many bytes (FILES_MAX_RESUMABLE_BYTES)' }),
    max_parts: z.number().int(),
  })
  .openapi('Upload')
const StartUploadBody = z
  .strictObject({
    name: z.string().min(1).max(1000).openapi({ example: 'video.mp4' }),
    prefix: z.string().max(1000).optional(),
    modified: z.union([z.number().int(), z.iso.datetime({ offset: true })]).optional(),
    size: z
      .number()
      .int()
      .min(0)
      .optional()
      .openapi({ description: 'the expected total size: refused at once (413) when over the limit or the quota' }),
    part_bytes: z
      .number()
      .int()
      .optional()
      .openapi({
        description: `the size of every part but the last (5 MiB to FILES_MAX_PART_BYTES; ${DEFAULT_PART_BYTES} when absent); fixed for the upload`,
      }),
  })
  .openapi('StartUpload')

const startUploadRoute = route({
  method: 'post',
  path: '/files/uploads',
  summary: 'Start a resumable upload (for files bigger than one request)',
  middleware: [requireAuth({ sharesRoundTrip: true })] as const,
  request: { body: jsonBody(StartUploadBody) },
  responses: {
    201: jsonResponse(UploadSchema, 'The upload: send parts, then complete it'),
    400: errorResponse('Bad name or prefix'),
    413: errorResponse('The declared size is over FILES_MAX_RESUMABLE_BYTES or the quota, or the quota is used up'),
  },
})

const readUploadRoute = route({
  method: 'get',
  path: '/files/uploads/{uploadId}',
  summary: 'A resumable upload and the parts it has (to resume after a failure)',
  middleware: [requireAuth({ sharesRoundTrip: true })] as const,
  request: { params: UploadId },
  responses: { 200: jsonResponse(UploadSchema, 'The upload'), 404: errorResponse('Upload not found') },
})

const partRoute = route({
  method: 'put',
  path: '/files/uploads/{uploadId}/{part}',
  summary: 'Send one part (raw bytes with Content-Length); sending a part again replaces it',
  middleware: [requireAuth({ sharesRoundTrip: true })] as const,
  request: {
    params: z.object({ uploadId: Id, part: z.coerce.number().int().min(1).max(MAX_PARTS) }),
    body: {
      required: true,
      content: { 'application/octet-stream': { schema: z.string().openapi({ format: 'binary' }) } },
    },
  },
  responses: {
    200: jsonResponse(
      z.object({ part: z.number().int(), etag: z.string(), size: z.number().int() }).openapi('UploadedPart'),
      'The part is stored',
    ),
    400: errorResponse('No body or no Content-Length, or a size other than part_bytes for a part that is not the last'),
    404: errorResponse('Upload not found (or aborted while the part was sending)'),
    409: errorResponse('UPLOAD_COMPLETED: another request completed the upload while the part was sending'),
    413: errorResponse(
      'The part is over FILES_MAX_PART_BYTES, or the parts together over FILES_MAX_RESUMABLE_BYTES or the quota',
    ),
  },
})

const completeRoute = route({
  method: 'post',
  path: '/files/uploads/{uploadId}/complete',
  summary: 'Join the parts into a file record',
  middleware: [requireAuth({ sharesRoundTrip: true })] as const,
  request: { params: UploadId },
  responses: {
    201: jsonResponse(FileResponseSchema, 'The stored file'),
    400: errorResponse('Parts missing or too small'),
    404: errorResponse('Upload not found (or aborted meanwhile)'),
    409: errorResponse('UPLOAD_COMPLETED: another request completed it first'),
    413: errorResponse('Too large'),
  },
})

const abortRoute = route({
  method: 'delete',
  path: '/files/uploads/{uploadId}',
  summary: 'Abort a resumable upload and drop its parts',
  middleware: [requireAuth({ sharesRoundTrip: true })] as const,
  request: { params: UploadId },
  responses: {
    200: jsonResponse(z.object({ message: z.string() }), 'Aborted'),
    404: errorResponse('Upload not found'),
    409: errorResponse('UPLOAD_COMPLETED: another request completed it first'),
  },
})

async function uploadView(c: Context<AppEnv>, upload: UploadRow, stored?: PartRow[]) {
  const parts = stored ?? (await listParts(c.var.db, upload))
  const config = c.var.config
  return {
    upload_id: upload.id,
    name: upload.name,
    parts: parts.map((part) => ({ part: part.partNumber, size: part.size })),
    part_bytes: upload.partBytes,
    size: upload.length,
    expires_at: iso(upload.expiresAt),
    min_part_bytes: MIN_PART_BYTES,
    max_part_bytes: config.FILES_MAX_PART_BYTES,
    max_bytes: config.FILES_MAX_RESUMABLE_BYTES,
    max_parts: MAX_PARTS,
  }
}

/** The caller's file URLs: this API's origin, signed with the caller's security stamp. */
function links(c: Context<AppEnv>) {
  return { origin: requestOrigin(c.var.config, c.req.raw), securityStamp: c.var.user.securityStamp }
}

function nextLink(c: Context<AppEnv>, cursor: string): string {
  const url = new URL(c.req.url)
  url.searchParams.set('cursor', cursor)
  return `<${url.pathname}${url.search}>; rel="next"`
}

const shape = (c: Context<AppEnv>, row: FileRow) => toFileResponse(row, c.var.config, links(c))

type PageQuery = Pick<z.infer<typeof listQuery>, 'limit' | 'cursor' | 'extension' | 'content_type'>

/** The query of one page of the caller's files for a list query and a scope (filePage shapes its rows). */
const pageQuery = (c: Context<AppEnv>, query: PageQuery, scope: { parentId?: string; rootOnly?: boolean }) =>
  listFilesQuery(c.var.db, callerId(c), {
    limit: query.limit,
    cursor: query.cursor,
    extension: query.extension?.toLowerCase(),
    contentType: query.content_type,
    ...scope,
  })

/** One page of the caller's files, with the next page's Link header. */
function filePage(c: Context<AppEnv>, query: PageQuery, rows: FileRow[]) {
  const page = filesPage(rows, query.limit)
  if (page.next) c.header('link', nextLink(c, page.next))
  return Promise.all(page.rows.map((row) => shape(c, row)))
}

/**
 * The file the download is for: by signed token, or by bearer token (then ownership is checked). A signed token
 * that fails for any reason (unknown id, someone else's file, expired, signed before a reset) answers the same 401.
 */
export async function downloadOwner(c: Context<AppEnv>, id: string, signed: string | undefined): Promise<FileRow> {
  if (signed) {
    const found = await findFileWithOwnerStamp(c.var.db, id)
    if (
      !found ||
      !(await verifyFileToken(c.var.config, signed, found.file.id, {
        id: found.file.userId,
        securityStamp: found.securityStamp,
      }))
    ) {
      throw new ApiError('FILE_LINK_INVALID')
    }
    return found.file
  }
  await deferBearer(c, { missingTokenMessage: 'missing bearer token or signed file link' })
  return callerFile(c, id)
}

/** The caller's file, read in the session check's round trip when it is still owed (requireAuth sharesRoundTrip). */
export async function callerFile(c: Context<AppEnv>, id: string): Promise<FileRow> {
  const [rows] = await authorizedBatch(c, [ownedFileQuery(c.var.db, callerId(c), id)])
  return ownedFile(rows)
}

/** The caller's unfinished upload, likewise. */
export async function callerUpload(c: Context<AppEnv>, id: string): Promise<UploadRow> {
  const [rows] = await authorizedBatch(c, [ownedUploadQuery(c.var.db, callerId(c), id)])
  return ownedUpload(rows)
}

/**
 * Aborts the caller's unfinished upload. It is read and removed in the session check's round trip (the removal
 * guarded by the check); its R2 side and its quota go after. 404 when it is not theirs; 409 or 404 when another
 * request completed or aborted it first.
 */
export async function abortCallerUpload(c: Context<AppEnv>, id: string): Promise<void> {
  const now = Date.now()
  const deps = { db: c.var.db, bucket: c.env.BUCKET }
  const [rows, [removed]] = await authorizedBatch(
    c,
    uploadRemovalQueries(c.var.db, callerId(c), id, callerIsLive(c), now),
  )
  const upload = ownedUpload(rows, now)
  if (!removed) throw (await raceOutcome(deps, upload)) ?? uploadNotFound()
  await finishAbort(deps, removed)
}

/** What follows a stored upload; the app wires it (auto-conversion), so files never import the pipeline. */
export type AfterUpload = (c: Context<AppEnv>, row: FileRow) => Promise<void>

export function fileRoutes(afterUpload: AfterUpload = async () => {}) {
  const app = newRouter()
  app.openAPIRegistry.registerComponent('securitySchemes', 'signedUrl', {
    type: 'apiKey',
    in: 'query',
    name: 'token',
    description: "the signed token in a file record's url",
  })

  const uploadDeps = (c: Context<AppEnv>) => ({ db: c.var.db, bucket: c.env.BUCKET, config: c.var.config })

  return (
    app
      .openapi(startUploadRoute, async (c) => {
        const body = c.req.valid('json')
        const modified = typeof body.modified === 'string' ? Date.parse(body.modified) : body.modified
        const upload = await startUpload(
          uploadDeps(c),
          callerId(c),
          {
            protocol: 'parts',
            name: cleanFileName(body.name),
            prefix: body.prefix,
            modified,
            size: body.size,
            partBytes: body.part_bytes,
          },
          { guard: callerIsLive(c), batch: (queries) => authorizedBatch(c, queries) },
        )
        c.header('location', `/files/uploads/${upload.id}`)
        // A new upload has no parts yet.
        return c.json(await uploadView(c, upload, []), 201)
      })
      .openapi(readUploadRoute, async (c) => {
        const id = c.req.valid('param').uploadId
        // The parts are read with the upload, by its id. Another user's upload id answers none; its parts are dropped.
        const [rows, parts] = await authorizedBatch(c, [
          ownedUploadQuery(c.var.db, callerId(c), id),
          listParts(c.var.db, { id }),
        ])
        return c.json(await uploadView(c, ownedUpload(rows), parts), 200)
      })
      .openapi(partRoute, async (c) => {
        const { uploadId, part } = c.req.valid('param')
        const body = c.req.raw.body
        const length = Number(c.req.header('content-length'))
        const now = Date.now()
        // The upload, its parts and the quota hold in the session check's round trip; the part's row after R2.
        const [rows, parts, ...held] = await authorizedBatch(c, [
          ownedUploadQuery(c.var.db, callerId(c), uploadId),
          listParts(c.var.db, { id: uploadId }),
          ...partReservation(
            c.var.db,
            c.var.config,
            callerId(c),
            uploadId,
            { number: part, body, length },
            callerIsLive(c),
            now,
          ),
        ])
        const upload = ownedUpload(rows, now)
        const stored = await uploadPart(uploadDeps(c), upload, part, body, length, { parts, held })
        return c.json(stored, 200)
      })
      .openapi(completeRoute, async (c) => {
        const id = c.req.valid('param').uploadId
        const now = Date.now()
        // The upload, its parts and the quota hold in the session check's round trip; the record after R2 joins them.
        const [rows, parts, ...held] = await authorizedBatch(c, [
          ownedUploadQuery(c.var.db, callerId(c), id),
          listParts(c.var.db, { id }),
          ...completionReservation(c.var.db, c.var.config, callerId(c), id, callerIsLive(c), now),
        ])
        const upload = ownedUpload(rows, now)
        const row = await completeUpload(uploadDeps(c), upload, undefined, { parts, held })
        await afterUpload(c, row)
        return c.json(await shape(c, row), 201)
      })
      .openapi(abortRoute, async (c) => {
        await abortCallerUpload(c, c.req.valid('param').uploadId)
        return c.json({ message: 'upload aborted' }, 200)
      })
      .openapi(upload, async (c) => {
        const incoming = await readUpload(c.req.raw, callerId(c))
        // The quota hold in the session check's round trip; the record and the hold's end in one batch after R2.
        const limits = await reserveUploadWithCheck(c.var.db, c.var.config, callerId(c), incoming.size, {
          guard: callerIsLive(c),
          batch: (queries) => authorizedBatch(c, queries),
        })
        const row = await storeFile(
          { db: c.var.db, bucket: c.env.BUCKET },
          { ...incoming, ...limits, userId: c.var.user.id, fileModifiedAt: incoming.modifiedAt },
        )
        await afterUpload(c, row)
        return c.json(await shape(c, row), 201)
      })
      .openapi(list, async (c) => {
        const query = c.req.valid('query')
        const [rows] = await authorizedBatch(c, [
          pageQuery(c, query, { parentId: query.parent_file, rootOnly: query.root === 'true' }),
        ])
        return c.json(await filePage(c, query, rows), 200)
      })
      .openapi(read, async (c) => {
        const id = c.req.valid('param').id
        const [rows, kids] = await authorizedBatch(c, [
          ownedFileQuery(c.var.db, callerId(c), id),
          childrenOf(c.var.db, callerId(c), id),
        ])
        const row = ownedFile(rows)
        return c.json({ ...(await shape(c, row)), files: await Promise.all(kids.map((kid) => shape(c, kid))) }, 200)
      })
      .openapi(children, async (c) => {
        const id = c.req.valid('param').id
        const query = c.req.valid('query')
        const [rows, page] = await authorizedBatch(c, [
          ownedFileQuery(c.var.db, callerId(c), id),
          pageQuery(c, query, { parentId: id }),
        ])
        ownedFile(rows)
        return c.json(await filePage(c, query, page), 200)
      })
      .openapi(update, async (c) => {
        const row = await callerFile(c, c.req.valid('param').id)
        const isJson = c.req.header('content-type')?.toLowerCase().includes('application/json')
        if (isJson) {
          const { name } = (c.req.valid as unknown as (target: 'json') => z.infer<typeof UpdateBody>)('json')
          return c.json(await shape(c, await renameFile(c.var.db, row, cleanFileName(name))), 200)
        }
        const incoming = await readUpload(c.req.raw, c.var.user.id)
        // The replace frees the old bytes and the conversions it deletes: the quota does not count them.
        const reclaimedBytes = (await fileTree(c.var.db, c.var.user.id, row.id)).reduce(
          (sum, file) => sum + file.size,
          0,
        )
        const limits = await reserveUpload(c.var.db, c.var.config, c.var.user.id, incoming.size, { reclaimedBytes })
        const hasNewName = c.req.header('x-edgefloor-name') ?? c.req.header('x-basefloor-name')
        const name = hasNewName ? incoming.name : row.name
        const updated = await replaceFileContent({ db: c.var.db, bucket: c.env.BUCKET }, row, {
          ...incoming,
          name,
          extension: hasNewName ? incoming.extension : extensionOf(row.name) || incoming.extension,
          fileModifiedAt: incoming.modifiedAt,
          ...limits,
        })
        await afterUpload(c, updated)
        return c.json(await shape(c, updated), 200)
      })
      .openapi(remove, async (c) => {
        const deleted = await deleteFileTree(c.var.db, c.env.BUCKET, c.var.user.id, c.req.valid('param').id)
        return c.json({ deleted }, 200)
      })
      // A streamed body with several statuses (200, 206, 304): the handler answers a plain Response.
      .openapi(download, async (c) => {
        const query = c.req.query()
        const row = await downloadOwner(c, c.req.valid('param').id, query.token)
        return streamDownload(c.env.BUCKET, row, c.req.raw, query.download === '1' || query.force === '1')
      })
  )
}
