// Drawing a preview, in the consumer Worker only (worker/consumer.ts): a request queues the drawing (make.ts) and
// waits for its row, so no API isolate ever runs a decoder, PDFium or the text renderer for a preview; the drawing
// itself runs in the engine Worker of the file's kind (worker/engine-workers/). The message names the file, its
// content (in the key) and the parameters; every effect is idempotent, as Queues deliver at least once.
import type { Config } from '../config'
import { ConversionError } from '../conversion-error'
import type { Database } from '../db/client'
import type { Engines } from '../engine-workers/engines'
import { ApiError, describeError } from '../errors'
import { failPreview, findPreview, previewKey, storePreview } from '../files/previews'
import { findConvertedPdf, findFileOf, type FileRow } from '../files/records'
import { storedInput } from '../files/input'
import { retryDelaySeconds } from '../pipeline/step-runner'
import { previewKind } from '../files/preview-kind'
import type { PreviewMessage } from '../queue'
import { CONTENT_TYPES, type PreviewParams, variantName } from './params'

export interface DrawDeps {
  readonly db: Database
  readonly bucket: R2Bucket
  readonly config: Config
  readonly engines: Engines
}

/** The preview drawn and encoded, each kind through the engine entry points its conversion uses (and so its limits). */
async function draw(deps: DrawDeps, file: FileRow, params: PreviewParams): Promise<Uint8Array> {
  const kind = previewKind(file)
  if (kind === 'office') {
    const pdf = await findConvertedPdf(deps.db, file)
    // Deleted between the request and this drawing: the next request makes it again.
    if (!pdf)
      throw new ConversionError("the document's PDF was deleted before its preview was drawn: ask again", {
        code: 'CONVERTER_UNAVAILABLE',
      })
    return deps.engines.renderPreview('pdf', storedInput(deps.bucket, pdf), params, deps.config)
  }
  if (!kind) throw new ConversionError(`"${file.name}" has no preview`, { code: 'UNSUPPORTED_FORMAT' })
  return deps.engines.renderPreview(kind, storedInput(deps.bucket, file), params, deps.config)
}

/**
 * Draws, encodes and stores the preview the message asks for, unless its row has left `queued` (drawn by an
 * earlier delivery, or gone with its file or content). A failure of the file's own (hostile, truncated, too
 * large, no such page) or of the quota settles the row as failed with its reason; anything else throws, and the
 * queue delivers the message again.
 */
export async function drawPreview(deps: DrawDeps, message: PreviewMessage['preview']): Promise<void> {
  const file = await findFileOf(deps.db, message.userId, message.fileId)
  if (!file || previewKey(file, variantName(message.params)) !== message.key) return
  const row = await findPreview(deps.db, file, message.key)
  if (row?.status !== 'queued') return
  try {
    const body = await draw(deps, file, message.params)
    await storePreview(deps, file, message.key, body, CONTENT_TYPES[message.params.format])
  } catch (error) {
    const settled =
      error instanceof ConversionError
        ? !error.retryable
        : error instanceof ApiError && (error.code === 'QUOTA_EXCEEDED' || error.code === 'FILE_TOO_LARGE')
    if (!settled) throw error
    // The row keeps the public message; a cause (a setting, an address) goes to the log only.
    if ((error as Error).cause !== undefined)
      console.warn(JSON.stringify({ level: 'warn', preview: message.key, error: describeError(error) }))
    await failPreview(deps.db, file, message.key, {
      message: (error as Error).message,
      code: (error as ConversionError | ApiError).code,
    })
  }
}

export async function consumePreviews(messages: readonly Message<PreviewMessage>[], deps: DrawDeps): Promise<void> {
  for (const message of messages) {
    try {
      await drawPreview(deps, message.body.preview)
      message.ack()
    } catch (error) {
      console.warn(
        JSON.stringify({
          level: 'warn',
          preview: message.body.preview.key,
          attempt: message.attempts,
          error: describeError(error),
        }),
      )
      message.retry({ delaySeconds: retryDelaySeconds(message.attempts) })
    }
  }
}

/** Drawings that ran out of retries: their rows fail (503, drawn again when next asked for). */
export async function previewDeadLetters(messages: readonly Message<PreviewMessage>[], deps: DrawDeps): Promise<void> {
  for (const message of messages) {
    const { fileId, key } = message.body.preview
    await failPreview(deps.db, { id: fileId }, key, {
      message: 'the preview could not be drawn: ask again later',
      code: 'CONVERTER_UNAVAILABLE',
    })
    message.ack()
  }
}
