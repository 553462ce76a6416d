// Making a preview once: found under its key when it exists, else drawn, encoded and stored through the files
// module (which counts it in the quota and deletes it with its file or content). An Office document is previewed
// from its PDF, which the chain makes when it is missing: meanwhile the caller is told to come back.
import { and, desc, eq, gte } from 'drizzle-orm'
import type { Config } from '../config'
import { ConversionError } from '../converters/converter'
import type { Database } from '../db/client'
import { files, jobs } from '../db/schema'
import { encodeAvif, encodeWebp } from '../engines/image/encode'
import type { RawImage } from '../engines/png/encode'
import { encodePngBytes } from '../engines/png/encode'
import { ApiError } from '../errors'
import { hasPreview, previewKey, storePreview } from '../files/previews'
import type { FileRow } from '../files/records'
import { storedInput } from '../pipeline/input'
import { conversionErrorCode, type JobRow, type StepMessage } from '../pipeline/jobs'
import { startJob } from '../pipeline/start'
import { previewKind } from './kind'
import { CONTENT_TYPES, type PreviewParams, variantName } from './params'
import { imagePixels, pdfPixels, textPixels } from './render'

export interface PreviewDeps {
  readonly db: Database
  readonly bucket: R2Bucket
  readonly queue: Queue<StepMessage>
  readonly config: Config
}

export type PreviewAnswer =
  | { readonly ready: true; readonly key: string; readonly contentType: string; readonly body?: Uint8Array }
  | { readonly ready: false; readonly job: JobRow }

/** The preview's strong ETag: its content hash and parameters decide its bytes, so it is known before drawing. */
export function previewEtag(file: FileRow, params: PreviewParams): string {
  return `"${file.hash}.${variantName(params)}"`
}

export async function encodePreview(image: RawImage, params: PreviewParams): Promise<Uint8Array> {
  if (params.format === 'webp') return encodeWebp(image)
  if (params.format === 'avif') return encodeAvif(image)
  return encodePngBytes(image)
}

/** The file's failures as its conversions answer them: same status, code and reason. */
function previewFailed(error: ConversionError): ApiError {
  return new ApiError(conversionErrorCode(error.status), { message: error.message })
}

/** The Office document's PDF (a conversion of its current content), if the chain has made it. */
async function convertedPdf(db: Database, file: FileRow): Promise<FileRow | undefined> {
  return db.query.files.findFirst({
    where: and(eq(files.parentId, file.id), eq(files.userId, file.userId), eq(files.contentType, 'application/pdf')),
    orderBy: desc(files.id),
  })
}

/** A job making the document's PDF: the one already running, else a new one toward .pdf; a failure is answered. */
async function pdfJob(deps: PreviewDeps, file: FileRow): Promise<JobRow> {
  // Only jobs on the current content: a replace updates the record, and older jobs converted the old bytes.
  const latest = await deps.db.query.jobs.findFirst({
    where: and(eq(jobs.fileId, file.id), eq(jobs.userId, file.userId), gte(jobs.createdAt, file.updatedAt)),
    orderBy: desc(jobs.id),
  })
  if (latest && (latest.status === 'queued' || latest.status === 'running')) return latest
  if (latest?.status === 'failed') {
    throw new ApiError(conversionErrorCode(latest.errorStatus), { message: latest.error ?? undefined, details: { job: latest.id } })
  }
  return startJob({ db: deps.db, queue: deps.queue }, deps.config, file, { target: '.pdf' })
}

export async function makePreview(deps: PreviewDeps, file: FileRow, params: PreviewParams): Promise<PreviewAnswer> {
  const key = previewKey(file, variantName(params))
  const contentType = CONTENT_TYPES[params.format]
  if (await hasPreview(deps.db, file, key)) return { ready: true, key, contentType }
  const kind = previewKind(file)
  if (!kind) throw new ApiError('UNSUPPORTED_FORMAT', { message: `"${file.name}" has no preview: previews are made of images, PDFs, Office documents and text` })
  let image: RawImage
  try {
    if (kind === 'office') {
      const pdf = await convertedPdf(deps.db, file)
      if (!pdf) return { ready: false, job: await pdfJob(deps, file) }
      image = await pdfPixels(storedInput(deps.bucket, pdf), params, deps.config)
    } else {
      const input = storedInput(deps.bucket, file)
      image = kind === 'image' ? await imagePixels(input, params, deps.config) : kind === 'pdf' ? await pdfPixels(input, params, deps.config) : await textPixels(input, params)
    }
  } catch (error) {
    if (error instanceof ConversionError) throw previewFailed(error)
    throw error
  }
  const body = await encodePreview(image, params)
  await storePreview(deps, file, key, body, contentType)
  return { ready: true, key, contentType, body }
}
