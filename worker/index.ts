// The Worker: HTTP through the Hono app; Durable Objects exported for their bindings.
import { createApp } from './app'

const app = createApp()

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env>

export { RateLimiter } from './auth/rate-limit'
