// Delivers messages to the Worker's own queue handler as the platform does (`cloudflare:test`'s
// createMessageBatch), and reads back what the handler acked and retried (getQueueResult).
import { createExecutionContext, createMessageBatch, env, getQueueResult } from 'cloudflare:test'
import type { QueueMessage } from '../../worker/queue'
import worker from '../setup/worker-entry'

export const CONVERSIONS_QUEUE = 'edgefloor-conversions'
export const DEAD_LETTER_QUEUE = 'edgefloor-conversions-dlq'

export interface Delivery {
  body: QueueMessage
  /** How many times the queue has delivered it, this delivery included. */
  attempts: number
  id?: string
}

/** Runs one batch through the queue handler; its waitUntil work has settled when this returns. */
export async function deliver(queue: string, deliveries: Delivery[]) {
  const batch = createMessageBatch<QueueMessage>(
    queue,
    deliveries.map(({ body, attempts, id }, index) => ({
      id: id ?? `m${index + 1}`,
      timestamp: new Date(),
      attempts,
      body,
    })),
  )
  const ctx = createExecutionContext()
  await worker.queue(batch, env, ctx)
  return getQueueResult(batch, ctx)
}
