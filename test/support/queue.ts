// Delivers messages to the Worker's own queue handler as the platform does (`cloudflare:test`'s
// createMessageBatch), and reads back what the handler acked and retried (getQueueResult).
import { createExecutionContext, createMessageBatch, env, getQueueResult, type QueueResult } from 'cloudflare:test'
import type { QueueMessage } from '../../worker/queue'
import worker from '../setup/worker-entry'

export const CONVERSIONS_QUEUE = 'edgefloor-conversions'
export const DEAD_LETTER_QUEUE = 'edgefloor-conversions-dlq'

export interface Delivery<Body extends QueueMessage = QueueMessage> {
  body: Body
  /** How many times the queue has delivered it, this delivery included (1 unless given). */
  attempts?: number
}

/** The delay each retried message asked for, by batch and message id. */
const retryDelays = new WeakMap<MessageBatch, Map<string, number | undefined>>()

/** A batch as the platform hands it to a consumer; its messages are `m1`, `m2`, … in order. */
export function messageBatch<Body extends QueueMessage>(queue: string, deliveries: Delivery<Body>[]) {
  const batch = createMessageBatch<Body>(
    queue,
    deliveries.map(({ body, attempts = 1 }, index) => ({ id: `m${index + 1}`, timestamp: new Date(), attempts, body })),
  )
  // getQueueResult records a retry's message id but not the delay it asked for (@cloudflare/vitest-plugin 1.5.0):
  // each message notes it on the way to the platform's own retry.
  const delays = new Map<string, number | undefined>()
  for (const message of batch.messages) {
    const retry = message.retry.bind(message)
    message.retry = (options?: QueueRetryOptions) => {
      delays.set(message.id, options?.delaySeconds)
      retry(options)
    }
  }
  retryDelays.set(batch, delays)
  return batch
}

/** What the consumer did with a batch (its acks, and its retries with their delays), once its waitUntil work has settled. */
export async function settled(batch: MessageBatch, ctx = createExecutionContext()): Promise<QueueResult> {
  const result = await getQueueResult(batch, ctx)
  const delays = retryDelays.get(batch)
  return {
    ...result,
    retryMessages: result.retryMessages.map(({ msgId }) => ({ msgId, delaySeconds: delays?.get(msgId) })),
  }
}

/** Runs one batch through the Worker's queue handler. */
export async function deliver(queue: string, deliveries: Delivery[]): Promise<QueueResult> {
  const batch = messageBatch(queue, deliveries)
  const ctx = createExecutionContext()
  await worker.queue(batch, env, ctx)
  return settled(batch, ctx)
}
