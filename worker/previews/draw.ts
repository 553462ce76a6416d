
import type { Config } from '../config'
import { ConversionError } from '../converters/converter'
import type { Database } from '../db/client'
import { encodeAvif, encodeWebp } from '../engines/image/encode'
import type { RawImage } from '../engines/png/encode'
import { encodePngBytes } from '../engines/png/encode'
import { ApiError, describeError } from '../errors'
import { failPreview, findPreview, previewKey, storePreview } from '../files/previews'
import { findConvertedPdf, findFileOf, type FileRow } from '../files/records'
import { storedInput } from '../pipeline/input'
import { retryDelaySeconds } from '../pipeline/consumer'
import { previewKind } from './kind'
import type { PreviewMessage } from '../queue'
import { CONTENT_TYPES, type PreviewParams, variantName } from './params'
import { imagePixels, pdfPixels, textPixels } from './render'

export interface DrawDeps {
  readonly db: Database
  readonly bucket: R2Bucket
  readonly config: Config
}

export async function encodePreview(image: RawImage, params: PreviewParams): Promise<Uint8Array> {
  if (params.format === 'webp') return encodeWebp(image)
  if (params.format === 'avif') return encodeAvif(image)
  return encodePngBytes(image)
}

/** The preview's pixels, each kind through the engine entry points its conversion uses (and so its limits). */
async function drawPixels(deps: DrawDeps, file: FileRow, params: PreviewParams): Promise<RawImage> {
  const kind = previewKind(file)
  if (kind === 'office') {
    const pdf = await findConvertedPdf(deps.db, file)
    // Deleted between the request and this drawing: the next request makes it again.
    if (!pdf) throw new ConversionError("the document's PDF was deleted before its preview was drawn: ask again", { status: 503 })
    return pdfPixels(storedInput(deps.bucket, pdf), params, deps.config)
  }
  const input = storedInput(deps.bucket, file)
  if (kind === 'image') return imagePixels(input, params, deps.config)
  if (kind === 'pdf') return pdfPixels(input, params, deps.config)
  if (kind === 'text') return textPixels(input, params)
  throw new ConversionError(`"${file.name}" has no preview`, { status: 415 })
}

/**
 * Draws, encodes and stores the preview the message asks for, unless its row is no longer queued (drawn by an
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
    const image = await drawPixels(deps, file, message.params)
    const body = await encodePreview(image, message.params)
    await storePreview(deps, file, message.key, body, CONTENT_TYPES[message.params.format])
  } catch (error) {
    const settled = error instanceof ConversionError ? !error.retryable : error instanceof ApiError && error.status === 413
    if (!settled) throw error
    // The row keeps the public message; a cause (a setting, an address) goes to the log only.
    if ((error as Error).cause !== undefined) console.warn(JSON.stringify({ level: 'warn', preview: message.key, error: describeError(error) }))
    await failPreview(deps.db, file, message.key, { message: (error as Error).message, status: (error as ConversionError | ApiError).status })
  }
}

export async function consumePreviews(messages: readonly Message<PreviewMessage>[], deps: DrawDeps): Promise<void> {
  for (const message of messages) {
    try {
      await drawPreview(deps, message.body.preview)
      message.ack()
    } catch (error) {
      console.warn(JSON.stringify({ level: 'warn', preview: message.body.preview.key, attempt: message.attempts, error: describeError(error) }))
      message.retry({ delaySeconds: retryDelaySeconds(message.attempts) })
    }
  }
}

/** Drawings that ran out of retries: their rows fail (503, drawn again when next asked for). */
export async function previewDeadLetters(messages: readonly Message<PreviewMessage>[], deps: DrawDeps): Promise<void> {
  for (const message of messages) {
    const { fileId, key } = message.body.preview
    await failPreview(deps.db, { id: fileId }, key, { message: 'the preview could not be drawn: ask again later', status: 503 })
    message.ack()
  }
}
