// A step whose retries ran out reaches the dead-letter queue; its consumer fails the step and the job with the
// last reason, and later deliveries of the step change nothing.
import { env } from 'cloudflare:test'
import { beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../worker/config'
import { openDatabase } from '../../worker/db/client'
import { consumeDeadLetters, runStep } from '../../worker/pipeline/step-runner'
import type { StepMessage } from '../../worker/queue'
import { callJson } from '../support/api'
import { signUp, type TestUser } from '../support/accounts'
import { registerChainConverters } from '../support/chain-converters'
import { pollJob } from '../support/jobs'
import { uploaded } from '../support/files'
import { localEngines } from '../../worker/engine-workers/local'

let user: TestUser
beforeAll(async () => {
  registerChainConverters()
  user = await signUp()
})

function deadLetterBatch(body: StepMessage, attempts: number) {
  const acked: string[] = []
  const batch = {
    queue: 'edgefloor-conversions-dlq',
    messages: [{ id: 'm1', timestamp: new Date(), body, attempts, ack: () => acked.push('m1'), retry: () => {} }],
    ackAll: () => {},
    retryAll: () => {},
  } as unknown as MessageBatch<StepMessage>
  return { batch, acked }
}

describe('dead letters', () => {
  it('fail the step and the job with the last transient reason', async () => {
    const file = await uploaded(user, 'never.tbusy', 'x')
    const started = await callJson('POST', `/files/${file._id}/convert`, {
      token: user.token,
      headers: { prefer: 'respond-async' },
    })
    const jobId = started.body._id
    const stepId = started.body.steps[0]._id
    // Let the real queue deliver it once (it fails and is retried later).
    await pollJob(jobId, user, (job) => (job.steps[0]?.attempts ?? 0) >= 1)
    const deps = {
      db: openDatabase(env.DB),
      bucket: env.BUCKET,
      queue: env.CONVERSIONS,
      config: loadConfig(env),
      engines: localEngines,
      waitUntil: () => {},
    }
    const { batch, acked } = deadLetterBatch({ kind: 'step', jobId, stepId }, 6)
    await consumeDeadLetters(batch.messages, deps)
    expect(acked).toEqual(['m1'])
    const job = await callJson('GET', `/jobs/${jobId}`, { token: user.token })
    expect(job.body).toMatchObject({
      status: 'failed',
      error: 'test-stubborn on "never.tbusy" failed: gave up after 6 attempts: the engine is busy',
      steps: [{ status: 'failed' }],
    })
    // A late redelivery of the step is skipped: the job stays failed, nothing is created.
    await runStep(deps, { kind: 'step', jobId, stepId }, 7)
    expect((await callJson('GET', `/jobs/${jobId}`, { token: user.token })).body).toMatchObject({
      status: 'failed',
      files: [],
    })
  })
})
