// What every request of the Hono app passes, whichever routes it holds: the middleware in its order, and the answers
// for a path no route takes (404, or 405 naming the methods it takes) and for errors. app.ts mounts every route group
// in one shell; the API Worker builds a shell for each group on its first request (groups/dispatch.ts). Nothing here
// loads zod or drizzle: GET / and a path no route takes start no more (docs/platform-limits.md, Startup). The routers
// with zod-validated routes and the drizzle client come with the groups that need them (app-shell.ts).
import { Hono } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import { TrieRouter } from 'hono/router/trie-router'
import { methodsByPath } from './allowed-methods'
import type { AppEnv } from './api'
import { loadConfig } from './config'
import { cors } from './cors'
import type { Database } from './db/client'
import { d1Session } from './db/replicas'
import { ApiError, toErrorResponse } from './errors'

const JSON_BODY_MAX_BYTES = 1024 * 1024

/** A router of plain Hono routes, for a group with no zod-validated route (the status route); the TrieRouter, as
 * api.ts's `newRouter` says why. */
export const plainRouter = () => new Hono<AppEnv>({ router: new TrieRouter() })

/** `app` with the middleware every request passes, in its order; `openDatabase` gives the routes their drizzle
 * client (`c.var.db`), and a group whose routes read no database leaves it out. */
export function withShell<App extends Hono<AppEnv, any, any>>(
  app: App,
  openDatabase?: (d1: D1Database) => Database,
): App {
  app.use(async (c, next) => {
    const requestId = c.req.header('cf-ray') ?? crypto.randomUUID()
    c.set('requestId', requestId)
    c.set('config', loadConfig(c.env))
    if (openDatabase) c.set('db', openDatabase(c.env.DB))
    try {
      await next()
    } catch (thrown) {
      // Hono hands only Error instances to onError; anything else thrown would escape it as a bare 500.
      throw thrown instanceof Error ? thrown : new Error(`non-Error thrown: ${String(thrown)}`, { cause: thrown })
    }
    c.header('x-request-id', requestId)
    // Answers carry accounts, tokens and signed file URLs: no browser or proxy may keep them (login and refresh
    // included), unless a route chose its own caching (downloads, static pages).
    if (c.res.headers.get('content-type')?.includes('application/json') && !c.res.headers.has('cache-control'))
      c.header('cache-control', 'no-store')
  })

  app.use(cors)
  app.use(d1Session)

  const limitJson = bodyLimit({
    maxSize: JSON_BODY_MAX_BYTES,
    onError: () => {
      throw new ApiError('BODY_TOO_LARGE', {
        message: `the request body is larger than ${JSON_BODY_MAX_BYTES} bytes`,
        details: { max_bytes: JSON_BODY_MAX_BYTES },
      })
    },
  })
  app.use(async (c, next) => {
    if (c.req.header('content-type')?.toLowerCase().includes('application/json')) return limitJson(c, next)
    await next()
  })
  return app
}

/** Once every route is mounted: a path none takes answers 404, or 405 with the methods it takes; errors are JSON. */
export function answerUnmatched(app: Hono<AppEnv, any, any>): void {
  const allowedMethods = methodsByPath(app.routes)
  app.notFound((c) => {
    const allowed = allowedMethods(c.req.path)
    if (allowed.length === 0) throw new ApiError('NOT_FOUND')
    throw new ApiError('METHOD_NOT_ALLOWED', {
      message: `${c.req.method} is not allowed on ${c.req.path}: use ${allowed.join(', ')}`,
      headers: { allow: allowed.join(', ') },
      details: { allow: allowed },
    })
  })
  app.onError((error, c) => toErrorResponse(error, c.get('requestId') ?? 'unknown'))
}
