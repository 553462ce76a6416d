// The Worker: HTTP through the Hono app, conversion steps from the queue (and its dead letters), the scheduled
// sweeps; Durable Objects exported for their bindings.
import { createApp } from './app'
import { loadConfig } from './config'
import { openDatabase } from './db/client'
import { consumeConversions, consumeDeadLetters, type PipelineDeps } from './pipeline/consumer'
import type { StepMessage } from './pipeline/jobs'
import { runSweeps } from './sweeps'

const app = createApp()

function pipelineDeps(env: Env, ctx: ExecutionContext): PipelineDeps {
  return {
    db: openDatabase(env.DB),
    bucket: env.BUCKET,
    queue: env.CONVERSIONS,
    config: loadConfig(env),
    ai: env.AI,
    waitUntil: (promise) => ctx.waitUntil(promise),
  }
}

export default {
  fetch: app.fetch,
  // Cron Triggers (wrangler.toml [triggers]); locally `wrangler dev --test-scheduled` and /__scheduled.
  async scheduled(_controller, env) {
    await runSweeps({ db: openDatabase(env.DB), bucket: env.BUCKET, config: loadConfig(env) })
  },
  async queue(batch, env, ctx) {
    const deps = pipelineDeps(env, ctx)
    if (batch.queue.endsWith('-dlq')) await consumeDeadLetters(batch as MessageBatch<StepMessage>, deps)
    else await consumeConversions(batch as MessageBatch<StepMessage>, deps)
  },
} satisfies ExportedHandler<Env, StepMessage>

export { RateLimiter } from './auth/rate-limit'
