// Jobs and steps in D1: creating a job with its first step, the caller-scoped lookups, the job's public view
// with its files in chain order, and the bookkeeping the consumer does as steps finish.
import { z } from '@hono/zod-openapi'
import { and, asc, desc, eq, gt, gte, inArray, isNull, lt, ne, or, type SQL, sql, type SQLWrapper } from 'drizzle-orm'
import { isUniqueViolation } from '../auth/users'
import type { Config } from '../config'
import type { ConversionErrorCode, ConverterInfo, OptionValues as JobOptions, PartRange } from '../converters/converter'
import { OPTION_MAX_CHARS, SECRET_OPTIONS } from '../converters/registry'
import type { Database } from '../db/client'
import { insertForUser, previousChanged } from '../db/guarded'
import { newId } from '../db/ids'
import { jobs, jobSteps, users } from '../db/schema'
import { iso } from '../db/times'
import { ApiError, ERROR_CODES, ERRORS } from '../errors'
import { publicOptions } from './job-secrets'
import {
  FileResponseSchema,
  filesOfJob,
  filesOfJobs,
  newestOutputOfSteps,
  toFileResponse,
  treeIds,
  type FileLinks,
  type FileResponse,
  type FileRow,
} from '../files/records'
import { signToken } from '../files/signed-url'
import type { StepMessage } from '../queue'

export type JobRow = typeof jobs.$inferSelect
export type StepRow = typeof jobSteps.$inferSelect

/** How long a job's events_url opens its stream: long enough to open it, short enough that a leaked one soon ends. */
export const EVENTS_URL_TTL_SECONDS = 600

export const JobOptionsSchema = z.record(
  z.string().max(64),
  z.union([z.string().max(OPTION_MAX_CHARS), z.number(), z.boolean()]),
)

export const StepSchema = z
  .object({
    _id: z.string(),
    converter: z.string(),
    source_file: z.string(),
    part: z.object({ start: z.number().int(), end: z.number().int() }).nullable(),
    status: z.enum(['queued', 'running', 'done', 'failed', 'split']),
    attempts: z.number().int(),
    error: z.string().nullable(),
    outputs: z.array(z.string()),
  })
  .openapi('JobStep')

export const JobSchema = z
  .object({
    _id: z.string(),
    file_id: z.string(),
    status: z.enum(['queued', 'running', 'done', 'failed']),
    error: z.string().nullable(),
    error_code: z
      .enum(ERROR_CODES)
      .nullable()
      .openapi({ description: 'the code of the failure (the error table), chosen by the converter that failed' }),
    to: z
      .string()
      .nullable()
      .openapi({ description: 'the extension the chain ends at, when the request named one (`to`)' }),
    options: JobOptionsSchema,
    steps: z.array(StepSchema),
    files: z.array(FileResponseSchema).openapi({ description: 'every file the job created, in chain order' }),
    created_at: z.string(),
    updated_at: z.string(),
    finished_at: z.string().nullable(),
    events_url: z.string().openapi({
      description: `GET /jobs/:id/events for this job only, signed (?token=) so that a browser's EventSource opens it without headers; good for ${EVENTS_URL_TTL_SECONDS / 60} minutes, and ended by a password reset or logout everywhere`,
    }),
  })
  .openapi('Job')

export type JobView = z.infer<typeof JobSchema>

/** The job's options with its secrets (SECRET_OPTIONS) removed, in SQL: wiped as the job ends. */
const withoutSecrets = sql`json_remove(${jobs.options}, ${sql.join(
  SECRET_OPTIONS.map((name) => sql`${`$.${name}`}`),
  sql`, `,
)})`

export const jobNotFound = () => new ApiError('JOB_NOT_FOUND')

/** A failed job as the API answers it: the code its converter failed with, and the reason. */
export function jobFailure(job: JobRow): ApiError {
  return new ApiError(job.errorCode ?? 'CONVERSION_FAILED', {
    message: job.error ?? undefined,
    details: { job: job.id },
  })
}

/** A job by id alone, for the consumer and the webhooks: a queue message or a finished step names it. */
export function findJob(db: Database, id: string): Promise<JobRow | undefined> {
  return db.query.jobs.findFirst({ where: eq(jobs.id, id) })
}

/** A step by id alone, as a queue message names it. */
export function findStep(db: Database, id: string): Promise<StepRow | undefined> {
  return db.query.jobSteps.findFirst({ where: eq(jobSteps.id, id) })
}

/** The user a job belongs to, if the job still exists. */
export async function jobOwnerId(db: Database, id: string): Promise<string | undefined> {
  return (await db.query.jobs.findFirst({ where: eq(jobs.id, id), columns: { userId: true } }))?.userId
}

/** A job with its owner's security stamp (a signed events_url is checked against it), in one query. */
/**
 * A job by id with its owner's security stamp and the rows of its view, in one round trip (a signed events URL: the
 * owner is not known before). The view's rows are the owner's.
 */
export async function jobViewWithOwnerStamp(db: Database, id: string) {
  const [, steps, made] = jobViewQueries(db, db.select({ userId: jobs.userId }).from(jobs).where(eq(jobs.id, id)), id)
  const [[found], stepRows, madeRows] = await db.batch([
    // Apart, not joined: in a batch D1 answers rows as objects, where the user's `id` would overwrite the job's.
    db
      .select({
        job: jobs,
        securityStamp: sql<string>`(select ${users.securityStamp} from ${users} where ${users.id} = ${jobs.userId})`.as(
          'owner_stamp',
        ),
      })
      .from(jobs)
      .where(eq(jobs.id, id))
      .limit(1),
    steps,
    made,
  ])
  return { found, steps: stepRows, made: madeRows }
}

/** The newest job on a file's current content (a replace updates the record; older jobs converted the old bytes). */
export function latestJobOfContent(
  db: Database,
  file: Pick<FileRow, 'id' | 'userId' | 'updatedAt'>,
): Promise<JobRow | undefined> {
  return db.query.jobs.findFirst({
    where: and(eq(jobs.fileId, file.id), eq(jobs.userId, file.userId), gte(jobs.createdAt, file.updatedAt)),
    orderBy: desc(jobs.id),
  })
}

export async function findOwnedJob(db: Database, userId: string, id: string): Promise<JobRow> {
  const job = await db.query.jobs.findFirst({ where: and(eq(jobs.id, id), eq(jobs.userId, userId)) })
  if (!job) throw jobNotFound()
  return job
}

const JOBS_OF_FILE_MAX = 100

export function jobsOfFile(db: Database, userId: string, fileId: string) {
  return db.query.jobs.findMany({
    where: and(eq(jobs.userId, userId), eq(jobs.fileId, fileId)),
    orderBy: desc(jobs.id),
    limit: JOBS_OF_FILE_MAX,
  })
}

/** The query of the steps `where` selects, in the order they were made. */
const stepsInOrder = (db: Database, where: SQL | undefined) =>
  db.query.jobSteps.findMany({ where, orderBy: [jobSteps.createdAt, jobSteps.id] })

/** The queries of a job's view: the job (the caller's), its steps and the files it made, for one batch. */
export function jobViewQueries(db: Database, userId: string | SQLWrapper, id: string) {
  return [
    db
      .select()
      .from(jobs)
      .where(and(eq(jobs.id, id), eq(jobs.userId, userId)))
      .limit(1),
    stepsInOrder(db, eq(jobSteps.jobId, id)),
    filesOfJob(db, userId, id),
  ] as const
}

/**
 * The queries of the views of a file's jobs (the caller's, newest first): jobs, their steps, their files, for one
 * batch.
 */
export function fileJobsQueries(db: Database, userId: string, fileId: string) {
  const ids = db
    .select({ id: jobs.id })
    .from(jobs)
    .where(and(eq(jobs.userId, userId), eq(jobs.fileId, fileId)))
    .orderBy(desc(jobs.id))
    .limit(JOBS_OF_FILE_MAX)
  return [
    jobsOfFile(db, userId, fileId),
    db.query.jobSteps.findMany({ where: inArray(jobSteps.jobId, ids), orderBy: [jobSteps.createdAt, jobSteps.id] }),
    filesOfJobs(db, userId, ids),
  ] as const
}

/**
 * The queries of the jobs of a file and of every file converted from it (the caller's, newest first, at most
 * JOBS_OF_FILE_MAX) and their steps, for one batch (GET /files/:id/tree).
 */
export function treeJobsQueries(db: Database, userId: string, rootId: string) {
  const ids = db
    .select({ id: jobs.id })
    .from(jobs)
    .where(and(eq(jobs.userId, userId), sql`${jobs.fileId} IN (${treeIds(userId, rootId)})`))
    .orderBy(desc(jobs.id))
    .limit(JOBS_OF_FILE_MAX)
  return jobsWithSteps(db, ids)
}

/** The queries of a user's jobs, newest first (a page before `before`), and their steps, for one batch. */
export function userJobsQueries(db: Database, userId: string, limit: number, before?: string) {
  const ids = db
    .select({ id: jobs.id })
    .from(jobs)
    .where(and(eq(jobs.userId, userId), before ? lt(jobs.id, before) : undefined))
    .orderBy(desc(jobs.id))
    .limit(limit)
  return jobsWithSteps(db, ids)
}

/** The jobs a subquery selects (newest first) and their steps, for one batch. */
function jobsWithSteps(db: Database, ids: SQLWrapper) {
  return [
    db.select().from(jobs).where(inArray(jobs.id, ids)).orderBy(desc(jobs.id)),
    db.query.jobSteps.findMany({ where: inArray(jobSteps.jobId, ids), orderBy: [jobSteps.createdAt, jobSteps.id] }),
  ] as const
}

/** The options with their keys sorted: equal options are equal JSON, which the one-active-job index compares. */
const sortedOptions = (options: JobOptions = {}): JobOptions =>
  Object.fromEntries(Object.entries(options).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))

/**
 * Conversion steps one user may have waiting or running at once, like the previews' 20 (worker/previews/make.ts):
 * past it, a new conversion is refused with 429 and Retry-After, so one account cannot fill the queue every user
 * shares. A chain's later steps and a PDF's pages come from steps already counted and are not refused.
 */
export const STEPS_MAX_QUEUED_PER_USER = 20
export const STEPS_RETRY_AFTER_SECONDS = 10

/** The query of the user's steps queued or running, across their unfinished jobs: a batch's read, or a subquery. */
function queuedStepsQuery(db: Database, userId: string) {
  return db
    .select({ count: sql<number>`count(*)` })
    .from(jobSteps)
    .innerJoin(jobs, eq(jobs.id, jobSteps.jobId))
    .where(
      and(
        eq(jobs.userId, userId),
        inArray(jobs.status, ['queued', 'running']),
        inArray(jobSteps.status, ['queued', 'running']),
      ),
    )
}

/** The user's steps queued or running, across their unfinished jobs. */
export async function queuedSteps(db: Database, userId: string): Promise<number> {
  const [row] = await queuedStepsQuery(db, userId)
  return row?.count ?? 0
}

/** True in a WHERE clause while the user has fewer than STEPS_MAX_QUEUED_PER_USER steps queued or running: a write
 * guarded by it is counted in its own statement, so requests racing each other cannot pass the bound together. */
const isWithinShare = (db: Database, userId: string) =>
  sql`(${queuedStepsQuery(db, userId)}) < ${STEPS_MAX_QUEUED_PER_USER}`

const tooManySteps = () =>
  new ApiError('RATE_LIMITED', {
    message: `${STEPS_MAX_QUEUED_PER_USER} of your conversion steps are queued or running: ask again in ${STEPS_RETRY_AFTER_SECONDS} s`,
    headers: { 'retry-after': String(STEPS_RETRY_AFTER_SECONDS) },
    details: { retry_after: STEPS_RETRY_AFTER_SECONDS },
  })

/** Steps a user may have queued or running before their steps take turns with other users' (a chain, a PDF's pages). */
export const YIELD_ABOVE_STEPS = 4

/** Each user's active steps (queued or running, of unfinished jobs): how many, how many wait, how many never ran. */
async function activeStepsByUser(db: Database) {
  return db
    .select({
      userId: jobs.userId,
      steps: sql<number>`count(*)`,
      waiting: sql<number>`sum(${jobSteps.status} = 'queued')`,
      fresh: sql<number>`sum(${jobSteps.status} = 'queued' and ${jobSteps.attempts} = 0)`,
    })
    .from(jobSteps)
    .innerJoin(jobs, eq(jobs.id, jobSteps.jobId))
    .where(and(inArray(jobs.status, ['queued', 'running']), inArray(jobSteps.status, ['queued', 'running'])))
    .groupBy(jobs.userId)
}

type ActiveSteps = Awaited<ReturnType<typeof activeStepsByUser>>

/**
 * The users a step of `userId` gives way to, when this user has a backlog: others with a step waiting and fewer
 * active steps.
 */
function usersAhead(active: ActiveSteps, userId: string): ActiveSteps {
  const mine = active.find((row) => row.userId === userId)?.steps ?? 0
  // A few steps of one user (a chain, a PDF's pages) run as they come; only a backlog takes turns.
  if (mine <= YIELD_ABOVE_STEPS) return []
  return active.filter((row) => row.userId !== userId && row.waiting > 0 && row.steps < mine)
}

/**
 * Whether a step of `userId` should let another user's waiting step go first: this user has more than
 * YIELD_ABOVE_STEPS steps queued or running, and some other user has a step waiting and fewer of them. So a user's
 * backlog takes turns with everyone else's first answers instead of standing before them.
 */
export async function shouldYieldTurn(db: Database, userId: string): Promise<boolean> {
  return usersAhead(await activeStepsByUser(db), userId).length > 0
}

/**
 * The turn a step of `userId` gives, if it must give one: the step to run in its place, the oldest never-run step of
 * the waiting user with the fewest active steps. Only a user's first answers are run in another's turn (a user with
 * at most YIELD_ABOVE_STEPS active steps); steps waiting to be retried keep their backoff. None of them: the step
 * only goes to the back of the line.
 */
export async function turnToGive(db: Database, userId: string): Promise<{ step?: StepMessage } | undefined> {
  const ahead = usersAhead(await activeStepsByUser(db), userId)
  if (ahead.length === 0) return undefined
  const lightest = ahead
    .filter((row) => row.fresh > 0 && row.steps <= YIELD_ABOVE_STEPS)
    .sort((a, b) => a.steps - b.steps)[0]
  if (!lightest) return {}
  const [step] = await db
    .select({ jobId: jobSteps.jobId, stepId: jobSteps.id })
    .from(jobSteps)
    .innerJoin(jobs, eq(jobs.id, jobSteps.jobId))
    .where(
      and(
        eq(jobs.userId, lightest.userId),
        inArray(jobs.status, ['queued', 'running']),
        eq(jobSteps.status, 'queued'),
        eq(jobSteps.attempts, 0),
      ),
    )
    .orderBy(asc(jobSteps.id))
    .limit(1)
  return { step: step && { kind: 'step', ...step } }
}

/**
 * A step's run was handed over by another user's step (runStep's `handedOver`): it counts as the step's first
 * attempt.
 */
export const HANDED_OVER = 'handed over'

/**
 * Marks the step running for one run, answering whether this run has it. Its own message's delivery takes a queued
 * step, or a running one that an earlier delivery started and ended without settling. A turn handed over takes only
 * a step that never ran, and marks it as its first attempt. So a step's message delivered while a handed-over turn
 * runs it finds it taken (and comes again); its next delivery takes it over if it is still running.
 */
export async function claimStep(db: Database, stepId: string, attempt: number | typeof HANDED_OVER): Promise<boolean> {
  const isClaimable =
    attempt === HANDED_OVER
      ? and(eq(jobSteps.status, 'queued'), eq(jobSteps.attempts, 0))
      : or(eq(jobSteps.status, 'queued'), and(eq(jobSteps.status, 'running'), lt(jobSteps.attempts, attempt)))
  const claimed = await db
    .update(jobSteps)
    .set({ status: 'running', attempts: attempt === HANDED_OVER ? 1 : attempt, error: null, updatedAt: Date.now() })
    .where(and(eq(jobSteps.id, stepId), isClaimable))
    .returning({ id: jobSteps.id })
  return claimed.length > 0
}

/**
 * Creates the job and its first step (queued), unless an equal job (same file, same content, same options) is
 * queued or running: then answers that one and no step. The caller enqueues the step it gets. One round trip:
 * - the job, guarded by the user's share when `bounded` (counted inside the INSERT, so racing requests cannot pass
 *   it together: 429 past it, nothing written);
 * - its step, guarded by the job's write;
 * - the job read back with its steps and files for the answer.
 */
export async function createJob(
  db: Database,
  file: FileRow,
  converter: ConverterInfo,
  request: { options?: JobOptions; callbackUrl?: string; target?: string; bounded?: boolean },
): Promise<{ job: JobRow; step?: StepRow; steps: StepRow[]; made: FileRow[] }> {
  const options = sortedOptions(request.options)
  const isEqualActive = and(
    eq(jobs.fileId, file.id),
    eq(jobs.sourceKey, file.key),
    eq(jobs.options, options),
    request.target ? eq(jobs.target, request.target) : isNull(jobs.target),
    inArray(jobs.status, ['queued', 'running']),
  )
  // The one-active-job index allows one such job: ours once written, else the one this request follows.
  const activeId = db.select({ id: jobs.id }).from(jobs).where(isEqualActive).limit(1)
  // Twice at most: a new id that met an existing one leaves room for another.
  for (let attempt = 0; attempt < 2; attempt++) {
    const now = Date.now()
    const job: JobRow = {
      id: newId(now),
      userId: file.userId,
      fileId: file.id,
      status: 'queued',
      options,
      callbackUrl: request.callbackUrl ?? null,
      target: request.target ?? null,
      error: null,
      errorStatus: null,
      errorCode: null,
      createdAt: now,
      updatedAt: now,
      finishedAt: null,
      sourceKey: file.key,
    }
    const step = newStep(job.id, file, converter, now)
    const [[counted], inserted, , [active], steps, made] = await db.batch([
      queuedStepsQuery(db, file.userId),
      insertForUser(db, jobs, job, file.userId, request.bounded ? isWithinShare(db, file.userId) : sql`1 = 1`)
        .onConflictDoNothing()
        .returning({ id: jobs.id }),
      insertForUser(db, jobSteps, step, file.userId),
      db.select().from(jobs).where(isEqualActive).limit(1),
      stepsInOrder(db, inArray(jobSteps.jobId, activeId)),
      filesOfJob(db, file.userId, activeId),
    ])
    if (request.bounded && (counted?.count ?? 0) >= STEPS_MAX_QUEUED_PER_USER) throw tooManySteps()
    if (inserted.length > 0) return { job, step, steps, made }
    if (active) return { job: active, steps, made }
  }
  throw new ApiError('JOB_ALREADY_RUNNING')
}

export function newStep(
  jobId: string,
  source: Pick<FileRow, 'id' | 'key'>,
  converter: ConverterInfo,
  now = Date.now(),
  part?: { start: number; end: number },
): StepRow {
  return {
    id: newId(now),
    jobId,
    sourceFileId: source.id,
    sourceKey: source.key,
    converter: converter.name,
    partStart: part?.start ?? -1,
    partEnd: part?.end ?? null,
    status: 'queued',
    attempts: 0,
    error: null,
    outputIds: [],
    createdAt: now,
    updatedAt: now,
  }
}

/**
 * Inserts steps that do not exist yet (a redelivered message creates the same steps again) and answers the
 * stored ones, so the caller enqueues exactly the steps that are still queued.
 */
export async function ensureSteps(db: Database, steps: StepRow[]): Promise<StepRow[]> {
  if (steps.length === 0) return []
  for (const step of steps) await db.insert(jobSteps).values(step).onConflictDoNothing()
  const stored = await db.query.jobSteps.findMany({ where: eq(jobSteps.jobId, steps[0]!.jobId) })
  const wanted = new Set(steps.map((step) => `${step.sourceFileId}:${step.partStart}`))
  return stored.filter((step) => wanted.has(`${step.sourceFileId}:${step.partStart}`) && step.status === 'queued')
}

/** A step converting this long ago without a word since is taken as lost: others stop waiting for it. */
const PEER_STEP_STALE_MS = 10 * 60 * 1000

/**
 * For a step of a `reusable` converter, in one round trip: the file another job's step of the same converter made
 * from the same source content (its key) with the same options, if one is done. Else whether such a step is
 * converting: this one then waits for it rather than converting the same document a second time.
 */
export async function earlierOutput(
  db: Database,
  job: JobRow,
  step: StepRow,
): Promise<{ file?: FileRow; converting: boolean }> {
  if (!step.sourceKey) return { converting: false }
  const peers = and(
    eq(jobSteps.converter, step.converter),
    eq(jobSteps.sourceFileId, step.sourceFileId),
    eq(jobSteps.sourceKey, step.sourceKey),
    ne(jobSteps.jobId, job.id),
    eq(jobs.userId, job.userId),
    eq(jobs.options, job.options),
  )
  const doneSteps = db
    .select({ id: jobSteps.id })
    .from(jobSteps)
    .innerJoin(jobs, eq(jobs.id, jobSteps.jobId))
    .where(and(eq(jobSteps.status, 'done'), peers))
  const [done, running] = await db.batch([
    newestOutputOfSteps(db, job.userId, step.sourceFileId, doneSteps),
    db
      .select({ id: jobSteps.id })
      .from(jobSteps)
      .innerJoin(jobs, eq(jobs.id, jobSteps.jobId))
      .where(and(eq(jobSteps.status, 'running'), gt(jobSteps.updatedAt, Date.now() - PEER_STEP_STALE_MS), peers))
      .limit(1),
  ])
  return { file: done[0], converting: running.length > 0 }
}

export async function updateStep(db: Database, id: string, changes: Partial<StepRow>): Promise<void> {
  await db
    .update(jobSteps)
    .set({ ...changes, updatedAt: Date.now() })
    .where(eq(jobSteps.id, id))
}

export async function updateJob(db: Database, id: string, changes: Partial<JobRow>): Promise<void> {
  await db
    .update(jobs)
    .set({ ...changes, updatedAt: Date.now() })
    .where(eq(jobs.id, id))
}

/**
 * Marks the job failed with the step's reason; the files made before stay. Answers whether this call failed it
 * (a job already failed or done is left as it is), so its job.failed event is sent once.
 */
export async function failJob(db: Database, job: JobRow, message: string, code: ConversionErrorCode): Promise<boolean> {
  const now = Date.now()
  const failed = await db
    .update(jobs)
    .set({
      status: 'failed',
      error: message,
      errorCode: code,
      errorStatus: ERRORS[code].status,
      options: withoutSecrets,
      updatedAt: now,
      finishedAt: now,
    })
    .where(and(eq(jobs.id, job.id), inArray(jobs.status, ['queued', 'running'])))
    .returning({ id: jobs.id })
  return failed.length > 0
}

/**
 * A failed job made runnable again: every step that did not finish goes back to queued. That is the failed ones and
 * those the failure left behind (their messages came after the job had failed and were settled unrun). One round
 * trip: the job reopened, guarded by the user's share (429 past it, nothing written); its steps, guarded by that
 * write; its steps and files read back for the answer. Answers the steps reopened, for the caller to enqueue.
 */
export async function reopenFailedJob(
  db: Database,
  job: JobRow,
): Promise<{ reopened: StepRow[]; steps: StepRow[]; made: FileRow[] }> {
  const isUnfinished = and(eq(jobSteps.jobId, job.id), inArray(jobSteps.status, ['queued', 'running', 'failed']))
  const now = Date.now()
  try {
    const [[counted], reopenedJob, reopened, steps, made] = await db.batch([
      queuedStepsQuery(db, job.userId),
      db
        .update(jobs)
        .set({ status: 'running', error: null, errorCode: null, errorStatus: null, finishedAt: null, updatedAt: now })
        .where(and(eq(jobs.id, job.id), isWithinShare(db, job.userId)))
        .returning({ id: jobs.id }),
      db
        .update(jobSteps)
        .set({ status: 'queued', error: null, updatedAt: now })
        .where(and(isUnfinished, previousChanged))
        .returning(),
      stepsInOrder(db, eq(jobSteps.jobId, job.id)),
      filesOfJob(db, job.userId, job.id),
    ])
    if ((counted?.count ?? 0) >= STEPS_MAX_QUEUED_PER_USER) throw tooManySteps()
    if (reopenedJob.length === 0) throw jobNotFound()
    return { reopened, steps, made }
  } catch (error) {
    if (isUniqueViolation(error)) throw new ApiError('JOB_ALREADY_RUNNING', { cause: error })
    throw error
  }
}

/** Done once no step is queued or running (and none failed). Answers whether this call finished it. */
export async function finishJobIfDone(db: Database, jobId: string): Promise<boolean> {
  const open = await db
    .select({ n: sql<number>`count(*)` })
    .from(jobSteps)
    .where(and(eq(jobSteps.jobId, jobId), inArray(jobSteps.status, ['queued', 'running', 'failed'])))
  if ((open[0]?.n ?? 0) > 0) return false
  const now = Date.now()
  const finished = await db
    .update(jobs)
    .set({ status: 'done', options: withoutSecrets, updatedAt: now, finishedAt: now })
    .where(and(eq(jobs.id, jobId), inArray(jobs.status, ['queued', 'running'])))
    .returning({ id: jobs.id })
  return finished.length > 0
}

/** The files a job made, in chain order: level by level from the source, each level in output order. */
export async function jobFiles(db: Database, job: JobRow): Promise<FileRow[]> {
  return inChainOrder(job, await filesOfJob(db, job.userId, job.id))
}

function inChainOrder(job: JobRow, made: FileRow[]): FileRow[] {
  const byParent = new Map<string, FileRow[]>()
  for (const file of made) byParent.set(file.parentId ?? '', [...(byParent.get(file.parentId ?? '') ?? []), file])
  const ordered: FileRow[] = []
  let level = [job.fileId]
  while (level.length > 0) {
    const next: string[] = []
    for (const parent of level) {
      const kids = (byParent.get(parent) ?? []).sort(
        (a, b) => (a.partIndex ?? 0) - (b.partIndex ?? 0) || a.id.localeCompare(b.id),
      )
      ordered.push(...kids)
      next.push(...kids.map((kid) => kid.id))
    }
    level = next
  }
  return ordered
}

export async function jobView(db: Database, config: Config, links: FileLinks, job: JobRow): Promise<JobView> {
  const [, steps, made] = jobViewQueries(db, job.userId, job.id)
  const [stepRows, madeRows] = await db.batch([steps, made])
  return shapeJobView(config, links, job, stepRows, madeRows)
}

/** The view of a job from its rows (jobViewQueries or fileJobsQueries): the files it made are put in chain order. */
export async function shapeJobView(
  config: Config,
  links: FileLinks,
  job: JobRow,
  steps: StepRow[],
  madeFiles: FileRow[],
): Promise<JobView> {
  const made = inChainOrder(job, madeFiles)
  const { created_at, updated_at, finished_at, ...summary } = toJobSummary(job, steps)
  return {
    ...summary,
    files: await Promise.all(made.map((file) => toFileResponse(file, config, links))),
    created_at,
    updated_at,
    finished_at,
    events_url: `${links.origin}/jobs/${job.id}/events?token=${await signToken(config, 'job events', job.id, { id: job.userId, securityStamp: links.securityStamp }, EVENTS_URL_TTL_SECONDS)}`,
  }
}

export const JobSummarySchema = JobSchema.omit({ files: true, events_url: true }).openapi('JobSummary')

/**
 * A job without its files and signed events link: what an admin sees of another user's job
 * (worker/admin/routes.ts).
 */
export function toJobSummary(job: JobRow, steps: StepRow[]): z.infer<typeof JobSummarySchema> {
  return {
    _id: job.id,
    file_id: job.fileId,
    status: job.status,
    error: job.error,
    error_code: job.status === 'failed' ? (job.errorCode ?? 'CONVERSION_FAILED') : null,
    to: job.target,
    options: publicOptions(job.options),
    steps: steps.map((step) => ({
      _id: step.id,
      converter: step.converter,
      source_file: step.sourceFileId,
      part: step.partStart < 0 ? null : { start: step.partStart, end: step.partEnd ?? step.partStart },
      status: step.status,
      attempts: step.attempts,
      error: step.error,
      outputs: step.outputIds,
    })),
    created_at: iso(job.createdAt),
    updated_at: iso(job.updatedAt),
    finished_at: job.finishedAt === null ? null : iso(job.finishedAt),
  }
}

export type { FileResponse }

/** A step's owner and status (the turn it may give), or undefined when it is gone. */
export async function stepOwnerAndStatus(
  db: Database,
  stepId: string,
): Promise<{ userId: string; status: StepRow['status'] } | undefined> {
  const [step] = await db
    .select({ userId: jobs.userId, status: jobSteps.status })
    .from(jobSteps)
    .innerJoin(jobs, eq(jobs.id, jobSteps.jobId))
    .where(eq(jobSteps.id, stepId))
    .limit(1)
  return step
}

/**
 * Ends a step before its part's end, in one batch: the step keeps the outputs made (its part narrowed to them) and
 * the rest of its part becomes a new step.
 */
export async function pauseStepAt(
  db: Database,
  stepId: string,
  made: PartRange,
  outputIds: string[],
  rest: StepRow,
): Promise<void> {
  await db.batch([
    db.insert(jobSteps).values(rest).onConflictDoNothing(),
    db
      .update(jobSteps)
      .set({ status: 'done', partStart: made.start, partEnd: made.end, outputIds, updatedAt: Date.now() })
      .where(eq(jobSteps.id, stepId)),
  ])
}
