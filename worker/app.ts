// The Hono app: every route group mounted in the shell (app-shell.ts: middleware order, unknown paths, the error
// handler). The OpenAPI document, the typed client and the tests read this whole app; the API Worker builds each
// group on its first request instead (groups/dispatch.ts), so a cold start runs only the routes it is asked for.
import { adminRoutes } from './admin/routes'
import { appShell, answerUnmatched } from './app-shell'
import { apiKeyRoutes } from './auth/api-key-routes'
import { oidcRoutes } from './auth/oidc-routes'
import { passkeyRoutes } from './auth/passkey-routes'
import { accountRoutes } from './auth/routes'
import { totpRoutes } from './auth/totp-routes'
import { compileResources } from './rules/compile'
import type { ResourceConfig } from './models/resources'
import { defaultResourceRoutes } from './rules/default-routes'
import { resourceRoutes } from './rules/routes'
import { fileRoutes } from './files/routes'
import { tusRoutes } from './files/tus-routes'
import { pipelineRoutes } from './pipeline/routes'
import { previewRoutes } from './previews/routes'
import { autoConvert } from './pipeline/start'
import { mountDocs, serviceStatus, serviceStatusRoute } from './docs/routes'

export interface AppOptions {
  /** The models and resource routes (worker/models/resources.ts); tests pass their own. */
  resources?: ResourceConfig
}

export function createApp(options: AppOptions = {}) {
  const resourceRouteList = options.resources ? compileResources(options.resources) : defaultResourceRoutes
  const app = appShell()

  // Routes are chained so that their types accumulate in `App` for the typed client (hono/client). The resource
  // routes come from runtime configuration (their paths are plain strings), so they are mounted by statement and
  // stay out of the type, which they would otherwise widen to "any path".
  const accounts = app
    .openapi(serviceStatusRoute, serviceStatus)
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

  answerUnmatched(app)
  return routes
}

export type App = ReturnType<typeof createApp>
