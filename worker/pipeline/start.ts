// Starting a conversion job for a stored file, and waiting for it: used by POST /files/:id/convert and by
// auto-conversion after an upload.
import type { Context } from 'hono'
import type { AppEnv } from '../api'
import type { Config } from '../config'
import { converterForFile, converterToward, unavailableReason } from '../converters/registry'
import type { Database } from '../db/client'
import { ApiError } from '../errors'
import type { FileRow } from '../files/records'
import { createJob, findJob, jobNotFound, type JobRow, type StepRow } from './jobs'
import { sealOptions } from './job-secrets'
import { checkCallbackUrl } from './webhooks'
import { enqueueSteps, type StepMessage } from '../queue'

/**
 * What follows a stored upload (wired by the app into the file routes): with FILES_AUTO_CONVERT its conversion
 * chain starts by itself (in the background: the upload answers at once, the job is listed at GET /files/:id/jobs).
 */
export async function autoConvert(c: Context<AppEnv>, row: FileRow): Promise<void> {
  const { converter } = converterForFile(row)
  if (!c.var.config.FILES_AUTO_CONVERT || !converter) return
  // A job that could only fail (audio with no transcription provider) is not started: POST /files/:id/convert
  // answers 503 saying what to set.
  if (await unavailableReason(converter, c.var.config, c.env.AI)) return
  // Not bounded by STEPS_MAX_QUEUED_PER_USER: the upload is stored already, and a 429 would read as a failed upload.
  await startJob({ db: c.var.db, queue: c.env.CONVERSIONS, ai: c.env.AI }, c.var.config, row, { bounded: false })
}

export async function startJob(
  deps: { db: Database; queue: Queue<StepMessage>; ai?: Ai | undefined },
  config: Config,
  file: FileRow,
  request: StartRequest = {},
): Promise<JobRow> {
  return (await startJobWithView(deps, config, file, request)).job
}

type StartRequest = {
  options?: Record<string, string | number | boolean>
  callbackUrl?: string
  target?: string
  bounded?: boolean
}

/** startJob, answering also the rows of the job's view (its steps and files), read in the round trip that wrote it. */
export async function startJobWithView(
  /** `ai`: the AI binding, which decides whether audio → text can run here (converters' `unavailable`). */
  deps: { db: Database; queue: Queue<StepMessage>; ai?: Ai | undefined },
  config: Config,
  file: FileRow,
  request: StartRequest = {},
): Promise<{ job: JobRow; steps: StepRow[]; made: FileRow[] }> {
  const choice = request.target ? converterToward(file, request.target) : converterForFile(file)
  if (!choice.converter) throw new ApiError(choice.code, { message: choice.refusal })
  const { converter } = choice
  const unavailable = await unavailableReason(converter, config, deps.ai)
  if (unavailable)
    throw new ApiError('CONVERTER_NOT_CONFIGURED', { message: unavailable, details: { converter: converter.name } })
  const callbackUrl = request.callbackUrl ? await checkCallbackUrl(config, request.callbackUrl) : undefined
  const options = await sealOptions(config, file.userId, request.options)
  // Bounded by STEPS_MAX_QUEUED_PER_USER unless told otherwise (429 past it).
  const { job, step, steps, made } = await createJob(deps.db, file, converter, {
    options,
    callbackUrl,
    target: request.target,
    bounded: request.bounded !== false,
  })
  // No step: an equal job is already queued or running, and this request follows it.
  if (step) await enqueueSteps(deps.queue, [step])
  return { job, steps, made }
}

const POLL_MS = 200

/** The job once it is done or failed, or as it stands when `waitMs` runs out. */
export async function waitForJob(db: Database, jobId: string, waitMs: number): Promise<JobRow> {
  const deadline = Date.now() + waitMs
  for (;;) {
    const job = await findJob(db, jobId)
    if (!job) throw jobNotFound()
    if (job.status === 'done' || job.status === 'failed' || Date.now() >= deadline) return job
    await new Promise((resolve) => setTimeout(resolve, Math.min(POLL_MS, Math.max(0, deadline - Date.now()))))
  }
}
