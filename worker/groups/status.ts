// The route group of GET /: the service's name, version and status.
import { answerUnmatched, appShell } from '../app-shell'
import { serviceStatus, serviceStatusRoute } from '../docs/routes'

export function statusApp() {
  const app = appShell()
  app.openapi(serviceStatusRoute, serviceStatus)
  answerUnmatched(app)
  return app
}
