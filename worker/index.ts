// The API Worker (wrangler.toml): HTTP through the Hono app, one route group built on the first request that needs it
// (groups/dispatch.ts); it only produces conversion steps and preview drawings, which the consumer Worker
// (worker/consumer.ts, wrangler.consumer.toml) runs. The Durable Object is exported for its binding.
import { lazyApp } from './groups/dispatch'
import type { QueueMessage } from './queue'

const app = lazyApp()

export default {
  fetch: (request, env, ctx) => app.fetch(request, env, ctx),
} satisfies ExportedHandler<Env, QueueMessage>

export { RateLimiter } from './auth/rate-limit'
