// The consumer Worker (wrangler.consumer.toml): conversion steps from the queue (and its dead letters) and the
// scheduled sweeps. Its own Worker so that on Cloudflare an API isolate never runs a converter: a WASM decoder or
// PDFium's parse is one synchronous call, and every request of the isolate running it would wait for it.
import { loadConfig } from './config'
import { openDatabase } from './db/client'
import { consumeConversions, consumeDeadLetters, type PipelineDeps } from './pipeline/consumer'
import type { StepMessage } from './pipeline/jobs'
import { runSweeps } from './sweeps'

/** The bindings wrangler.consumer.toml gives: the API's, less the static files and the rate limiter. */
export type ConsumerEnv = Omit<Env, 'ASSETS' | 'RATE_LIMITER'>

function pipelineDeps(env: ConsumerEnv, ctx: ExecutionContext): PipelineDeps {
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
  // Cron Triggers (wrangler.consumer.toml [triggers]).
  async scheduled(_controller, env) {
    await runSweeps({ db: openDatabase(env.DB), bucket: env.BUCKET, config: loadConfig(env) })
  },
  async queue(batch, env, ctx) {
    const deps = pipelineDeps(env, ctx)
    if (batch.queue.endsWith('-dlq')) await consumeDeadLetters(batch as MessageBatch<StepMessage>, deps)
    else await consumeConversions(batch as MessageBatch<StepMessage>, deps)
  },
} satisfies ExportedHandler<ConsumerEnv, StepMessage>
