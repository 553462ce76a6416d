// The Worker under test in the workerd projects (vitest.config.ts `main`): the API Worker and the consumer Worker in
// one isolate, since the vitest pool runs one Worker. Only here: wrangler.toml, the API Worker's config, consumes no
// queue; vitest.config.ts gives this Worker the consumer Worker's queue consumers (wrangler.consumer.toml).
import { consumerHandlers } from '../../worker/consumer'
import { localEnginesWith } from '../../worker/engine-workers/local'
import { type AvifBindings, fromWire } from '../../worker/engine-workers/protocol'
import api from '../../worker/index'
import type { QueueMessage } from '../../worker/queue'

// The engines run in this isolate too (deployed, each family is an engine Worker behind a service binding: the e2e
// tests run those under wrangler dev). AVIF goes through the AVIF_ENGINE binding, to the entrypoint exported below,
// as it does from a deployed engine Worker.
const consumer = consumerHandlers((env) =>
  localEnginesWith(async (image) => fromWire(await (env as unknown as AvifBindings).AVIF_ENGINE.encode(image))),
)

export default { ...api, ...consumer } satisfies ExportedHandler<Env, QueueMessage>

export { RateLimiter } from '../../worker/index'
export { GotenbergContainer } from '../../worker/consumer'
// The passkey Worker's entrypoint: vitest.config.ts points the API Worker's PASSKEYS binding at it in this Worker, so
// the ceremonies go through Workers RPC as deployed (there, wrangler.passkeys.toml is a Worker of its own).
export { default as PasskeyWorker } from '../../worker/auth/passkey-worker'
// The AVIF Worker's entrypoint (wrangler.engine-avif.toml): vitest.config.ts binds AVIF_ENGINE to it in this Worker.
export { default as AvifWorker } from '../../worker/engine-workers/avif'
