// The typed Hono environment and the router factory every route module uses: zod-validated, OpenAPI-described
// routes whose validation failures answer 400 { message, code, issues }.
import { createRoute, OpenAPIHono, type RouteConfig, z } from '@hono/zod-openapi'
import type { AuthUser } from './auth/users'
import type { Config } from './config'
import type { Database } from './db/client'
import { ApiError } from './errors'

export interface AppEnv {
  Bindings: Env
  Variables: {
    requestId: string
    config: Config
    db: Database
    user: AuthUser
  }
}

export function newRouter() {
  return new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (result.success) return
      const issues = result.error.issues.map((issue) => ({
        path: issue.path.join('.'),
        message: issue.message,
        code: issue.code,
      }))
      const first = issues[0]
      const message = first ? `invalid request: ${first.path ? `${first.path}: ` : ''}${first.message}` : 'invalid request'
      throw new ApiError(400, message, { code: 'validation_failed', details: { issues } })
    },
  })
}

export const ErrorSchema = z
  .object({
    message: z.string().openapi({ example: 'file not found' }),
    code: z.string().optional(),
    issues: z.array(z.object({ path: z.string(), message: z.string(), code: z.string() })).optional(),
  })
  .openapi('Error')

/** A response entry for an error status, for route definitions. */
export function errorResponse(description: string) {
  return { description, content: { 'application/json': { schema: ErrorSchema } } }
}

export function jsonBody<T extends z.ZodType>(schema: T, description?: string) {
  return { required: true, description, content: { 'application/json': { schema } } }
}

export function jsonResponse<T extends z.ZodType>(schema: T, description: string) {
  return { description, content: { 'application/json': { schema } } }
}

export const bearerSecurity = [{ bearer: [] }]

/** A route behind the bearer token: tagged, secured, with the 401 answer unless the route words its own. `const`
 * keeps the path's literal type, which the typed client (`hono/client`) needs. */
export const securedRoute = <const R extends RouteConfig>(tags: string[], config: R) =>
  createRoute({ tags, security: bearerSecurity, ...config, responses: { 401: errorResponse('Missing or invalid token'), ...config.responses } })
