// The route group of the pages: the API reference (/docs), the console and their files (/static/…), as app.ts
// mounts them. The OpenAPI document they read is the whole app's (GET /openapi.json).
import { answerUnmatched, appShell } from '../app-shell'
import { mountPages } from '../docs/routes'

export function pagesApp() {
  const app = appShell()
  mountPages(app)
  answerUnmatched(app)
  return app
}
