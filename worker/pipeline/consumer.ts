// The queue consumer: runs one step of a job per message. Every effect is idempotent, because Queues deliver
// at least once: outputs are stored under a unique (step, output index), next steps under a unique (job,
// source, part), and a finished step is skipped when its message comes again.
import { and, eq, like } from 'drizzle-orm'
import type { Config } from '../config'
import { ConversionError, resourceReader, settingsFor, type ConversionContext, type ConversionOutput, type Converter } from '../converters/converter'
import { converterForFile, converterNamed, converterToward } from '../converters/registry'
import type { Database } from '../db/client'
import { files, jobs, jobSteps } from '../db/schema'
import { describeError } from '../errors'
import { deleteFiles, type FileRow } from '../files/records'
import { objectKey, outputKey } from '../files/keys'
import { storeFile } from '../files/store'
import { storedInput } from './input'
import { openOptions } from './job-secrets'
import { ensureSteps, failJob, finishJobIfDone, newStep, updateJob, updateStep, type JobRow, type StepMessage, type StepRow } from './jobs'
import { outputName } from './naming'
import { notifyJobFinished } from './webhooks'

export interface PipelineDeps {
  readonly db: Database
  readonly bucket: R2Bucket
  readonly queue: Queue<StepMessage>
  readonly config: Config
  readonly ai?: Ai
  /** Keeps background work (webhooks) alive after the handler returns. */
  readonly waitUntil: (promise: Promise<unknown>) => void
}

/**
 * The converter that continues a chain from this file, if any (never X → X again): toward the job's target when
 * it has one (the chain ends on reaching it), else the default chain's.
 */
export function nextConverter(file: FileRow, target?: string | null): Converter | undefined {
  if (target && file.extension === target) return undefined
  const { converter } = target ? converterToward(file, target) : converterForFile(file)
  return converter && converter.to !== file.extension ? converter : undefined
}

export async function enqueueSteps(queue: Queue<StepMessage>, steps: readonly StepRow[]): Promise<void> {
  if (steps.length === 0) return
  await queue.sendBatch(steps.map((step) => ({ body: { jobId: step.jobId, stepId: step.id } })))
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
  const source = await db.query.files.findFirst({ where: and(eq(files.id, step.sourceFileId), eq(files.userId, job.userId)) })
  const converter = converterNamed(step.converter)
  if (!source || !converter) {
    await failStep(deps, job, step, new ConversionError(source ? `no converter named ${step.converter}` : 'the source file was deleted'), source)
    return
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
    resources: typeof resourcePrefix === 'string' ? resourceReader(deps.bucket, resourcePrefix) : undefined,
    attempt,
  }
  try {
    let part = step.partStart >= 0 ? { start: step.partStart, end: step.partEnd ?? step.partStart } : undefined
    if (converter.plan && !part) {
      const plan = await converter.plan(input, context)
      if (plan.sourceMetadata) await db.update(files).set({ metadata: { ...source.metadata, ...plan.sourceMetadata } }).where(eq(files.id, source.id))
      if (plan.parts.length > 1) {
        const parts = plan.parts.map((range) => newStep(job.id, source.id, converter, Date.now(), range))
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
    const stored: FileRow[] = []
    for await (const output of converter.convert(input, { ...context, part })) stored.push(await storeOutput(deps, job, step, source, output))
    // The source may have been deleted while the converter ran, too early for its delete to see these outputs.
    if (!(await db.query.files.findFirst({ columns: { id: true }, where: eq(files.id, source.id) }))) {
      await failStep(deps, job, step, new ConversionError('the source file was deleted during the conversion'), source)
      return
    }
    const following = stored.flatMap((file) => {
      const next = nextConverter(file, job.target)
      return next ? [newStep(job.id, file.id, next)] : []
    })
    const queued = await ensureSteps(db, following)
    await updateStep(db, step.id, { status: 'done', outputIds: stored.map((file) => file.id) })
    await enqueueSteps(deps.queue, queued)
    if (await finishJobIfDone(db, job.id)) deps.waitUntil(notifyJobFinished(deps, job.id))
  } catch (error) {
    if (error instanceof ConversionError && !error.retryable) {
      await failStep(deps, job, step, error, source)
      return
    }
    await updateStep(db, step.id, { status: 'queued', error: describeRetry(error) })
    throw error
  }
}

function describeRetry(error: unknown): string {
  return error instanceof ConversionError ? `retrying: ${error.message}` : 'retrying after an internal error'
}

function storeOutput(deps: PipelineDeps, job: JobRow, step: StepRow, source: FileRow, output: ConversionOutput): Promise<FileRow> {
  return storeFile(deps, {
    userId: job.userId,
    parentId: source.id,
    name: outputName(source.name, output.index + 1, output.total, output.extension),
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
  })
}

/**
 * Removes what any delivery of the step stored (records by origin key, objects by their key prefix, which also
 * finds an object whose record was never written), so a failed step leaves no half-written set of outputs.
 */
async function discardStepOutputs(deps: PipelineDeps, job: JobRow, step: StepRow, source?: FileRow): Promise<void> {
  const records = await deps.db.query.files.findMany({ columns: { id: true, key: true }, where: like(files.originKey, `${step.id}:%`) })
  await deleteFiles(deps.db, deps.bucket, records)
  if (!source) return
  const prefix = objectKey(job.userId, `${step.id}-`, source.prefix) // every outputKey of the step
  for (let listed = await deps.bucket.list({ prefix }); listed.objects.length > 0; listed = await deps.bucket.list({ prefix })) {
    await deps.bucket.delete(listed.objects.map((object) => object.key))
    if (!listed.truncated) break
  }
}

async function failStep(deps: PipelineDeps, job: JobRow, step: StepRow, error: ConversionError, source?: FileRow): Promise<void> {
  // The job keeps the public message; the cause (a server's address, a setting) is logged under the job id.
  if (error.cause !== undefined) console.warn(JSON.stringify({ level: 'warn', job: job.id, step: step.id, error: describeError(error) }))
  const reason = `${step.converter} on "${source?.name ?? step.sourceFileId}" failed: ${error.message}`
  await discardStepOutputs(deps, job, step, source)
  await updateStep(deps.db, step.id, { status: 'failed', error: error.message })
  await failJob(deps.db, job, reason, error.status)
  deps.waitUntil(notifyJobFinished(deps, job.id))
}

/** Retry delays grow with the attempt: 2, 4, 8, 16 … seconds, at most 5 minutes. */
export function retryDelaySeconds(attempt: number): number {
  return Math.min(300, 2 ** Math.max(1, attempt))
}

export async function consumeConversions(batch: MessageBatch<StepMessage>, deps: PipelineDeps): Promise<void> {
  for (const message of batch.messages) {
    try {
      await runStep(deps, message.body, message.attempts)
      message.ack()
    } catch (error) {
      console.warn(JSON.stringify({ level: 'warn', job: message.body.jobId, step: message.body.stepId, attempt: message.attempts, error: describeError(error) }))
      message.retry({ delaySeconds: retryDelaySeconds(message.attempts) })
    }
  }
}

/** Messages that ran out of retries: their step and job fail with the last reason. */
export async function consumeDeadLetters(batch: MessageBatch<StepMessage>, deps: PipelineDeps): Promise<void> {
  for (const message of batch.messages) {
    const step = await deps.db.query.jobSteps.findFirst({ where: eq(jobSteps.id, message.body.stepId) })
    const job = step && (await deps.db.query.jobs.findFirst({ where: eq(jobs.id, step.jobId) }))
    if (step && job && step.status !== 'done' && step.status !== 'split') {
      const last = step.error?.replace(/^retrying: /, '') ?? 'unknown error'
      const source = await deps.db.query.files.findFirst({ where: and(eq(files.id, step.sourceFileId), eq(files.userId, job.userId)) })
      await failStep(deps, job, step, new ConversionError(`gave up after ${message.attempts} attempts: ${last}`, { status: 503 }), source)
    }
    message.ack()
  }
}
