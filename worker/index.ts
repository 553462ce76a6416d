// The API Worker (wrangler.toml): HTTP through the Hono app; it only produces conversion steps, which the consumer
// Worker (worker/consumer.ts, wrangler.consumer.toml) runs. The Durable Object is exported for its binding.
import { createApp } from './app'
import type { StepMessage } from './pipeline/jobs'

const app = createApp()

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env, StepMessage>

export { RateLimiter } from './auth/rate-limit'
