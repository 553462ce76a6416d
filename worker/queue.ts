// The queue messages and their one producer: every message of the conversions' and the previews' queues is a
// QueueMessage, sent through here in batches Cloudflare Queues accepts (at most 100 messages and 256 KB a sendBatch
// call; documented limits of Queues), and told apart by its `kind`.
import type { StepRow } from './pipeline/jobs'
import type { PreviewParams } from './previews/params'

/** Run one step of a job (worker/pipeline/step-runner.ts). */
export interface StepMessage {
  readonly kind: 'step'
  readonly jobId: string
  readonly stepId: string
}

/** Draw one preview (worker/previews/draw.ts). */
export interface PreviewMessage {
  readonly kind: 'preview'
  readonly preview: {
    readonly fileId: string
    readonly userId: string
    readonly key: string
    readonly params: PreviewParams
  }
}

export type QueueMessage = StepMessage | PreviewMessage

/** A batch's messages by kind; `unreadable` holds bodies no version of this producer sent. */
export interface MessagesByKind {
  readonly step: Message<StepMessage>[]
  readonly preview: Message<PreviewMessage>[]
  readonly unreadable: Message<unknown>[]
}

const isText = (value: unknown): value is string => typeof value === 'string'

/**
 * The message a body carries. Bodies without a `kind` (`{ jobId, stepId }`, `{ preview }`, from an older producer)
 * may be queued while a deploy rolls out: they run too.
 */
export function readQueueMessage(body: unknown): QueueMessage | undefined {
  if (typeof body !== 'object' || body === null) return undefined
  const fields = body as Record<string, unknown>
  const kind = fields.kind ?? ('preview' in fields ? 'preview' : 'step')
  if (kind === 'step' && isText(fields.jobId) && isText(fields.stepId))
    return { kind, jobId: fields.jobId, stepId: fields.stepId }
  const preview = fields.preview as Record<string, unknown> | undefined
  if (
    kind === 'preview' &&
    typeof preview === 'object' &&
    preview !== null &&
    isText(preview.fileId) &&
    isText(preview.userId) &&
    isText(preview.key) &&
    typeof preview.params === 'object'
  ) {
    return { kind, preview: preview as PreviewMessage['preview'] }
  }
  return undefined
}

/**
 * The batch's messages sorted by kind. Each carries its body as read; its ack and retry act on the delivered
 * message.
 */
export function messagesByKind(messages: readonly Message<unknown>[]): MessagesByKind {
  const sorted: MessagesByKind = { step: [], preview: [], unreadable: [] }
  for (const message of messages) {
    const body = readQueueMessage(message.body)
    if (!body) {
      sorted.unreadable.push(message)
      continue
    }
    const delivered = {
      id: message.id,
      timestamp: message.timestamp,
      attempts: message.attempts,
      ack: () => message.ack(),
      retry: (options?: QueueRetryOptions) => message.retry(options),
    }
    if (body.kind === 'step') sorted.step.push({ ...delivered, body })
    else sorted.preview.push({ ...delivered, body })
  }
  return sorted
}

/** Queues' sendBatch limits: messages a call and bytes a call (the sum of the messages' bodies). */
export const SEND_BATCH_MAX_MESSAGES = 100
export const SEND_BATCH_MAX_BYTES = 256 * 1024

/** Sends the bodies in order, cut into batches within both limits of one sendBatch call. */
export async function sendInBatches<Body>(queue: Queue<Body>, bodies: readonly Body[]): Promise<void> {
  let batch: MessageSendRequest<Body>[] = []
  let batchBytes = 0
  for (const body of bodies) {
    const bytes = new TextEncoder().encode(JSON.stringify(body)).length
    if (batch.length === SEND_BATCH_MAX_MESSAGES || (batch.length > 0 && batchBytes + bytes > SEND_BATCH_MAX_BYTES)) {
      await queue.sendBatch(batch)
      batch = []
      batchBytes = 0
    }
    batch.push({ body })
    batchBytes += bytes
  }
  if (batch.length > 0) await queue.sendBatch(batch)
}

/** One message a step, however many a fan-out makes. */
export function enqueueSteps(queue: Queue<StepMessage>, steps: readonly StepRow[]): Promise<void> {
  return sendInBatches(
    queue,
    steps.map((step): StepMessage => ({ kind: 'step', jobId: step.jobId, stepId: step.id })),
  )
}

/** A drawing of one preview, on the previews' own queue. */
export async function enqueuePreview(queue: Queue<PreviewMessage>, preview: PreviewMessage['preview']): Promise<void> {
  await queue.send({ kind: 'preview', preview })
}

/** A step sent again after `delaySeconds` (a turn given to another user); its delivery attempts start anew. */
export async function requeueStep(queue: Queue<StepMessage>, step: StepMessage, delaySeconds: number): Promise<void> {
  await queue.send({ kind: 'step', jobId: step.jobId, stepId: step.stepId }, { delaySeconds })
}
