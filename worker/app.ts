// The Hono app: middleware order, route mounting and the error handler.
import { bodyLimit } from 'hono/body-limit'
import { newRouter } from './api'
import { adminRoutes } from './admin/routes'
import { apiKeyRoutes } from './auth/api-key-routes'
import { oidcRoutes } from './auth/oidc-routes'
import { passkeyRoutes } from './auth/passkey-routes'
import { accountRoutes } from './auth/routes'
import { totpRoutes } from './auth/totp-routes'
import { loadConfig } from './config'
import { cors } from './cors'
import { openDatabase } from './db/client'
import { d1Session } from './db/replicas'
import { ApiError, toErrorResponse } from './errors'
import { compileResources } from './rules/compile'
import { resources, type ResourceConfig } from './models/resources'
import { resourceRoutes } from './rules/routes'
import { fileRoutes } from './files/routes'
import { tusRoutes } from './files/tus-routes'
import { pipelineRoutes } from './pipeline/routes'
import { previewRoutes } from './previews/routes'
import { autoConvert } from './pipeline/start'
import { mountDocs, serviceStatusRoute } from './docs/routes'
import { methodsByPath } from './allowed-methods'
import packageJson from '../package.json'

const JSON_BODY_MAX_BYTES = 1024 * 1024

const defaultRoutes = compileResources(resources)

export interface AppOptions {
  /** The models and resource routes (worker/models/resources.ts); tests pass their own. */
  resources?: ResourceConfig
}

export function createApp(options: AppOptions = {}) {
  const resourceRouteList = options.resources ? compileResources(options.resources) : defaultRoutes
  const app = newRouter()

  app.use(async (c, next) => {
    const requestId = c.req.header('cf-ray') ?? crypto.randomUUID()
    c.set('requestId', requestId)
    c.set('config', loadConfig(c.env))
    c.set('db', openDatabase(c.env.DB))
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

  // Routes are chained so that their types accumulate in `App` for the typed client (hono/client). The resource
  // routes come from runtime configuration (their paths are plain strings), so they are mounted by statement and
  // stay out of the type, which they would otherwise widen to "any path".
  const accounts = app
    .openapi(serviceStatusRoute, (c) =>
      c.json({ name: packageJson.name, version: packageJson.version, status: 'ok' as const }, 200),
    )
    .route('/', accountRoutes(options.resources?.models.Users?.values, resourceRouteList))
    .route('/', apiKeyRoutes())
    .route('/', totpRoutes())
    .route('/', oidcRoutes(options.resources?.models.Users?.values))
    .route('/', passkeyRoutes())
  app.route('/', resourceRoutes(resourceRouteList))
  app.route('/', adminRoutes())
  const routes = accounts
    .route('/', tusRoutes(autoConvert))
    .route('/', fileRoutes(autoConvert))
    .route('/', previewRoutes())
    .route('/', pipelineRoutes())

  mountDocs(app, {
    title: 'Edgefloor API',
    description: 'Accounts, file storage and automatic file conversion at the edge.',
  })

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
  return routes
}

export type App = ReturnType<typeof createApp>
