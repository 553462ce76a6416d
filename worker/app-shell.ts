// The shell (shell.ts) on a router of zod-validated, OpenAPI-described routes (api.ts) with the drizzle client: what
// the whole app (app.ts) and every route group but the status route's are built in.
import { newRouter } from './api'
import { openDatabase } from './db/client'
import { withShell } from './shell'

export { answerUnmatched } from './shell'

/** A router with the middleware every request passes, in its order, and no route yet. */
export function appShell() {
  return withShell(newRouter(), openDatabase)
}
