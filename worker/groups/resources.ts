// The route group of the resource routes (worker/models/resources.ts): the paths their models take, /users/… shipped.
import { answerUnmatched, appShell } from '../app-shell'
import { defaultResourceRoutes } from '../rules/default-routes'
import { resourceRoutes } from '../rules/routes'

export function resourcesApp() {
  const app = appShell()
  app.route('/', resourceRoutes(defaultResourceRoutes))
  answerUnmatched(app)
  return app
}
