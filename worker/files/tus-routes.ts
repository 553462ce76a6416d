// tus 1.0.0 at /files/tus: OPTIONS (discovery), POST (creation, creation-with-upload), HEAD (answered by the GET
// route, as Hono answers every HEAD), PATCH, DELETE (termination), and POST with X-HTTP-Method-Override. Bearer
// auth as everywhere; an upload is its owner's alone (another user's upload URL is 404).
import { z, type RouteConfig } from '@hono/zod-openapi'
import type { Context } from 'hono'
import { createMiddleware } from 'hono/factory'
import { describeRoute, errorResponse, newRouter, securedRoute, type AppEnv, Id } from '../api'
import { authorizedBatch, callerId, callerIsLive, requireAuth } from '../auth/middleware'
import { iso } from '../db/times'
import { ApiError } from '../errors'
import { requestOrigin } from '../origin'
import type { FileRow } from './records'
import { abortCallerUpload, callerUpload, type AfterUpload } from './routes'
import { startUpload, type UploadRow } from './resumable'
import {
  appendToUpload,
  byteCount,
  CHECKSUM_ALGORITHMS,
  expiresHeader,
  parseChecksum,
  parseUploadMetadata,
  patchQueries,
  preparedPatch,
  TUS_EXTENSIONS,
  TUS_VERSION,
  uploadFields,
} from './tus'

const tags = ['tus']
const OFFSET_STREAM = 'application/offset+octet-stream'
const IdParams = z.object({ id: Id })

/**
 * Tus-Resumable on every answer, errors too (tus: "MUST be included in every request and response except for OPTIONS
 * requests").
 */
const tusResumable = createMiddleware<AppEnv>(async (c, next) => {
  try {
    await next()
  } finally {
    c.header('tus-resumable', TUS_VERSION)
  }
})

/**
 * A request naming another version is refused with 412 and Tus-Version (tus: "the Server MUST NOT process the
 * request"); one without the header is taken as 1.0.0, so curl and the security matrix need not send it.
 */
const tusVersion = createMiddleware<AppEnv>(async (c, next) => {
  const version = c.req.header('tus-resumable')
  if (version !== undefined && version !== TUS_VERSION) {
    throw new ApiError('TUS_VERSION_UNSUPPORTED', {
      message: `this server speaks tus ${TUS_VERSION}: send Tus-Resumable: ${TUS_VERSION}`,
      headers: { 'tus-version': TUS_VERSION },
    })
  }
  await next()
})

const tusHeaders = (description: string) =>
  z.object({ 'tus-resumable': z.literal(TUS_VERSION).optional().openapi({ description }) })
const bytes = { [OFFSET_STREAM]: { schema: z.string().openapi({ format: 'binary' }) } }
const route = <const R extends RouteConfig>(config: R) =>
  securedRoute(tags, { middleware: [tusResumable, requireAuth(), tusVersion] as const, ...config })

const options = describeRoute({
  method: 'options',
  path: '/files/tus',
  tags,
  summary: 'tus discovery: Tus-Version, Tus-Extension, Tus-Max-Size, Tus-Checksum-Algorithm (no auth)',
  middleware: [tusResumable] as const,
  responses: { 204: { description: 'The server configuration, in headers' } },
})

const create = route({
  method: 'post',
  path: '/files/tus',
  // The session check shares its round trip with the quota hold (startUpload).
  middleware: [tusResumable, requireAuth({ sharesRoundTrip: true }), tusVersion] as const,
  summary:
    'tus creation (Upload-Length, Upload-Metadata filename/filetype/prefix/modified); a body of application/offset+octet-stream is the first bytes (creation-with-upload)',
  request: {
    headers: tusHeaders('1.0.0 (taken as 1.0.0 when absent; another version → 412)').extend({
      'upload-length': z
        .string()
        .optional()
        .openapi({ description: 'the total size in bytes (required: deferred lengths are not supported)' }),
      'upload-metadata': z
        .string()
        .optional()
        .openapi({ description: 'comma-separated "key base64value": filename, filetype, prefix, modified' }),
    }),
    body: { required: false, content: bytes },
  },
  responses: {
    201: { description: 'Created: Location is the upload URL; Upload-Offset when bytes came with it; Upload-Expires' },
    400: errorResponse('No Upload-Length, deferred length, bad metadata or prefix'),
    412: errorResponse('Tus-Resumable is not 1.0.0'),
    413: errorResponse('Upload-Length over FILES_MAX_RESUMABLE_BYTES (Tus-Max-Size) or the quota'),
  },
})

/** What HEAD answers (and GET, beside its JSON): the tus core protocol's headers, and the file once complete. */
const uploadStateHeaders = {
  'Upload-Offset': { description: 'the bytes the server has', schema: { type: 'integer' as const } },
  'Upload-Length': { description: 'the size declared at creation', schema: { type: 'integer' as const } },
  'Upload-Metadata': { description: 'the metadata sent at creation, as sent', schema: { type: 'string' as const } },
  'Upload-Expires': {
    description: 'when an unfinished upload is dropped (RFC 9110 date)',
    schema: { type: 'string' as const },
  },
  'X-Edgefloor-File-Id': {
    description: 'the file record, once the upload is complete',
    schema: { type: 'string' as const },
  },
  'Cache-Control': { description: 'no-store', schema: { type: 'string' as const } },
}

/** An upload addressed by its URL, with the tus version header. */
const uploadRequest = {
  params: IdParams,
  headers: tusHeaders('1.0.0 (taken as 1.0.0 when absent; another version → 412)'),
}

const read = route({
  method: 'get',
  path: '/files/tus/{id}',
  // HEAD, which a client asks before resuming, answers in the session check's round trip.
  middleware: [tusResumable, requireAuth({ sharesRoundTrip: true }), tusVersion] as const,
  summary: 'The upload as JSON, and in the headers HEAD answers',
  request: uploadRequest,
  responses: {
    200: {
      description: 'The upload (Cache-Control: no-store); X-Edgefloor-File-Id once complete',
      headers: uploadStateHeaders,
      content: {
        'application/json': {
          schema: z
            .object({
              offset: z.number().int(),
              length: z.number().int(),
              part_bytes: z.number().int(),
              expires_at: z.string(),
              file_id: z.string().nullable(),
            })
            .openapi('TusUpload'),
        },
      },
    },
    404: errorResponse('No such upload, expired, or not yours'),
    412: errorResponse('Tus-Resumable is not 1.0.0'),
  },
})

/**
 * tus's HEAD, documented as its own operation. Hono answers HEAD with the GET route's headers and no body, so it
 * has no handler of its own: this entry is for the document (and the clients generated from it) alone.
 */
const head = route({
  method: 'head',
  path: '/files/tus/{id}',
  summary: 'tus: the offset to resume from (Upload-Offset), and the file once complete (X-Edgefloor-File-Id)',
  request: uploadRequest,
  responses: {
    200: { description: 'The upload, in headers (no body)', headers: uploadStateHeaders },
    400: { description: 'A malformed upload id or Tus-Resumable (no body)' },
    401: { description: 'Missing or invalid token (no body)' },
    404: { description: 'No such upload, expired, or not yours (no body)' },
    412: { description: 'Tus-Resumable is not 1.0.0 (no body)' },
  },
})

const patchResponses = {
  204: {
    description: 'Stored: Upload-Offset is the new offset; X-Edgefloor-File-Id when these bytes completed the upload',
  },
  400: errorResponse('Bad Upload-Offset, or an Upload-Checksum algorithm this server does not have'),
  404: errorResponse(
    'No such upload, expired, or not yours; or terminated (or its user deleted) while the bytes were arriving',
  ),
  409: errorResponse(
    "Upload-Offset is not the upload's offset (ask HEAD), the upload is complete (another PATCH may have completed it meanwhile), or a PATCH completing the upload holds the offset",
  ),
  412: errorResponse('Tus-Resumable is not 1.0.0'),
  413: errorResponse("More bytes than the upload has left, or the quota no longer has room for the upload's length"),
  415: errorResponse('Content-Type is not application/offset+octet-stream'),
  460: errorResponse('Checksum mismatch: nothing of the bytes was kept'),
} as const

const patch = route({
  method: 'patch',
  path: '/files/tus/{id}',
  middleware: [tusResumable, requireAuth({ sharesRoundTrip: true }), tusVersion] as const,
  summary:
    "Append bytes at Upload-Offset (any length: stored as R2 parts of the upload's fixed size plus a tail); Upload-Checksum checked when sent",
  request: {
    params: IdParams,
    headers: tusHeaders('1.0.0 (taken as 1.0.0 when absent; another version → 412)').extend({
      'upload-offset': z.string().openapi({ description: "must equal the upload's offset" }),
      'upload-checksum': z
        .string()
        .optional()
        .openapi({ description: `"<algorithm> <base64>", one of ${Object.keys(CHECKSUM_ALGORITHMS).join(', ')}` }),
    }),
    body: { required: true, content: bytes },
  },
  responses: patchResponses,
})

const terminate = route({
  method: 'delete',
  path: '/files/tus/{id}',
  middleware: [tusResumable, requireAuth({ sharesRoundTrip: true }), tusVersion] as const,
  summary: "tus termination: the unfinished upload and its parts are dropped (a completed upload's file stays)",
  request: uploadRequest,
  responses: {
    204: { description: 'Terminated' },
    404: errorResponse('No such upload, expired, or not yours'),
    409: errorResponse('A PATCH completed the upload meanwhile'),
    412: errorResponse('Tus-Resumable is not 1.0.0'),
  },
})

const override = route({
  method: 'post',
  path: '/files/tus/{id}',
  middleware: [tusResumable, requireAuth({ sharesRoundTrip: true }), tusVersion] as const,
  summary:
    'PATCH or DELETE for clients that cannot send them: X-HTTP-Method-Override (tus: "MUST be interpreted as the request\'s method")',
  request: {
    params: IdParams,
    headers: tusHeaders('1.0.0 (taken as 1.0.0 when absent; another version → 412)').extend({
      'x-http-method-override': z.enum(['PATCH', 'DELETE']).openapi({ description: 'the method meant' }),
    }),
    body: { required: false, content: bytes },
  },
  responses: { ...patchResponses, 405: errorResponse('No X-HTTP-Method-Override of PATCH or DELETE') },
})

function deps(c: Context<AppEnv>) {
  return { db: c.var.db, bucket: c.env.BUCKET, config: c.var.config }
}

function uploadHeaders(upload: UploadRow, file?: FileRow): Record<string, string> {
  return {
    'upload-offset': String(upload.offset),
    ...(file || upload.fileId
      ? { 'x-edgefloor-file-id': file?.id ?? upload.fileId! }
      : { 'upload-expires': expiresHeader(upload) }),
  }
}

/**
 * PATCH's headers checked, then its upload read (and what its bytes need from D1 taken) in the session check's round
 * trip, then its body into the engine; 204 with the new offset.
 */
async function appendBytes(c: Context<AppEnv>, id: string, afterUpload: AfterUpload) {
  const offset = byteCount(c.req.header('upload-offset'), 'Upload-Offset')
  if (offset === undefined) throw new ApiError('VALIDATION_FAILED', { message: 'Upload-Offset is required' })
  if (c.req.header('content-type')?.split(';')[0]?.trim().toLowerCase() !== OFFSET_STREAM) {
    throw new ApiError('CONTENT_TYPE_UNSUPPORTED', { message: `a PATCH needs Content-Type: ${OFFSET_STREAM}` })
  }
  const head = { offset, contentLength: byteCount(c.req.header('content-length'), 'Content-Length') }
  const checksum = parseChecksum(c.req.header('upload-checksum'))
  const now = Date.now()
  const read = await authorizedBatch(
    c,
    patchQueries(c.var.db, c.var.config, callerId(c), id, head, callerIsLive(c), now),
  )
  const { upload, prepared } = preparedPatch(read, head, now)
  const result = await appendToUpload(deps(c), upload, { ...head, body: c.req.raw.body, checksum }, prepared)
  if (result.file) await afterUpload(c, result.file)
  return c.body(null, 204, uploadHeaders(result.upload, result.file))
}

async function terminateUpload(c: Context<AppEnv>, id: string) {
  await abortCallerUpload(c, id)
  return c.body(null, 204)
}

/** `afterUpload` follows a completed upload (the app wires auto-conversion), as for the other upload routes. */
export function tusRoutes(afterUpload: AfterUpload = async () => {}) {
  const router = newRouter()
    .openapi(options, (c) => {
      const config = c.var.config
      return c.body(null, 204, {
        'tus-version': TUS_VERSION,
        'tus-extension': TUS_EXTENSIONS,
        'tus-max-size': String(config.FILES_MAX_RESUMABLE_BYTES),
        'tus-checksum-algorithm': Object.keys(CHECKSUM_ALGORITHMS).join(','),
      })
    })
    .openapi(create, async (c) => {
      if (c.req.header('upload-defer-length') !== undefined)
        throw new ApiError('VALIDATION_FAILED', { message: 'deferred lengths are not supported: send Upload-Length' })
      if (c.req.header('upload-concat') !== undefined)
        throw new ApiError('VALIDATION_FAILED', { message: 'concatenation is not supported' })
      const length = byteCount(c.req.header('upload-length'), 'Upload-Length')
      if (length === undefined) throw new ApiError('VALIDATION_FAILED', { message: 'Upload-Length is required' })
      const metadataHeader = c.req.header('upload-metadata')
      const fields = uploadFields(parseUploadMetadata(metadataHeader))
      let upload = await startUpload(
        deps(c),
        callerId(c),
        { protocol: 'tus', ...fields, size: length, metadata: metadataHeader },
        { guard: callerIsLive(c), batch: (queries) => authorizedBatch(c, queries) },
      )
      let file: FileRow | undefined
      const hasBytes = c.req.header('content-type')?.split(';')[0]?.trim().toLowerCase() === OFFSET_STREAM
      if (hasBytes || length === 0) {
        // creation-with-upload (or an empty file, complete at once).
        const result = await appendToUpload(deps(c), upload, {
          offset: 0,
          body: hasBytes ? c.req.raw.body : null,
          contentLength: byteCount(c.req.header('content-length'), 'Content-Length'),
        })
        ;({ upload, file } = result)
      }
      if (file) await afterUpload(c, file)
      return c.body(null, 201, {
        location: `${requestOrigin(c.var.config, c.req.raw)}/files/tus/${upload.id}`,
        ...uploadHeaders(upload, file),
      })
    })
    .openapi(read, async (c) => {
      const upload = await callerUpload(c, c.req.valid('param').id)
      const headers: Record<string, string> = {
        ...uploadHeaders(upload),
        'upload-length': String(upload.length ?? 0),
        'cache-control': 'no-store',
      }
      if (upload.metadata) headers['upload-metadata'] = upload.metadata
      for (const [name, value] of Object.entries(headers)) c.header(name, value)
      const body = {
        offset: upload.offset,
        length: upload.length ?? 0,
        part_bytes: upload.partBytes,
        expires_at: iso(upload.expiresAt),
        file_id: upload.fileId,
      }
      return c.json(body, 200)
    })
    .openapi(patch, async (c) => appendBytes(c, c.req.valid('param').id, afterUpload))
    .openapi(terminate, async (c) => terminateUpload(c, c.req.valid('param').id))
    .openapi(override, async (c) => {
      const method = c.req.header('x-http-method-override')?.toUpperCase()
      if (method !== 'PATCH' && method !== 'DELETE')
        throw new ApiError('METHOD_NOT_ALLOWED', {
          message: 'POST on an upload URL needs X-HTTP-Method-Override: PATCH or DELETE',
        })
      if (method === 'DELETE') return terminateUpload(c, c.req.valid('param').id)
      return appendBytes(c, c.req.valid('param').id, afterUpload)
    })
  const { middleware: _handled, ...headOperation } = head
  router.openAPIRegistry.registerPath(headOperation)
  return router
}
