// The step runner: runs one step of a job per queue message. Every effect is idempotent, because Queues deliver
// at least once: outputs are stored under a unique (step, output index), next steps under a unique (job,
// source, part), and a finished step is skipped when its message comes again.
import { eq } from 'drizzle-orm'
import type { Config } from '../config'
import { ConversionError, resourceReader, settingsFor, type ConversionContext, type ConversionOutput, type ConverterInfo } from '../converters/converter'
import { converterForFile, converterNamed, converterToward } from '../converters/registry'
import type { Database } from '../db/client'
import type { Engines } from '../engine-workers/engines'
import { jobs, jobSteps } from '../db/schema'
import { ApiError, describeError } from '../errors'
import { conversionBaseName, deleteStepOutputs, findFileOf, mergeFileMetadata, type FileRow } from '../files/records'
import { objectKey, outputKey } from '../files/keys'
import { holdQuota } from '../files/quota'
import { storeFile } from '../files/store'
import { storedInput } from './input'
import { openOptions } from './job-secrets'
import { earlierOutput, ensureSteps, failJob, finishJobIfDone, newStep, shouldYieldTurn, updateJob, updateStep, type JobRow, type StepRow } from './jobs'
import { outputName } from './naming'
import { notifyJobFinished } from './webhooks'
import { enqueueSteps, requeueStep, type StepMessage } from '../queue'

export interface PipelineDeps {
  readonly db: Database
  readonly bucket: R2Bucket
  readonly queue: Queue<StepMessage>
  readonly config: Config
  readonly ai?: Ai
  /** Where each converter's work runs (the engine Workers, or this isolate in tests). */
  readonly engines: Engines
  /** The sidecar Container's stub, when configured (worker/engines/gotenberg-container.ts). */
  readonly gotenberg?: { fetch(request: Request): Promise<Response> }
  /** Keeps background work (webhooks) alive after the handler returns. */
  readonly waitUntil: (promise: Promise<unknown>) => void
}

/**
 * The converter that continues a chain from this file, if any (never X → X again): toward the job's target when
 * it has one (the chain ends on reaching it), else the default chain's.
 */
export function nextConverter(file: FileRow, target?: string | null): ConverterInfo | undefined {
  if (target && file.extension === target) return undefined
  const { converter } = target ? converterToward(file, target) : converterForFile(file)
  return converter && converter.to !== file.extension ? converter : undefined
}

/**
 * The step's source and the job's file, as long as they hold the content the job and step were made for; the
 * reason otherwise (deleted, or replaced: a replace writes a new key). Checked before and after converting.
 */
async function sourcesOf(db: Database, job: JobRow, step: StepRow, when = ''): Promise<{ root: FileRow; source: FileRow } | { reason: string; source?: FileRow }> {
  const owned = (id: string) => findFileOf(db, job.userId, id)
  const root = await owned(job.fileId)
  const source = step.sourceFileId === job.fileId ? root : await owned(step.sourceFileId)
  const replaced = { reason: `source replaced: the file has new content${when}`, source }
  if (root && job.sourceKey && root.key !== job.sourceKey) return replaced
  if (!root || !source) return { reason: `the source file was deleted${when}`, source }
  if (step.sourceKey && source.key !== step.sourceKey) return replaced
  return { root, source }
}

/** Seconds a step waits, sent to the back of the line, while another job converts the same content (reusable). */
const WAIT_FOR_PEER_SECONDS = 3

/**
 * Thrown before a step of a `reusable` converter starts while another job's step converts the same content: the
 * consumer sends its message again later (no attempt spent), when that step's output can be taken instead.
 */
class WaitingForPeer extends Error {
  override readonly name = 'WaitingForPeer'
}

/**
 * Runs the step. Returns normally when the message is settled (done, skipped, or failed for good); throws a
 * retryable error when the queue should deliver it again.
 */
export async function runStep(deps: PipelineDeps, message: StepMessage, attempt: number): Promise<void> {
  const { db } = deps
  const step = await db.query.jobSteps.findFirst({ where: eq(jobSteps.id, message.stepId) })
  if (!step || step.status === 'done' || step.status === 'split' || step.status === 'failed') return
  const job = await db.query.jobs.findFirst({ where: eq(jobs.id, step.jobId) })
  if (!job || job.status === 'failed' || job.status === 'done') return
  const found = await sourcesOf(db, job, step)
  const converter = deps.engines.converter(step.converter)
  if ('reason' in found || !converter) {
    await failStep(deps, job, step, new ConversionError('reason' in found ? found.reason : `no converter named ${step.converter}`), found.source)
    return
  }
  const { root, source } = found
  // One LibreOffice run per document content: a preview's PDF and a conversion's are the same file.
  if (converterNamed(step.converter)?.reusable && step.partStart < 0) {
    const earlier = await earlierOutput(db, job, step)
    if (earlier.file) {
      await finishStep(deps, job, step, [earlier.file])
      return
    }
    if (earlier.converting) throw new WaitingForPeer(`another job is running ${step.converter} on the same content`)
  }
  await updateStep(db, step.id, { status: 'running', attempts: attempt, error: null })
  if (job.status === 'queued') await updateJob(db, job.id, { status: 'running' })

  const input = storedInput(deps.bucket, source)
  const options = await openOptions(deps.config, job.userId, job.options)
  // The converter sees its own settings and resources, not the whole config (secrets) nor the bucket.
  const resourcePrefix = converter.resourcePrefix && deps.config[converter.resourcePrefix]
  const context: ConversionContext<keyof Config> = {
    jobId: job.id,
    settings: settingsFor(converter, deps.config),
    options,
    ai: deps.ai,
    gotenberg: deps.gotenberg,
    resources: typeof resourcePrefix === 'string' ? resourceReader(deps.bucket, resourcePrefix) : undefined,
    attempt,
  }
  try {
    let part = step.partStart >= 0 ? { start: step.partStart, end: step.partEnd ?? step.partStart } : undefined
    if (converter.plan && !part) {
      const plan = await converter.plan(input, context)
      if (plan.sourceMetadata) await mergeFileMetadata(db, source, plan.sourceMetadata)
      if (plan.parts.length > 1) {
        const parts = plan.parts.map((range) => newStep(job.id, source, converter, Date.now(), range))
        const queued = await ensureSteps(db, parts)
        await updateStep(db, step.id, { status: 'split' })
        await enqueueSteps(deps.queue, queued)
        return
      }
      part = plan.parts[0]
    }
    // Each output is stored before the next is asked for, so the step holds one output at a time. A failure
    // part-way leaves the outputs stored so far: a retry finds their records by origin key (or rewrites their
    // objects under the same keys), and failStep removes them when the step fails for good.
    const base = await conversionBaseName(db, root)
    const stored: FileRow[] = []
    for await (const output of converter.convert(input, { ...context, part })) stored.push(await storeOutput(deps, job, step, source, base, output))
    // The source may have been deleted or replaced while the converter ran, too early for the delete or the
    // replace to see these outputs: they belong to content that is gone.
    const after = await sourcesOf(db, job, step, ' during the conversion')
    if ('reason' in after) {
      await failStep(deps, job, step, new ConversionError(after.reason), source)
      return
    }
    await finishStep(deps, job, step, stored)
  } catch (error) {
    if (error instanceof ConversionError && !error.retryable) {
      await failStep(deps, job, step, error, source)
      return
    }
    await updateStep(db, step.id, { status: 'queued', error: describeRetry(error) })
    throw error
  }
}

/** The step is done with these outputs (made now, or an earlier job's): the chain goes on from each. */
async function finishStep(deps: PipelineDeps, job: JobRow, step: StepRow, outputs: FileRow[]): Promise<void> {
  const following = outputs.flatMap((file) => {
    const next = nextConverter(file, job.target)
    return next ? [newStep(job.id, file, next)] : []
  })
  const queued = await ensureSteps(deps.db, following)
  await updateStep(deps.db, step.id, { status: 'done', outputIds: outputs.map((file) => file.id) })
  await enqueueSteps(deps.queue, queued)
  if (await finishJobIfDone(deps.db, job.id)) deps.waitUntil(notifyJobFinished(deps, job.id))
}

function describeRetry(error: unknown): string {
  return error instanceof ConversionError ? `retrying: ${error.message}` : 'retrying after an internal error'
}

/** Stores one output, its bytes held against the owner's quota: passing it fails the step for good (413). */
async function storeOutput(deps: PipelineDeps, job: JobRow, step: StepRow, source: FileRow, base: string, output: ConversionOutput): Promise<FileRow> {
  try {
    return await storeFile(deps, {
      userId: job.userId,
      parentId: source.id,
      name: outputName(base, output.index + 1, output.total),
      extension: output.extension,
      contentType: output.contentType,
      body: output.body,
      prefix: source.prefix,
      partIndex: output.index,
      partTotal: output.total,
      metadata: { ...output.metadata },
      jobId: job.id,
      originKey: `${step.id}:${output.index}`,
      key: outputKey(job.userId, step.id, output.index, source.prefix),
      // Nothing up front: a redelivery that finds its output stored needs no room.
      quota: await holdQuota(deps.db, deps.config.FILES_QUOTA_BYTES, job.userId, { bytes: 0 }),
    })
  } catch (error) {
    if (error instanceof ApiError && error.status === 413) throw new ConversionError(error.message, { status: 413, cause: error })
    throw error
  }
}

async function failStep(deps: PipelineDeps, job: JobRow, step: StepRow, error: ConversionError, source?: FileRow): Promise<void> {
  // The job keeps the public message; the cause (a server's address, a setting) is logged under the job id.
  if (error.cause !== undefined) console.warn(JSON.stringify({ level: 'warn', job: job.id, step: step.id, error: describeError(error) }))
  const reason = `${step.converter} on "${source?.name ?? step.sourceFileId}" failed: ${error.message}`
  // Whatever any delivery of the step stored; objects by key prefix too, when the source says where they are.
  await deleteStepOutputs(deps.db, deps.bucket, step.id, source && objectKey(job.userId, `${step.id}-`, source.prefix))
  await updateStep(deps.db, step.id, { status: 'failed', error: error.message })
  // Several steps of a job can fail (parts run in parallel, a message redelivered): the job fails, and says so, once.
  if (await failJob(deps.db, job, reason, error.status)) deps.waitUntil(notifyJobFinished(deps, job.id))
}

/** Retry delays grow with the attempt: 2, 4, 8, 16 … seconds, at most 5 minutes. */
export function retryDelaySeconds(attempt: number): number {
  return Math.min(300, 2 ** Math.max(1, attempt))
}

/** How long a step that let another user go first waits before it is delivered again. */
const YIELD_DELAY_SECONDS = 1

/**
 * A step whose user has more steps in line than another user who is waiting goes to the back of the line: sent
 * again as a new message (its attempts are not spent) and this one acknowledged. Answers whether it did.
 */
async function yieldedTurn(deps: PipelineDeps, message: Message<StepMessage>): Promise<boolean> {
  const job = await deps.db.query.jobs.findFirst({ where: eq(jobs.id, message.body.jobId), columns: { userId: true } })
  if (!job || !(await shouldYieldTurn(deps.db, job.userId))) return false
  await requeueStep(deps.queue, message.body, YIELD_DELAY_SECONDS)
  message.ack()
  return true
}

export async function consumeConversions(messages: readonly Message<StepMessage>[], deps: PipelineDeps): Promise<void> {
  for (const message of messages) {
    try {
      if (await yieldedTurn(deps, message)) continue
      await runStep(deps, message.body, message.attempts)
      message.ack()
    } catch (error) {
      if (error instanceof WaitingForPeer) {
        try {
          await requeueStep(deps.queue, message.body, WAIT_FOR_PEER_SECONDS)
          message.ack()
        } catch {
          message.retry({ delaySeconds: WAIT_FOR_PEER_SECONDS })
        }
        continue
      }
      console.warn(JSON.stringify({ level: 'warn', job: message.body.jobId, step: message.body.stepId, attempt: message.attempts, error: describeError(error) }))
      message.retry({ delaySeconds: retryDelaySeconds(message.attempts) })
    }
  }
}

/** Messages that ran out of retries: their step and job fail with the last reason. */
export async function consumeDeadLetters(messages: readonly Message<StepMessage>[], deps: PipelineDeps): Promise<void> {
  for (const message of messages) {
    const step = await deps.db.query.jobSteps.findFirst({ where: eq(jobSteps.id, message.body.stepId) })
    const job = step && (await deps.db.query.jobs.findFirst({ where: eq(jobs.id, step.jobId) }))
    if (step && job && step.status !== 'done' && step.status !== 'split') {
      const last = step.error?.replace(/^retrying: /, '') ?? 'unknown error'
      const source = await findFileOf(deps.db, job.userId, step.sourceFileId)
      // The step counts its deliveries; the dead-letter message's own count starts again at 1.
      const attempts = Math.max(step.attempts, message.attempts)
      await failStep(deps, job, step, new ConversionError(`gave up after ${attempts} attempts: ${last}`, { status: 503 }), source)
    }
    message.ack()
  }
}
