// Asking for a preview, in the API Worker: found under its key when it is stored; else its drawing is queued for
// the consumer Worker (draw.ts) and the request waits for it, without drawing anything itself, up to a deadline.
// The files module stores it (counted in the quota, deleted with its file or content). An Office document is
// previewed from its PDF, which the chain makes when it is missing: meanwhile the caller is told to come back.
import type { Config } from '../config'
import { ConversionError } from '../conversion-error'
import type { Database } from '../db/client'
import { ApiError, ERRORS } from '../errors'
import {
  findPreview,
  type PreviewRow,
  previewKey,
  queuedPreviews,
  queuePreview,
  requeuePreview,
  unqueuePreview,
} from '../files/previews'
import { findConvertedPdf, type FileRow } from '../files/records'
import { jobFailure, latestJobOfContent, type JobRow } from '../pipeline/jobs'
import { startJob } from '../pipeline/start'
import { enqueuePreview, type PreviewMessage, type StepMessage } from '../queue'
import { previewKind } from '../files/preview-kind'
import { checkPreviewPage } from './pages'
import { CONTENT_TYPES, type PreviewParams, variantName } from './params'

export interface PreviewDeps {
  readonly db: Database
  /** Conversion steps (an Office document's PDF). */
  readonly queue: Queue<StepMessage>
  /** Drawings: their own queue, never behind conversion steps. */
  readonly previews: Queue<PreviewMessage>
  readonly config: Config
}

export type PreviewAnswer =
  | { readonly ready: true; readonly key: string; readonly contentType: string }
  /** Not drawn yet: `job` when an Office document's PDF is being made, else the drawing is queued. */
  | { readonly ready: false; readonly job?: JobRow }

/** Seconds a client waits before asking again while a preview is drawn or an Office document's PDF is made. */
export const PREVIEW_RETRY_AFTER_SECONDS = 3
/** A queued drawing not settled after this long lost its messages (the queue's retries take about a minute). */
export const PREVIEW_REQUEUE_MS = 15 * 60 * 1000
/**
 * Drawings one user may have queued at once: past it a new preview is refused with 429 and Retry-After, so one
 * account asking for every size, fit, format and page of its files cannot fill the queue the conversions share.
 */
export const PREVIEW_MAX_QUEUED_PER_USER = 20
const POLL_FIRST_MS = 10
const POLL_MAX_MS = 500

/** The preview's strong ETag: its content hash and parameters decide its bytes, so it is known before drawing. */
export function previewEtag(file: FileRow, params: PreviewParams): string {
  return `"${file.hash}.${variantName(params)}"`
}

function tooManyQueued(): ApiError {
  return new ApiError('RATE_LIMITED', {
    message: `${PREVIEW_MAX_QUEUED_PER_USER} of your previews are being drawn: ask again in ${PREVIEW_RETRY_AFTER_SECONDS} s`,
    headers: { 'retry-after': String(PREVIEW_RETRY_AFTER_SECONDS) },
    details: { retry_after: PREVIEW_RETRY_AFTER_SECONDS },
  })
}

/** A settled failure as its conversion answers it: the same code and reason. */
function previewFailed(row: Pick<PreviewRow, 'error' | 'errorCode'>): ApiError {
  return new ApiError(row.errorCode ?? 'CONVERSION_FAILED', { message: row.error ?? undefined })
}

/** Failures that may not happen again (the quota, an engine unavailable) are drawn again when next asked for. */
const mayPassNow = (row: PreviewRow) =>
  row.errorCode === 'QUOTA_EXCEEDED' || ERRORS[row.errorCode ?? 'INTERNAL_ERROR'].status >= 500

/** Whether the row's drawing should be queued again: a failure that may pass or has expired, or a lost message. */
function drawAgain(row: PreviewRow, config: Config, now: number): boolean {
  if (row.status === 'failed') return mayPassNow(row) || row.updatedAt < now - config.PREVIEW_FAILURE_TTL * 1000
  return row.status === 'queued' && row.updatedAt < now - PREVIEW_REQUEUE_MS
}

/** A job making the document's PDF: the one already running, else a new one toward .pdf; a failure is answered. */
async function pdfJob(deps: PreviewDeps, file: FileRow): Promise<JobRow> {
  const latest = await latestJobOfContent(deps.db, file)
  if (latest && (latest.status === 'queued' || latest.status === 'running')) return latest
  if (latest?.status === 'failed') {
    throw jobFailure(latest)
  }
  return startJob({ db: deps.db, queue: deps.queue }, deps.config, file, { target: '.pdf' })
}

async function sendDrawing(deps: PreviewDeps, file: FileRow, key: string, params: PreviewParams): Promise<void> {
  try {
    await enqueuePreview(deps.previews, { fileId: file.id, userId: file.userId, key, params })
  } catch (error) {
    // Not sent: the row goes, so the next request queues it again instead of waiting for a drawing that never comes.
    await unqueuePreview(deps.db, file, key)
    throw error
  }
}

/** The row once it has left `queued` (or is gone), or as it stands when `waitMs` runs out; waiting is I/O only. */
async function waitForPreview(
  db: Database,
  file: FileRow,
  key: string,
  waitMs: number,
  row: PreviewRow | undefined,
): Promise<PreviewRow | undefined> {
  const deadline = Date.now() + waitMs
  let pause = POLL_FIRST_MS
  while (row?.status === 'queued' && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, Math.min(pause, Math.max(0, deadline - Date.now()))))
    pause = Math.min(POLL_MAX_MS, pause * 1.5)
    row = await findPreview(db, file, key)
  }
  return row
}

/**
 * The preview: stored (ready), failed (thrown as its conversion's error), or still being made after `waitMs`.
 * Nothing is drawn here: the drawing is queued once (the request that writes the queued row sends it).
 */
export async function makePreview(
  deps: PreviewDeps,
  file: FileRow,
  params: PreviewParams,
  waitMs: number,
): Promise<PreviewAnswer> {
  const key = previewKey(file, variantName(params))
  const contentType = CONTENT_TYPES[params.format]
  const now = Date.now()
  let row = await findPreview(deps.db, file, key)
  if (!row) {
    const kind = previewKind(file)
    if (!kind)
      throw new ApiError('UNSUPPORTED_FORMAT', {
        message: `"${file.name}" has no preview: previews are made of images, PDFs, Office documents and text`,
      })
    try {
      checkPreviewPage(kind, params)
    } catch (error) {
      if (error instanceof ConversionError) throw previewFailed({ error: error.message, errorCode: error.code })
      throw error
    }
    if (kind === 'office' && !(await findConvertedPdf(deps.db, file)))
      return { ready: false, job: await pdfJob(deps, file) }
    if (await queuePreview(deps.db, file, key, now, PREVIEW_MAX_QUEUED_PER_USER))
      await sendDrawing(deps, file, key, params)
    row = await findPreview(deps.db, file, key)
    if (!row && (await queuedPreviews(deps.db, file.userId)) >= PREVIEW_MAX_QUEUED_PER_USER) throw tooManyQueued()
  } else if (drawAgain(row, deps.config, now) && (await requeuePreview(deps.db, row, now))) {
    await sendDrawing(deps, file, key, params)
    row = await findPreview(deps.db, file, key)
  }
  row = await waitForPreview(deps.db, file, key, waitMs, row)
  // No row: the file was deleted or its content replaced after this request read it.
  if (!row)
    throw new ApiError('FILE_REPLACED_MEANWHILE', {
      message: 'the file was deleted or replaced while its preview was asked for; read it again',
    })
  if (row.status === 'ready') return { ready: true, key, contentType }
  if (row.status === 'failed') throw previewFailed(row)
  return { ready: false }
}
