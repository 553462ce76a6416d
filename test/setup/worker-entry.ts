// The Worker under test in the workerd projects (vitest.config.ts `main`): the API Worker and the consumer Worker in
// one isolate, since the vitest pool runs one Worker. Only here: wrangler.toml, the API Worker's config, consumes no
// queue; vitest.config.ts gives this Worker the consumer Worker's queue consumers (wrangler.consumer.toml).
import consumer from '../../worker/consumer'
import api from '../../worker/index'
import type { StepMessage } from '../../worker/pipeline/jobs'
import type { PreviewMessage } from '../../worker/queue'

export default { ...api, ...consumer } satisfies ExportedHandler<Env, StepMessage | PreviewMessage>

export { RateLimiter } from '../../worker/index'
