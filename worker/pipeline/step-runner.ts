// The step runner: runs one step of a job per queue message. Every effect is idempotent, because Queues deliver
// at least once: outputs are stored under a unique (step, output index), next steps under a unique (job,
// source, part), and a finished step is skipped when its message comes again.
import type { Config } from '../config'
import {
  ConversionError,
  resourcePrefixSetting,
  settingsFor,
  type ConversionContext,
  type ConversionOutput,
  type ConverterInfo,
  type PartRange,
} from '../converters/converter'
import { converterForFile, converterNamed, converterToward } from '../converters/registry'
import type { Database } from '../db/client'
import type { Engines } from '../engine-workers/engines'
import { ApiError, describeError } from '../errors'
import { conversionBaseName, outputName } from '../files/naming'
import { deleteStepOutputs, findFileOf, mergeFileMetadata, type FileRow } from '../files/records'
import { objectKey, outputKey } from '../files/keys'
import { holdQuota } from '../files/quota'
import { storeFile } from '../files/store'
import { resourceReader, storedInput } from '../files/input'
import { openOptions } from './job-secrets'
import {
  claimStep,
  earlierOutput,
  ensureSteps,
  failJob,
  findJob,
  findStep,
  finishJobIfDone,
  HANDED_OVER,
  newStep,
  pauseStepAt,
  queuedSteps,
  shouldYieldTurn,
  stepOwnerAndStatus,
  turnToGive,
  updateJob,
  updateStep,
  YIELD_ABOVE_STEPS,
  type JobRow,
  type StepRow,
} from './jobs'
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
async function sourcesOf(
  db: Database,
  job: JobRow,
  step: StepRow,
  when = '',
): Promise<{ root: FileRow; source: FileRow } | { reason: string; source?: FileRow }> {
  const owned = (id: string) => findFileOf(db, job.userId, id)
  const root = await owned(job.fileId)
  const source = step.sourceFileId === job.fileId ? root : await owned(step.sourceFileId)
  const replaced = { reason: `source replaced: the file has new content${when}`, source }
  if (root && job.sourceKey && root.key !== job.sourceKey) return replaced
  if (!root || !source) return { reason: `the source file was deleted${when}`, source }
  if (step.sourceKey && source.key !== step.sourceKey) return replaced
  return { root, source }
}

/** The step's message came while another run has the step (a turn handed over): it is delivered again later. */
export class StepTakenError extends Error {
  constructor() {
    super('the step is running in a turn handed over to it')
  }
}

export interface RunOptions {
  /** Run in the turn another user's step gave (not its own message): only a step that never ran is taken. */
  readonly handedOver?: boolean
  /**
   * Between outputs, a first run of a part (a PDF's pages) ends early when its user has a backlog and another user
   * waits. The step keeps the outputs it made; the rest of its part becomes a new step at the back of the line.
   */
  readonly mayPause?: boolean
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
 * retryable error when the queue should deliver it again (StepTakenError when another run has it).
 */
export async function runStep(
  deps: PipelineDeps,
  message: StepMessage,
  attempt: number,
  how: RunOptions = {},
): Promise<void> {
  const { db } = deps
  const step = await findStep(db, message.stepId)
  if (!step || step.status === 'done' || step.status === 'split' || step.status === 'failed') return
  const job = await findJob(db, step.jobId)
  if (!job || job.status === 'failed' || job.status === 'done') return
  const found = await sourcesOf(db, job, step)
  const converter = deps.engines.converter(step.converter)
  if ('reason' in found || !converter) {
    await failStep(
      deps,
      job,
      step,
      new ConversionError('reason' in found ? found.reason : `no converter named ${step.converter}`),
      found.source,
    )
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
  if (!(await claimStep(db, step.id, how.handedOver ? HANDED_OVER : attempt))) {
    if (how.handedOver) return
    if ((await findStep(db, step.id))?.status === 'running') throw new StepTakenError()
    return
  }
  // A first run has stored nothing: it may end between outputs without leaving any beyond its narrowed part.
  const isFirstRun = step.status === 'queued' && step.attempts === 0
  if (job.status === 'queued') await updateJob(db, job.id, { status: 'running' })

  const input = storedInput(deps.bucket, source)
  const options = await openOptions(deps.config, job.userId, job.options)
  // The converter sees its own settings and resources, not the whole config (secrets) nor the bucket.
  const prefixSetting = resourcePrefixSetting(converter)
  const resourcePrefix = prefixSetting && deps.config[prefixSetting]
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
    // Looked at after each output only while the user has a backlog (one query a step for everyone else).
    const mayPause =
      how.mayPause &&
      isFirstRun &&
      part !== undefined &&
      converter.plan !== undefined &&
      (await queuedSteps(db, job.userId)) > YIELD_ABOVE_STEPS
    let rest: PartRange | undefined
    for await (const output of converter.convert(input, { ...context, part })) {
      stored.push(await storeOutput(deps, job, step, source, base, output))
      if (mayPause && part && output.index + 1 < part.end && (await shouldYieldTurn(db, job.userId))) {
        rest = { start: output.index + 1, end: part.end }
        break
      }
    }
    // The source may have been deleted or replaced while the converter ran, too early for the delete or the
    // replace to see these outputs: they belong to content that is gone.
    const after = await sourcesOf(db, job, step, ' during the conversion')
    if ('reason' in after) {
      await failStep(deps, job, step, new ConversionError(after.reason), source)
      return
    }
    if (part && rest) {
      await pauseStep(
        deps,
        job,
        step,
        stored,
        { start: part.start, end: rest.start },
        newStep(job.id, source, converter, Date.now(), rest),
      )
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

/** The steps that go on from these outputs toward the job's target. */
function followingSteps(job: JobRow, outputs: FileRow[]): StepRow[] {
  return outputs.flatMap((file) => {
    const next = nextConverter(file, job.target)
    return next ? [newStep(job.id, file, next)] : []
  })
}

/**
 * Ends a step before its part's end: in one batch it keeps the outputs made (its part narrowed to them) and the
 * rest of the part becomes a new step, which goes to the back of the line.
 */
async function pauseStep(
  deps: PipelineDeps,
  job: JobRow,
  step: StepRow,
  stored: FileRow[],
  made: PartRange,
  rest: StepRow,
): Promise<void> {
  const queued = await ensureSteps(deps.db, followingSteps(job, stored))
  await pauseStepAt(
    deps.db,
    step.id,
    made,
    stored.map((file) => file.id),
    rest,
  )
  await enqueueSteps(deps.queue, queued)
  await requeueStep(deps.queue, { kind: 'step', jobId: rest.jobId, stepId: rest.id }, YIELD_DELAY_SECONDS)
}

/** The step is done with these outputs (its own, or an earlier job's): the chain goes on from each. */
async function finishStep(deps: PipelineDeps, job: JobRow, step: StepRow, outputs: FileRow[]): Promise<void> {
  const queued = await ensureSteps(deps.db, followingSteps(job, outputs))
  await updateStep(deps.db, step.id, { status: 'done', outputIds: outputs.map((file) => file.id) })
  await enqueueSteps(deps.queue, queued)
  if (await finishJobIfDone(deps.db, job.id)) deps.waitUntil(notifyJobFinished(deps, job.id))
}

function describeRetry(error: unknown): string {
  return error instanceof ConversionError ? `retrying: ${error.message}` : 'retrying after an internal error'
}

/** Stores one output, its bytes held against the owner's quota: passing it fails the step for good (413). */
async function storeOutput(
  deps: PipelineDeps,
  job: JobRow,
  step: StepRow,
  source: FileRow,
  base: string,
  output: ConversionOutput,
): Promise<FileRow> {
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
    if (error instanceof ApiError && (error.code === 'QUOTA_EXCEEDED' || error.code === 'FILE_TOO_LARGE'))
      throw new ConversionError(error.message, { code: error.code, cause: error })
    throw error
  }
}

async function failStep(
  deps: PipelineDeps,
  job: JobRow,
  step: StepRow,
  error: ConversionError,
  source?: FileRow,
): Promise<void> {
  // The job keeps the public message; the cause (a server's address, a setting) is logged under the job id.
  if (error.cause !== undefined)
    console.warn(JSON.stringify({ level: 'warn', job: job.id, step: step.id, error: describeError(error) }))
  const reason = `${step.converter} on "${source?.name ?? step.sourceFileId}" failed: ${error.message}`
  // Whatever any delivery of the step stored; objects by key prefix too, when the source says where they are.
  await deleteStepOutputs(deps.db, deps.bucket, step.id, source && objectKey(job.userId, `${step.id}-`, source.prefix))
  await updateStep(deps.db, step.id, { status: 'failed', error: error.message })
  // Several steps of a job can fail (parts run in parallel, a message redelivered): the job fails, and says so, once.
  if (await failJob(deps.db, job, reason, error.code)) deps.waitUntil(notifyJobFinished(deps, job.id))
}

/** Retry delays grow with the attempt: 2, 4, 8, 16 … seconds, at most 5 minutes. */
export function retryDelaySeconds(attempt: number): number {
  return Math.min(300, 2 ** Math.max(1, attempt))
}

/** How long a step that let another user go first waits before it is delivered again. */
const YIELD_DELAY_SECONDS = 1
/**
 * How long a step's message waits when a handed-over turn runs the step. Its next delivery takes over a run that
 * died.
 */
const TAKEN_RETRY_SECONDS = 30

/**
 * A step whose user has more steps in line than another user who is waiting gives its turn. It is sent again as a
 * new message after YIELD_DELAY_SECONDS (its attempts are not spent) and this one is acknowledged. The waiting
 * user's oldest step that never ran is run at once in its place, so that user's first answer does not wait for the
 * messages in line before its own. A step already started (its delivery ended without settling it) never yields.
 * Answers whether it gave its turn.
 */
async function gaveTurn(deps: PipelineDeps, message: Message<StepMessage>): Promise<boolean> {
  const step = await stepOwnerAndStatus(deps.db, message.body.stepId)
  if (step?.status !== 'queued') return false
  const turn = await turnToGive(deps.db, step.userId)
  if (!turn) return false
  await requeueStep(deps.queue, message.body, YIELD_DELAY_SECONDS)
  message.ack()
  if (turn.step) await runHandedOver(deps, turn.step)
  return true
}

/** Runs a step in a turn given to it. Its failures are its own message's to retry: logged here, never thrown. */
async function runHandedOver(deps: PipelineDeps, step: StepMessage): Promise<void> {
  try {
    await runStep(deps, step, 1, { handedOver: true })
  } catch (error) {
    console.warn(
      JSON.stringify({
        level: 'warn',
        job: step.jobId,
        step: step.stepId,
        handedOver: true,
        error: describeError(error),
      }),
    )
  }
}

export async function consumeConversions(messages: readonly Message<StepMessage>[], deps: PipelineDeps): Promise<void> {
  for (const message of messages) {
    try {
      if (await gaveTurn(deps, message)) continue
      await runStep(deps, message.body, message.attempts, { mayPause: true })
      message.ack()
    } catch (error) {
      if (error instanceof StepTakenError) {
        message.retry({ delaySeconds: TAKEN_RETRY_SECONDS })
        continue
      }
      if (error instanceof WaitingForPeer) {
        try {
          await requeueStep(deps.queue, message.body, WAIT_FOR_PEER_SECONDS)
          message.ack()
        } catch {
          message.retry({ delaySeconds: WAIT_FOR_PEER_SECONDS })
        }
        continue
      }
      console.warn(
        JSON.stringify({
          level: 'warn',
          job: message.body.jobId,
          step: message.body.stepId,
          attempt: message.attempts,
          error: describeError(error),
        }),
      )
      message.retry({ delaySeconds: retryDelaySeconds(message.attempts) })
    }
  }
}

/** Messages that ran out of retries: their step and job fail with the last reason. */
export async function consumeDeadLetters(messages: readonly Message<StepMessage>[], deps: PipelineDeps): Promise<void> {
  for (const message of messages) {
    const step = await findStep(deps.db, message.body.stepId)
    const job = step && (await findJob(deps.db, step.jobId))
    if (step && job && step.status !== 'done' && step.status !== 'split') {
      const last = step.error?.replace(/^retrying: /, '') ?? 'unknown error'
      const source = await findFileOf(deps.db, job.userId, step.sourceFileId)
      // The step counts its deliveries; the dead-letter message's own count starts again at 1.
      const attempts = Math.max(step.attempts, message.attempts)
      await failStep(
        deps,
        job,
        step,
        new ConversionError(`gave up after ${attempts} attempts: ${last}`, { code: 'CONVERTER_UNAVAILABLE' }),
        source,
      )
    }
    message.ack()
  }
}
