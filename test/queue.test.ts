// The one producer (worker/queue.ts) against Cloudflare Queues' documented sendBatch limits: "up to 100 messages"
// and "256 KB" for the whole batch (developers.cloudflare.com/queues/platform/limits); and the messages it sends,
// read by kind, those sent before messages had a kind included (still queued while a deploy rolls out).
import { describe, expect, it } from 'vitest'
import {
  messagesByKind,
  readQueueMessage,
  SEND_BATCH_MAX_BYTES,
  SEND_BATCH_MAX_MESSAGES,
  sendInBatches,
} from '../worker/queue'

/** A queue that records each sendBatch call and refuses one past either limit, as the platform does. */
function recordingQueue() {
  const calls: unknown[][] = []
  const queue = {
    async sendBatch(messages: Iterable<MessageSendRequest<unknown>>) {
      const batch = [...messages].map((message) => message.body)
      const bytes = batch.reduce<number>((sum, body) => sum + new TextEncoder().encode(JSON.stringify(body)).length, 0)
      if (batch.length > SEND_BATCH_MAX_MESSAGES || bytes > SEND_BATCH_MAX_BYTES)
        throw new Error(`batch of ${batch.length} messages, ${bytes} bytes`)
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

const params = { width: 64, height: 64, fit: 'contain', format: 'png', page: 1 }

describe('readQueueMessage', () => {
  it.each([
    ['a step', { kind: 'step', jobId: 'j1', stepId: 's1' }, { kind: 'step', jobId: 'j1', stepId: 's1' }],
    ['a step of the shape before kinds', { jobId: 'j1', stepId: 's1' }, { kind: 'step', jobId: 'j1', stepId: 's1' }],
    [
      'a drawing',
      { kind: 'preview', preview: { fileId: 'f1', userId: 'u1', key: 'p/k', params } },
      { kind: 'preview', preview: { fileId: 'f1', userId: 'u1', key: 'p/k', params } },
    ],
    [
      'a drawing of the shape before kinds',
      { preview: { fileId: 'f1', userId: 'u1', key: 'p/k', params } },
      { kind: 'preview', preview: { fileId: 'f1', userId: 'u1', key: 'p/k', params } },
    ],
    ['an unknown kind', { kind: 'sweep', jobId: 'j1', stepId: 's1' }, undefined],
    ['a step without its step', { kind: 'step', jobId: 'j1' }, undefined],
    ['a drawing without its key', { preview: { fileId: 'f1', userId: 'u1', params } }, undefined],
    ['text', 'j1', undefined],
    ['null', null, undefined],
  ])('reads %s', (_, body, read) => {
    expect(readQueueMessage(body)).toEqual(read)
  })
})

describe('messagesByKind', () => {
  it('sorts a batch by kind, old shapes with their kind, and acknowledges and retries the delivered messages', () => {
    const done: string[] = []
    const delivered = (id: string, body: unknown) =>
      ({
        id,
        timestamp: new Date(0),
        attempts: 2,
        body,
        ack: () => done.push(`ack ${id}`),
        retry: (options?: QueueRetryOptions) => done.push(`retry ${id} ${options?.delaySeconds}`),
      }) as Message<unknown>
    const sorted = messagesByKind([
      delivered('m1', { jobId: 'j1', stepId: 's1' }),
      delivered('m2', { kind: 'preview', preview: { fileId: 'f1', userId: 'u1', key: 'p/k', params } }),
      delivered('m3', { kind: 'step', jobId: 'j2', stepId: 's2' }),
      delivered('m4', { hello: 'world' }),
    ])
    expect(sorted.step.map((message) => [message.id, message.attempts, message.body])).toEqual([
      ['m1', 2, { kind: 'step', jobId: 'j1', stepId: 's1' }],
      ['m3', 2, { kind: 'step', jobId: 'j2', stepId: 's2' }],
    ])
    expect(sorted.preview.map((message) => [message.id, message.body.kind, message.body.preview.key])).toEqual([
      ['m2', 'preview', 'p/k'],
    ])
    expect(sorted.unreadable.map((message) => message.id)).toEqual(['m4'])
    sorted.step[0]!.ack()
    sorted.preview[0]!.retry({ delaySeconds: 5 })
    expect(done).toEqual(['ack m1', 'retry m2 5'])
  })
})
