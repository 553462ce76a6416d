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

/** A validation issue: the field's path (`expires_at`, `options.page`), what is wrong with it, and zod's issue code. */
const IssueSchema = z.object({ path: z.string(), message: z.string(), code: z.string() })

const count = () => z.number().int().nonnegative()

/**
 * The public fields an error may carry beside `message` and `code` (an ApiError's `details`, the request id of a
 * 500): each names the codes that carry it. test/error-details.test.ts reads worker/ and fails on a detail that is
 * set but not declared here; docs/api-and-client.md lists them from this declaration.
 */
export const ERROR_DETAILS = {
  issues: z
    .array(IssueSchema)
    .optional()
    .describe('`VALIDATION_FAILED`, and `NAME_FORMAT_CHARACTER` from a request schema: each input that was refused.'),
  max_bytes: count()
    .optional()
    .describe(
      '`BODY_TOO_LARGE`: the most bytes a JSON body or a sign-in form may have. `FILE_TOO_LARGE`: the most bytes the file may have (the size limit, or what is left of the quota).',
    ),
  max_part_bytes: count()
    .optional()
    .describe(
      '`FILE_TOO_LARGE` of an upload part, and `VALIDATION_FAILED` of a `part_bytes` out of range: the most bytes one part may have.',
    ),
  min_part_bytes: count()
    .optional()
    .describe('`VALIDATION_FAILED` of a `part_bytes` out of range: the fewest bytes a part may have.'),
  part_bytes: count()
    .optional()
    .describe(
      "`PART_SIZE_MISMATCH`: the upload's part size in bytes, which every part but the last must have. `VALIDATION_FAILED` of a `part_bytes` that would need too many parts: the part size asked for.",
    ),
  max_parts: count()
    .optional()
    .describe(
      '`VALIDATION_FAILED` of a `part_bytes` that would need too many parts: the most parts an upload may have.',
    ),
  offset: count()
    .optional()
    .describe(
      '`UPLOAD_OFFSET_MISMATCH`: the bytes the server holds, where the next bytes must start (absent when another request changed the upload meanwhile: ask `HEAD`).',
    ),
  accepted: z
    .array(z.string())
    .optional()
    .describe('`CONTENT_TYPE_UNSUPPORTED` of an upload: the ways a file may be sent.'),
  used: count().optional().describe("`QUOTA_EXCEEDED`: the bytes the account's files use."),
  quota: count().optional().describe("`QUOTA_EXCEEDED`: the account's storage quota in bytes."),
  retry_after: count()
    .optional()
    .describe('`RATE_LIMITED`: seconds to wait before asking again (the `Retry-After` header says the same).'),
  allow: z
    .array(z.string())
    .optional()
    .describe('`METHOD_NOT_ALLOWED`: the methods the path answers (the `Allow` header says the same).'),
  rule: z.string().optional().describe('`FORBIDDEN`: the access rule the caller did not pass (`@user.role=admin`).'),
  scope: z
    .string()
    .optional()
    .describe(
      '`INSUFFICIENT_SCOPE`: the scope the route needs, which the API key lacks (absent where no key may call the route).',
    ),
  max_keys: count().optional().describe('`API_KEY_LIMIT_REACHED`: the most API keys an account may hold.'),
  max_passkeys: count().optional().describe('`PASSKEY_LIMIT_REACHED`: the most passkeys an account may hold.'),
  second_factor_token: z
    .string()
    .optional()
    .describe('`SECOND_FACTOR_REQUIRED`: the token to send with the code to `POST /auth/login/totp`.'),
  expires_in: count().optional().describe('`SECOND_FACTOR_REQUIRED`: seconds until `second_factor_token` expires.'),
  methods: z
    .array(z.string())
    .optional()
    .describe('`SECOND_FACTOR_REQUIRED`: the second factors the account may answer with (`totp`, `recovery_code`).'),
  character: z
    .string()
    .optional()
    .describe('`NAME_FORMAT_CHARACTER`: the format character the name may not hold, as `U+XXXX`.'),
  job: z
    .string()
    .optional()
    .describe(
      'A failed conversion (its code: `CONVERSION_FAILED`, `FILE_TOO_LARGE`, `CONVERTER_TIMEOUT`, …): the id of the job, to read at `GET /jobs/{id}`.',
    ),
  converter: z
    .string()
    .optional()
    .describe('`CONVERTER_NOT_CONFIGURED`: the converter the conversion needs, whose provider is not configured.'),
  request_id: z
    .string()
    .optional()
    .describe(
      '`INTERNAL_ERROR`: the id the error was logged under, to quote when reporting it (also in `x-request-id`).',
    ),
}

export const ErrorSchema = z
  .object({
    message: z.string().openapi({ example: 'file not found' }),
    code: z.enum(ERROR_CODES).openapi({ description: 'one code of the error table (docs/api-and-client.md, Errors)' }),
    ...ERROR_DETAILS,
  })
  .openapi('Error')

/** What an error answer may carry beside `{ message, code }`: ERROR_DETAILS's fields. */
export type ErrorDetails = Omit<z.infer<typeof ErrorSchema>, 'message' | 'code'>

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
