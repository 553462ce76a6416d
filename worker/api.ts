// The typed Hono environment and the router factory every route module uses: zod-validated, OpenAPI-described
// routes whose validation failures answer 400 { message, code, issues }.
import { createRoute, OpenAPIHono, type RouteConfig, z } from '@hono/zod-openapi'
import type { TokenClaims } from './auth/tokens'
import type { AccountRecord, AuthUser } from './auth/users'
import type { Config } from './config'
import type { Database } from './db/client'
import { ID_PATTERN } from './db/ids'
import { errorExamples } from './docs/document'
import { ApiError, ERROR_CODES, type ErrorCode } from './errors'
import { TrieRouter } from 'hono/router/trie-router'

export interface AppEnv {
  Bindings: Env
  Variables: {
    requestId: string
    config: Config
    db: Database
    user: AuthUser
    /** The caller's account as requireAuth read it (all but the password hash), for routes about the caller. */
    account: AccountRecord
    /** The session of the caller's access token (set by requireAuth). */
    sessionId: string
    /**
     * A verified access token whose session check waits to share the route's first round trip (requireAuth
     * `sharesRoundTrip`).
     */
    pendingClaims: (TokenClaims & { sid: string }) | undefined
  }
}

export function newRouter() {
  return new OpenAPIHono<AppEnv>({
    // Hono's default SmartRouter builds a RegExpRouter from every route at the first request. It refuses this app's
    // paths (`/auth/oauth/:provider/link` beside `/auth/oauth/exchange`) and falls back to the TrieRouter, paying the
    // failed build at every cold start. Naming the TrieRouter gives the same matches without it.
    router: new TrieRouter(),
    defaultHook: (result) => {
      if (result.success) return
      const issues = result.error.issues.map((issue) => ({
        path: issue.path.join('.'),
        message: issue.message,
        code: issue.code,
      }))
      // A refinement may name its own error code (a name's format character: NAME_FORMAT_CHARACTER).
      const coded = result.error.issues.find(
        (issue) => issue.code === 'custom' && typeof issue.params?.errorCode === 'string',
      )
      if (coded?.code === 'custom') {
        const { errorCode, ...details } = coded.params as { errorCode: ErrorCode }
        throw new ApiError(errorCode, {
          message: `${coded.path.join('.')}: ${coded.message}`,
          details: { ...details, issues },
        })
      }
      const first = issues[0]
      const message = first
        ? `invalid request: ${first.path ? `${first.path}: ` : ''}${first.message}`
        : 'invalid request'
      throw new ApiError('VALIDATION_FAILED', { message, details: { issues } })
    },
  })
}

export const ErrorSchema = z
  .object({
    message: z.string().openapi({ example: 'file not found' }),
    code: z.enum(ERROR_CODES).openapi({ description: 'one code of the error table (docs/api-and-client.md, Errors)' }),
    issues: z.array(z.object({ path: z.string(), message: z.string(), code: z.string() })).optional(),
  })
  .openapi('Error')

/**
 * A response entry for an error status, for route definitions. `code` picks the example the document shows;
 * without it the document picks the code of that status the description or path names (worker/docs/document.ts).
 */
export function errorResponse(description: string, code?: ErrorCode) {
  return {
    description,
    content: { 'application/json': { schema: ErrorSchema, ...(code ? { examples: errorExamples(code) } : {}) } },
  }
}

export function jsonBody<T extends z.ZodType>(schema: T, description?: string) {
  return { required: true, description, content: { 'application/json': { schema } } }
}

export function jsonResponse<T extends z.ZodType>(schema: T, description: string) {
  return { description, content: { 'application/json': { schema } } }
}

/** A record id in a path or body (worker/db/ids.ts). */
export const Id = z.string().regex(ID_PATTERN, 'must be a 24-character hex id')

export const bearerSecurity = [{ bearer: [] }]

const PATH_PARAMETER = /\{[^}]+\}|:[A-Za-z_]/

/** The errors any route can answer by its shape alone: 400 when it takes input (the validation hook above), 404
 * when its path addresses something by id. A route's own wording of either wins. */
function standardErrors(config: RouteConfig): RouteConfig['responses'] {
  const takesInput = Object.values(config.request ?? {}).some((part) => part !== undefined)
  return {
    ...(takesInput ? { 400: errorResponse('Validation error: `{ message, code, issues }`') } : {}),
    ...(PATH_PARAMETER.test(config.path) ? { 404: errorResponse('Not found') } : {}),
  }
}

/** Every route is declared through this: `createRoute` plus the standard errors. `const` keeps the path's literal
 * type, which the typed client (`hono/client`) needs; the added entries are documentation only, so the type is
 * the route's own. */
export const describeRoute = <const R extends RouteConfig>(config: R) =>
  createRoute<R['path'], R>({ ...config, responses: { ...standardErrors(config), ...config.responses } } as R)

/** A route behind the bearer token: tagged, secured, with the 401 answer unless the route words its own. */
export const securedRoute = <const R extends RouteConfig>(tags: string[], config: R) =>
  describeRoute({
    tags,
    security: bearerSecurity,
    ...config,
    responses: { 401: errorResponse('Missing or invalid token'), ...config.responses },
  })
