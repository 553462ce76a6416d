// The consumer Worker (wrangler.consumer.toml): conversion steps and preview drawings from the queue (and its dead
// letters) and the scheduled sweeps. Its own Worker so that on Cloudflare an API isolate never runs a converter nor
// draws a preview: a WASM decoder or PDFium's parse is one synchronous call, and every request of the isolate running
// it would wait for it. The engines themselves run in the engine Workers (worker/engine-workers/), one family each.
import { loadConfig } from './config'
import { openDatabase } from './db/client'
import { type EngineBindings, type Engines, remoteEngines } from './engine-workers/engines'
import { consumeConversions, consumeDeadLetters, type PipelineDeps } from './pipeline/step-runner'
import { consumePreviews, previewDeadLetters } from './previews/draw'
import { messagesByKind, type QueueMessage } from './queue'
import { runSweeps } from './sweeps'

/** The bindings wrangler.consumer.toml gives: the API's, less the static files and the rate limiter, the engine
 * Workers, and the sidecar Container when it is configured. */
export type ConsumerEnv = Omit<Env, 'ASSETS' | 'RATE_LIMITER'> &
  EngineBindings & { GOTENBERG_CONTAINER?: DurableObjectNamespace }

export { GotenbergContainer } from './engines/gotenberg-container'

/** One sidecar container serves every conversion (its SIDECAR_PROCESSES LibreOffices share the load). */
const sidecarStub = (namespace: DurableObjectNamespace | undefined) => namespace?.get(namespace.idFromName('sidecar'))

function pipelineDeps(
  env: Omit<ConsumerEnv, keyof EngineBindings>,
  ctx: ExecutionContext,
  engines: Engines,
): PipelineDeps {
  return {
    engines,
    db: openDatabase(env.DB),
    bucket: env.BUCKET,
    queue: env.CONVERSIONS,
    config: loadConfig(env),
    ai: env.AI,
    gotenberg: sidecarStub(env.GOTENBERG_CONTAINER),
    waitUntil: (promise) => ctx.waitUntil(promise),
  }
}

/** The consumer's handlers, its steps and drawings run by `engines` (the engine Workers; this isolate in tests). */
export function consumerHandlers<E extends Omit<ConsumerEnv, keyof EngineBindings>>(enginesOf: (env: E) => Engines) {
  return {
    // Cron Triggers (wrangler.consumer.toml [triggers]).
    async scheduled(_controller, env) {
      await runSweeps({ db: openDatabase(env.DB), bucket: env.BUCKET, config: loadConfig(env) })
    },
    // Conversion steps and preview drawings (worker/previews/draw.ts) come on queues of their own and share the dead
    // letter queue. Every batch is dispatched by each message's kind, so a drawing on the conversions' queue runs too.
    async queue(batch, env, ctx) {
      const deps = pipelineDeps(env, ctx, enginesOf(env))
      const { step, preview, unreadable } = messagesByKind(batch.messages)
      const run = batch.queue.endsWith('-dlq')
        ? { step: consumeDeadLetters, preview: previewDeadLetters }
        : { step: consumeConversions, preview: consumePreviews }
      await run.preview(preview, deps)
      await run.step(step, deps)
      // No version of the producer sent these: a retry cannot make them readable.
      for (const message of unreadable) {
        console.warn(
          JSON.stringify({ level: 'warn', queue: batch.queue, message: message.id, error: 'unreadable queue message' }),
        )
        message.ack()
      }
    },
  } satisfies ExportedHandler<E, QueueMessage>
}

export default consumerHandlers<ConsumerEnv>(remoteEngines)
