// GET /files/:id/preview: parse the parameters, make (or find) the preview, answer it with its validators.
import { z } from '@hono/zod-openapi'
import { errorResponse, newRouter, securedRoute, Id } from '../api'
import { evaluatePreconditions } from '../files/download'
import { readObject } from '../files/objects'
import { downloadOwner } from '../files/routes'
import { ApiError } from '../errors'
import { cachedPreview, keepPreview, previewCacheKey } from './edge-cache'
import { makePreview, PREVIEW_RETRY_AFTER_SECONDS, previewEtag } from './make'
import { PreviewQuery, previewParams } from './params'

const CACHE_CONTROL = 'private, max-age=0, must-revalidate'

const preview = securedRoute(['Files'], {
  method: 'get',
  path: '/files/{id}/preview',
  summary: 'A thumbnail of the file: images, PDFs and Office documents (a page), text (its first page)',
  description:
    'Made once per content and parameters, then served from storage (counted in the quota). The consumer Worker draws it: the first request waits for the drawing up to PREVIEW_WAIT_MS, then (or at once with `Prefer: respond-async`) answers 202 with Retry-After and Location. An Office document is previewed from its PDF: while the chain makes it, 202 with Retry-After and the job.',
  security: [{ bearer: [] }, { signedUrl: [] }],
  request: {
    params: z.object({ id: Id }),
    query: PreviewQuery,
    headers: z.object({
      accept: z
        .string()
        .optional()
        .openapi({ description: 'WebP when it allows image/webp (or no Accept), else PNG; `format` overrides' }),
      'if-none-match': z.string().optional().openapi({ description: "the preview's ETag → 304" }),
      prefer: z.string().optional().openapi({
        description: '`respond-async`: answer 202 at once while a new preview is drawn',
        example: 'respond-async',
      }),
    }),
  },
  responses: {
    200: {
      description: 'The preview',
      headers: z.object({ etag: z.string(), 'cache-control': z.string(), vary: z.string() }),
      content: {
        'image/webp': { schema: z.string().openapi({ format: 'binary' }) },
        'image/png': { schema: z.string().openapi({ format: 'binary' }) },
        'image/avif': { schema: z.string().openapi({ format: 'binary' }) },
      },
    },
    202: {
      description:
        "The preview is being drawn (Location: this URL), or an Office document's PDF is being made (Location: its job): ask again after Retry-After seconds",
      headers: z.object({ 'retry-after': z.string(), location: z.string() }),
      content: {
        'application/json': {
          schema: z.object({
            message: z.string(),
            job: z.string().optional().openapi({ description: "the job making an Office document's PDF" }),
          }),
        },
      },
    },
    304: { description: 'Not modified (If-None-Match)' },
    401: errorResponse('No bearer token and no valid signed token'),
    413: errorResponse("The owner's quota has no room for the preview"),
    415: errorResponse('No preview for this kind of file (audio), or the bytes are not the image they claim'),
    422: errorResponse(
      'The file cannot be previewed: the same reason its conversion would fail with (encrypted, truncated, too many pixels, no such page)',
    ),
    429: errorResponse("20 of the user's previews are queued for drawing already: ask again after Retry-After seconds"),
  },
})

export function previewRoutes() {
  return newRouter().openapi(preview, async (c) => {
    const query = c.req.valid('query')
    const file = await downloadOwner(c, c.req.valid('param').id, query.token)
    const params = previewParams(query, c.req.header('accept'))
    const etag = previewEtag(file, params)
    const headers = new Headers({ etag, 'cache-control': CACHE_CONTROL, vary: 'Accept' })
    if (
      evaluatePreconditions(new Headers({ 'if-none-match': c.req.header('if-none-match') ?? '' }), {
        etag,
        lastModifiedMs: 0,
      }) === 'not-modified'
    ) {
      return new Response(null, { status: 304, headers })
    }
    headers.set('x-content-type-options', 'nosniff')
    const cacheKey = previewCacheKey(file, params)
    const hit = await cachedPreview(cacheKey)
    if (hit) {
      headers.set('content-type', hit.contentType)
      headers.set('content-length', String(hit.size))
      return new Response(hit.body, { status: 200, headers })
    }
    const respondAsync = /\brespond-async\b/i.test(c.req.header('prefer') ?? '')
    const waitMs = respondAsync ? 0 : c.var.config.PREVIEW_WAIT_MS
    const answer = await makePreview(
      { db: c.var.db, queue: c.env.CONVERSIONS, previews: c.env.PREVIEWS, config: c.var.config },
      file,
      params,
      waitMs,
    )
    if (!answer.ready) {
      c.header('retry-after', String(PREVIEW_RETRY_AFTER_SECONDS))
      if (respondAsync) c.header('preference-applied', 'respond-async')
      if (answer.job) {
        c.header('location', `/jobs/${answer.job.id}`)
        return c.json(
          {
            message: `the preview is made from the document's PDF, which is being converted: ask again in ${PREVIEW_RETRY_AFTER_SECONDS} s`,
            job: answer.job.id,
          },
          202,
        )
      }
      // This same URL (its signed token included): asked again, it answers the preview once drawn.
      const url = new URL(c.req.url)
      c.header('location', `${url.pathname}${url.search}`)
      return c.json({ message: `the preview is being drawn: ask again in ${PREVIEW_RETRY_AFTER_SECONDS} s` }, 202)
    }
    headers.set('content-type', answer.contentType)
    const object = await readObject(c.env.BUCKET, answer.key)
    if (!object) throw new ApiError('FILE_NOT_FOUND')
    headers.set('content-length', String(object.size))
    const body = keepPreview(
      (promise) => c.executionCtx.waitUntil(promise),
      cacheKey,
      object.body,
      answer.contentType,
      object.size,
    )
    return new Response(body, { status: 200, headers })
  })
}
