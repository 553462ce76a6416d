// A PDF's fan-out past one sendBatch (issue 29: "a 101-part fan-out with CONVERT_PAGES_PER_STEP=1 converting").
// Cloudflare Queues: sendBatch takes "up to 100 messages" a call (developers.cloudflare.com/queues/platform/limits),
// and Miniflare refuses more, as Cloudflare does. The job is started with its first message held; its planning step
// runs here with CONVERT_PAGES_PER_STEP=1 and sends one part a page to the real local queue, whose consumer renders
// them with the Worker's own settings.
import { env } from 'cloudflare:test'
import { expect, it } from 'vitest'
import { loadConfig } from '../../worker/config'
import { openDatabase } from '../../worker/db/client'
import { localEngines } from '../../worker/engine-workers/local'
import { findFileById } from '../../worker/files/records'
import { startJob } from '../../worker/pipeline/start'
import { runStep } from '../../worker/pipeline/step-runner'
import type { StepMessage } from '../../worker/queue'
import { signUp } from '../support/accounts'
import { uploaded } from '../support/files'
import { pollJob } from '../support/jobs'
import { buildPdf } from '../support/pdf'

it('converts a 101-page PDF at CONVERT_PAGES_PER_STEP=1: 101 parts sent in batches the queue accepts', async () => {
  const user = await signUp()
  // Page n has one black bar n points from the left edge.
  const pages = Array.from({ length: 101 }, (_, i) => ({
    width: 120,
    height: 20,
    content: `0 0 0 rg ${i} 0 2 20 re f`,
  }))
  const pdf = await uploaded(user, 'Hundred.pdf', buildPdf(pages))
  const db = openDatabase(env.DB)
  const config = { ...loadConfig(env), CONVERT_PAGES_PER_STEP: 1 }
  const held: StepMessage[] = []
  const holding = {
    async sendBatch(messages: Iterable<MessageSendRequest<StepMessage>>) {
      for (const message of messages) held.push(message.body)
    },
  } as unknown as Queue<StepMessage>

  const job = await startJob({ db, queue: holding }, config, (await findFileById(db, pdf._id))!)
  expect(held).toHaveLength(1)
  const deps = { db, bucket: env.BUCKET, queue: env.CONVERSIONS, config, engines: localEngines, waitUntil: () => {} }
  await runStep(deps, held[0]!, 1)

  const done = await pollJob(job.id, user, undefined, { timeoutMs: 600_000 })
  expect(done.status).toBe('done')
  expect(done.steps.filter((step) => step.part !== null)).toHaveLength(101)
  expect(done.files).toHaveLength(101)
  expect(done.files.map((file) => file.name).slice(-2)).toEqual(['Hundred (100 of 101)', 'Hundred (101 of 101)'])
}, 900_000)
