// The API Worker (wrangler.toml): HTTP through the Hono app. It only produces conversion steps and preview drawings,
// which the consumer Worker (worker/consumer.ts, wrangler.consumer.toml) runs. The Durable Object is exported for
// its binding.
import { createApp } from './app'
import type { QueueMessage } from './queue'

const app = createApp()

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env, QueueMessage>

export { RateLimiter } from './auth/rate-limit'
