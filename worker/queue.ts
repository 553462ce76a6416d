// The one producer of the conversions' and the previews' queues: every message is sent through here, in batches Cloudflare Queues
// accepts (at most 100 messages and 256 KB a sendBatch call; documented limits of Queues).
import type { StepMessage, StepRow } from './pipeline/jobs'
import type { PreviewParams } from './previews/params'

/** A queue message asking for one preview (the conversion steps' messages have no `preview`). */
export interface PreviewMessage {
  readonly preview: { readonly fileId: string; readonly userId: string; readonly key: string; readonly params: PreviewParams }
}

export function isPreviewMessage(body: unknown): body is PreviewMessage {
  return typeof body === 'object' && body !== null && 'preview' in body
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
    steps.map((step) => ({ jobId: step.jobId, stepId: step.id })),
  )
}

/** A drawing of one preview, on the previews' own queue. */
export async function enqueuePreview(queue: Queue<PreviewMessage>, preview: PreviewMessage['preview']): Promise<void> {
  await queue.send({ preview })
}

/** A step sent again after `delaySeconds` (a turn given to another user); its delivery attempts start anew. */
export async function requeueStep(queue: Queue<StepMessage>, step: StepMessage, delaySeconds: number): Promise<void> {
  await queue.send(step, { delaySeconds })
}
