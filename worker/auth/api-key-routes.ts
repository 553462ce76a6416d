// API key endpoints: make a key (answered once), list the caller's keys, revoke one. Only a signed-in user (a
// session's access token) reaches them: an API key is refused here by its scopes (auth/api-keys.ts).
import { z } from '@hono/zod-openapi'
import { errorResponse, jsonBody, jsonResponse, newRouter, securedRoute, Id } from '../api'
import { iso } from '../db/times'
import { ApiError } from '../errors'
import { plainText } from '../models/values'
import { API_KEY_SCOPES, createApiKey, heldApiKeysQuery, listApiKeys, revokeApiKey, type ApiKeyRow } from './api-keys'
import { authorizedBatch, callerId, callerStamp, requireAuth } from './middleware'

const tags = ['API keys']

/** The longest expiry a key may be given; a key that should live longer is made without one. */
const MAX_EXPIRY_MS = 10 * 365 * 24 * 3600 * 1000

const ApiKeyView = z
  .object({
    _id: z.string(),
    name: z.string(),
    prefix: z
      .string()
      .openapi({ example: 'efk_3Jx9aQ2v', description: 'the first characters of the key, to tell keys apart' }),
    scopes: z.array(z.enum(API_KEY_SCOPES)),
    created_at: z.string(),
    expires_at: z.string().nullable(),
    last_used_at: z.string().nullable().describe('the last request made with the key, to the minute'),
  })
  .openapi('ApiKey')

const CreateApiKey = z
  .strictObject({
    name: plainText(100).trim().min(1).openapi({ example: 'nightly export' }),
    scopes: z
      .array(z.enum(API_KEY_SCOPES))
      .min(1)
      .max(API_KEY_SCOPES.length)
      .openapi({ example: ['files:read'] }),
    expires_at: z.iso
      .datetime({ offset: true })
      .optional()
      .openapi({ description: 'when the key stops working; none: until revoked' }),
  })
  .openapi('CreateApiKeyRequest')

function apiKeyView(row: ApiKeyRow) {
  return {
    _id: row.id,
    name: row.name,
    prefix: row.prefix,
    scopes: row.scopes as (typeof API_KEY_SCOPES)[number][],
    created_at: iso(row.createdAt),
    expires_at: iso(row.expiresAt),
    last_used_at: iso(row.lastUsedAt),
  }
}

const createRoute = securedRoute(tags, {
  method: 'post',
  path: '/auth/api-keys',
  summary: 'Make an API key for a server (the key is answered once, stored only hashed)',
  middleware: [requireAuth({ sharesRoundTrip: true })] as const,
  request: { body: jsonBody(CreateApiKey) },
  responses: {
    201: jsonResponse(
      ApiKeyView.extend({ key: z.string().describe('send as `Authorization: Bearer <key>`; never shown again') }),
      'The key',
    ),
    403: errorResponse('An API key cannot make keys'),
    409: errorResponse('Too many keys'),
  },
})

const listRoute = securedRoute(tags, {
  method: 'get',
  path: '/auth/api-keys',
  summary: "The caller's API keys that still work, newest first",
  middleware: [requireAuth({ sharesRoundTrip: true })] as const,
  responses: { 200: jsonResponse(z.array(ApiKeyView), 'The keys'), 403: errorResponse('An API key cannot list keys') },
})

const revokeRoute = securedRoute(tags, {
  method: 'delete',
  path: '/auth/api-keys/{id}',
  summary: 'Revoke an API key: its next request is refused',
  middleware: [requireAuth()] as const,
  request: { params: z.object({ id: Id }) },
  responses: {
    200: jsonResponse(z.object({ message: z.string() }), 'Revoked'),
    403: errorResponse('An API key cannot revoke keys'),
    404: errorResponse('Not a key of yours'),
  },
})

export function apiKeyRoutes() {
  return newRouter()
    .openapi(createRoute, async (c) => {
      const { name, scopes, expires_at } = c.req.valid('json')
      const expiresAt = expires_at === undefined ? undefined : Date.parse(expires_at)
      if (expiresAt !== undefined && (expiresAt <= Date.now() || expiresAt > Date.now() + MAX_EXPIRY_MS)) {
        const message = 'must be in the future and within 10 years'
        throw new ApiError('VALIDATION_FAILED', {
          message: `invalid request: expires_at: ${message}`,
          details: { issues: [{ path: 'expires_at', message, code: 'custom' }] },
        })
      }
      const [[counted]] = await authorizedBatch(c, [heldApiKeysQuery(c.var.db, callerId(c))])
      const { row, key } = await createApiKey(c.var.db, c.var.user, { name, scopes, expiresAt }, counted?.held ?? 0)
      return c.json({ ...apiKeyView(row), key }, 201)
    })
    .openapi(listRoute, async (c) => {
      const [rows] = await authorizedBatch(c, [listApiKeys(c.var.db, callerId(c), callerStamp(c))])
      return c.json(rows.map(apiKeyView), 200)
    })
    .openapi(revokeRoute, async (c) => {
      if (!(await revokeApiKey(c.var.db, c.var.user.id, c.req.valid('param').id)))
        throw new ApiError('API_KEY_NOT_FOUND')
      return c.json({ message: 'API key revoked' }, 200)
    })
}
