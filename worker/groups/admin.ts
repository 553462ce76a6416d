// The route group of the administrators' routes: /admin/…, as app.ts mounts them.
import { adminRoutes } from '../admin/routes'
import { answerUnmatched, appShell } from '../app-shell'

export function adminApp() {
  const app = appShell()
  app.route('/', adminRoutes())
  answerUnmatched(app)
  return app
}
