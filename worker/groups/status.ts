// The route group of GET / (the service's name, version and status) and of every path no route takes: a plain Hono
// router in the shell, with no zod and no drizzle, so that a cold start's GET / loads neither (docs/platform-limits.md,
// Startup). The route is the whole app's `serviceStatusRoute` (docs/routes.ts) without its OpenAPI description; it
// takes no input, so it validates nothing either way.
import { serviceStatusBody } from '../docs/status'
import { answerUnmatched, plainRouter, withShell } from '../shell'

export function statusApp() {
  const app = withShell(plainRouter())
  app.get('/', (c) => c.json(serviceStatusBody(), 200))
  answerUnmatched(app)
  return app
}
