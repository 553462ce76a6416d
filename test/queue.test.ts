// The one producer (worker/queue.ts) against Cloudflare Queues' documented sendBatch limits: "up to 100 messages"
// and "256 KB" for the whole batch (developers.cloudflare.com/queues/platform/limits).
import { describe, expect, it } from 'vitest'
import { SEND_BATCH_MAX_BYTES, SEND_BATCH_MAX_MESSAGES, sendInBatches } from '../worker/queue'

/** A queue that records each sendBatch call and refuses one past either limit, as the platform does. */
function recordingQueue() {
  const calls: unknown[][] = []
  const queue = {
    async sendBatch(messages: Iterable<MessageSendRequest<unknown>>) {
      const batch = [...messages].map((message) => message.body)
      const bytes = batch.reduce<number>((sum, body) => sum + new TextEncoder().encode(JSON.stringify(body)).length, 0)
      if (batch.length > SEND_BATCH_MAX_MESSAGES || bytes > SEND_BATCH_MAX_BYTES) throw new Error(`batch of ${batch.length} messages, ${bytes} bytes`)
      calls.push(batch)
    },
  } as unknown as Queue<unknown>
  return { queue, calls }
}

describe('sendInBatches', () => {
  it.each([
    [0, []],
    [1, [1]],
    [100, [100]],
    [101, [100, 1]],
    [1000, Array(10).fill(100)],
  ])('sends %i messages as batches of %j, in order', async (count, sizes) => {
    const { queue, calls } = recordingQueue()
    const bodies = Array.from({ length: count }, (_, i) => ({ i }))
    await sendInBatches(queue, bodies)
    expect(calls.map((batch) => batch.length)).toEqual(sizes)
    expect(calls.flat()).toEqual(bodies)
  })

  it('cuts a batch before 256 KB of bodies, however few messages', async () => {
    const { queue, calls } = recordingQueue()
    const bodies = Array.from({ length: 10 }, (_, i) => ({ i, pad: 'x'.repeat(60 * 1024) }))
    await sendInBatches(queue, bodies)
    expect(calls.map((batch) => batch.length)).toEqual([4, 4, 2])
    expect(calls.flat()).toEqual(bodies)
  })
})
