// `npm run check:deploy` measures the consumer Worker's startup up to its first answer, but the consumer has no
// fetch handler (it serves queues and cron): this entry is its default export plus one, bundled the same way.
import consumer, { type ConsumerEnv } from '../../worker/consumer'
import type { QueueMessage } from '../../worker/queue'

export default {
  ...consumer,
  fetch: () => new Response('ok'),
} satisfies ExportedHandler<ConsumerEnv, QueueMessage>

// The consumer's Durable Object class (the sidecar's Container), which its config binds: part of its bundle.
export { GotenbergContainer } from '../../worker/consumer'
