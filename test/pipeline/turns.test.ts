// A backlog takes turns (issue 31: "one user starves everyone"): a step of a user with many steps in line gives its
// turn to a waiting user's first step, and a part of many pages ends between pages when another user waits. The
// consumer is driven here message by message, in the order a FIFO queue would deliver them (the flood's messages
// first), with a queue that records what is sent again; the steps are made without queue messages, so only this
// test delivers them. Counts and order are asserted, never timings.
import { env } from 'cloudflare:test'
import { beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../worker/config'
import { defineConverter, type Converter } from '../../worker/converters/converter'
import { converterNamed, registerConverter } from '../../worker/converters/registry'
import { openDatabase } from '../../worker/db/client'
import { localEngines } from '../../worker/engine-workers/local'
import { findOwnedFile } from '../../worker/files/records'
import { consumeConversions, type PipelineDeps } from '../../worker/pipeline/step-runner'
import { claimStep, createJob, HANDED_OVER, turnToGive } from '../../worker/pipeline/jobs'
import type { StepMessage } from '../../worker/queue'
import { callJson } from '../support/api'
import { CONVERSIONS_QUEUE, type Delivery, messageBatch, settled } from '../support/queue'
import { signUp, type TestUser } from '../support/accounts'
import { uploaded } from '../support/files'

/** What the turn converter ran, in order: the job and the output index. */
const ran: Array<{ jobId: string; index: number }> = []
/** Called by the turn converter after its first output of a job is asked for (the test acts mid-step). */
const during = { firstOutput: async (_jobId: string) => {} }

/** One output per byte of its input, planned as one part: a page-like step the pipeline may pause between outputs. */
const turns = defineConverter({
  name: 'test-turns',
  from: ['.tturn'],
  to: '.tturned',
  async plan(input) {
    const total = (await input.bytes(1024)).length
    return { total, parts: [{ start: 0, end: total }] }
  },
  async *convert(input, ctx) {
    const bytes = await input.bytes(1024)
    const { start, end } = ctx.part ?? { start: 0, end: bytes.length }
    for (let index = start; index < end; index++) {
      ran.push({ jobId: ctx.jobId, index })
      if (index === 0) await during.firstOutput(ctx.jobId)
      yield {
        index,
        total: bytes.length,
        extension: '.tturned',
        contentType: 'text/plain',
        body: bytes.slice(index, index + 1),
      }
    }
  },
})

/** The pipeline with a queue that records what is sent (nothing reaches the real queue). */
function recordingDeps(): PipelineDeps & { sent: Array<{ body: StepMessage; delaySeconds?: number }> } {
  const sent: Array<{ body: StepMessage; delaySeconds?: number }> = []
  const queue = {
    async send(body: StepMessage, options?: QueueSendOptions) {
      sent.push({ body, delaySeconds: options?.delaySeconds })
    },
    async sendBatch(messages: Iterable<MessageSendRequest<StepMessage>>) {
      for (const { body, delaySeconds } of messages) sent.push({ body, delaySeconds })
    },
  } as unknown as Queue<StepMessage>
  return {
    db: openDatabase(env.DB),
    bucket: env.BUCKET,
    queue,
    config: loadConfig(env),
    engines: localEngines,
    waitUntil: () => {},
    sent,
  }
}

/** A job of `user` on a new file with `content`, its first step written and never sent. */
async function unsentJob(deps: PipelineDeps, user: TestUser, name: string, content: string): Promise<StepMessage> {
  const file = await uploaded(user, name, content)
  const { job, step } = await createJob(deps.db, await findOwnedFile(deps.db, user.id, file._id), turns, {})
  return { kind: 'step', jobId: job.id, stepId: step!.id }
}

/** Runs one batch through the consumer, as the queue delivers it, and answers what it acked and retried. */
async function consume(deps: PipelineDeps, ...deliveries: Delivery<StepMessage>[]) {
  const batch = messageBatch(CONVERSIONS_QUEUE, deliveries)
  await consumeConversions(batch.messages, deps)
  return settled(batch)
}

const jobOf = (user: TestUser, id: string) => callJson('GET', `/jobs/${id}`, { token: user.token })

beforeAll(() => {
  if (!converterNamed(turns.name)) registerConverter(turns as Converter)
})

describe('a backlog takes turns', { timeout: 180_000 }, () => {
  it("runs the other user's step before the flooder's next one, whatever the order of their messages", async () => {
    const deps = recordingDeps()
    const flooder = await signUp()
    const other = await signUp()
    const flood: StepMessage[] = []
    for (let i = 0; i < 21; i++) flood.push(await unsentJob(deps, flooder, `flood-${i}.tturn`, 'f'))
    const mine = await unsentJob(deps, other, 'mine.tturn', 'm')
    ran.length = 0

    // The flood's first message comes first: it goes to the back of the line (sent again in 1 s, acknowledged)
    // and the other user's step runs in its turn.
    const first = await consume(deps, { body: flood[0]! })
    expect(first).toMatchObject({ explicitAcks: ['m1'], retryMessages: [] })
    expect(deps.sent).toEqual([{ body: flood[0], delaySeconds: 1 }])
    expect(ran).toEqual([{ jobId: mine.jobId, index: 0 }])
    expect((await jobOf(other, mine.jobId)).body).toMatchObject({
      status: 'done',
      steps: [{ status: 'done', attempts: 1 }],
    })
    expect((await jobOf(flooder, flood[0]!.jobId)).body).toMatchObject({
      status: 'queued',
      steps: [{ status: 'queued', attempts: 0 }],
    })

    // Its own message, delivered after its turn (twice, as at-least-once delivery may): settled, nothing run again.
    const own = await consume(deps, { body: mine }, { body: mine })
    expect(own).toMatchObject({ explicitAcks: ['m1', 'm2'], retryMessages: [] })
    expect(ran).toHaveLength(1)
    expect((await jobOf(other, mine.jobId)).body.files).toHaveLength(1)

    // No one else waits: the flood's 2nd to 21st steps run in their order, then the first one's message sent again.
    await consume(deps, ...flood.slice(1).map((body) => ({ body })), { body: flood[0]! })
    expect(ran.map((run) => run.jobId)).toEqual([
      mine.jobId,
      ...flood.slice(1).map((body) => body.jobId),
      flood[0]!.jobId,
    ])
    expect(deps.sent).toHaveLength(1)
  })

  it('ends a part between pages when another user starts waiting, and the rest of it runs later as a step of its own', async () => {
    const deps = recordingDeps()
    const flooder = await signUp()
    const other = await signUp()
    const flood: StepMessage[] = []
    for (let i = 0; i < 6; i++) flood.push(await unsentJob(deps, flooder, `pages-${i}.tturn`, 'abcd'))
    ran.length = 0
    let mine: StepMessage | undefined
    // The other user asks while the flood's first step is at its first page.
    during.firstOutput = async (jobId) => {
      if (jobId === flood[0]!.jobId && !mine) mine = await unsentJob(deps, other, 'mine.tturn', 'm')
    }
    try {
      await consume(deps, { body: flood[0]! })
    } finally {
      during.firstOutput = async () => {}
    }
    // One page made; the step keeps it (its part narrowed to page 1), and pages 2–4 are a new step at the back.
    const paused = (await jobOf(flooder, flood[0]!.jobId)).body
    expect(paused.status).toBe('running')
    expect(paused.steps).toMatchObject([
      { status: 'done', part: { start: 0, end: 1 }, outputs: [paused.files[0]!._id] },
      { status: 'queued', part: { start: 1, end: 4 }, attempts: 0 },
    ])
    expect(deps.sent).toEqual([
      { body: { kind: 'step', jobId: flood[0]!.jobId, stepId: paused.steps[1]!._id }, delaySeconds: 1 },
    ])
    expect(ran).toEqual([{ jobId: flood[0]!.jobId, index: 0 }])

    // The flood's next message gives its turn to the other user's step.
    await consume(deps, { body: flood[1]! })
    expect(ran.at(-1)).toEqual({ jobId: mine!.jobId, index: 0 })
    expect((await jobOf(other, mine!.jobId)).body.status).toBe('done')

    // The rest of the part, delivered twice: pages 2–4 once, and the job has its four pages in order.
    await consume(deps, { body: deps.sent[0]!.body }, { body: deps.sent[0]!.body })
    const done = (await jobOf(flooder, flood[0]!.jobId)).body
    expect(done.status).toBe('done')
    expect(done.files.map((file) => file.name)).toEqual([1, 2, 3, 4].map((n) => `pages-0 (${n} of 4)`))
    expect(ran.filter((run) => run.jobId === flood[0]!.jobId).map((run) => run.index)).toEqual([0, 1, 2, 3])
    // The rest of the flood runs whole (no one waits).
    await consume(deps, ...flood.slice(1).map((body) => ({ body })))
    expect((await jobOf(flooder, flood[5]!.jobId)).body.steps).toMatchObject([{ status: 'done', part: null }])
  })

  it('hands turns only to first answers: never to a user with a backlog of their own, nor to a step waiting to be retried', async () => {
    const deps = recordingDeps()
    const flooder = await signUp()
    const backlogged = await signUp()
    const retrying = await signUp()
    const flood: StepMessage[] = []
    for (let i = 0; i < 8; i++) flood.push(await unsentJob(deps, flooder, `big-${i}.tturn`, 'b'))
    const theirs: StepMessage[] = []
    for (let i = 0; i < 5; i++) theirs.push(await unsentJob(deps, backlogged, `mid-${i}.tturn`, 'm'))
    const failedOnce = await unsentJob(deps, retrying, 'again.tturn', 'r')
    await env.DB.prepare("UPDATE job_steps SET attempts = 1, error = 'retrying: the engine is busy' WHERE id = ?")
      .bind(failedOnce.stepId)
      .run()
    // The flooder gives way (both have fewer steps, one waits), but neither step is run in its turn.
    const turn = await turnToGive(deps.db, flooder.id)
    expect(turn).toBeDefined()
    expect([failedOnce.stepId, ...theirs.map((step) => step.stepId)]).not.toContain(turn?.step?.stepId)
    // Settled here, lightest first (no one gives way), so that no later test finds them waiting.
    await consume(deps, ...[failedOnce, ...theirs, ...flood].map((body) => ({ body, attempts: 2 })))
    for (const [user, step] of [
      [backlogged, theirs[4]!],
      [retrying, failedOnce],
      [flooder, flood[7]!],
    ] as const)
      expect((await jobOf(user, step.jobId)).body.status).toBe('done')
  })

  it("retries a step's message while a handed-over turn runs the step, and takes it over on the next delivery", async () => {
    const deps = recordingDeps()
    const user = await signUp()
    const step = await unsentJob(deps, user, 'taken.tturn', 'tt')
    ran.length = 0
    // A turn handed over has it (as another consumer would, mid-run).
    expect(await claimStep(deps.db, step.stepId, HANDED_OVER)).toBe(true)
    expect(await claimStep(deps.db, step.stepId, HANDED_OVER)).toBe(false)
    const first = await consume(deps, { body: step, attempts: 1 })
    expect(first).toMatchObject({ explicitAcks: [], retryMessages: [{ msgId: 'm1', delaySeconds: 30 }] })
    expect(ran).toEqual([])
    // The next delivery finds it still running: the turn's run ended without settling it, so this one runs it.
    const second = await consume(deps, { body: step, attempts: 2 })
    expect(second).toMatchObject({ explicitAcks: ['m1'], retryMessages: [] })
    expect((await jobOf(user, step.jobId)).body).toMatchObject({
      status: 'done',
      steps: [{ status: 'done', attempts: 2 }],
    })
    expect(ran).toHaveLength(2)
  })
})
