// A step whose retries ran out reaches the dead-letter queue; its consumer fails the step and the job with the
// last reason, and later deliveries of the step change nothing.
import { beforeAll, describe, expect, it } from 'vitest'
import { callJson } from '../support/api'
import { signUp, type TestUser } from '../support/accounts'
import { registerChainConverters } from '../support/chain-converters'
import { pollJob } from '../support/jobs'
import { uploaded } from '../support/files'
import { CONVERSIONS_QUEUE, DEAD_LETTER_QUEUE, deliver } from '../support/queue'

let user: TestUser
beforeAll(async () => {
  registerChainConverters()
  user = await signUp()
})

describe('dead letters', () => {
  it('fail the step and the job with the last transient reason', async () => {
    const file = await uploaded(user, 'never.tbusy', 'x')
    const started = await callJson('POST', `/files/${file._id}/convert`, {
      token: user.token,
      headers: { prefer: 'respond-async' },
    })
    const jobId = started.body._id
    const stepId = started.body.steps[0]!._id
    // Let the real queue deliver it once (it fails and is retried later).
    await pollJob(jobId, user, (job) => (job.steps[0]?.attempts ?? 0) >= 1)
    const deadLetter = await deliver(DEAD_LETTER_QUEUE, [{ body: { kind: 'step', jobId, stepId }, attempts: 6 }])
    expect(deadLetter).toMatchObject({ outcome: 'ok', explicitAcks: ['m1'], retryMessages: [] })
    const job = await callJson('GET', `/jobs/${jobId}`, { token: user.token })
    expect(job.body).toMatchObject({
      status: 'failed',
      error: 'test-stubborn on "never.tbusy" failed: gave up after 6 attempts: the engine is busy',
      steps: [{ status: 'failed' }],
    })
    // A late redelivery of the step is skipped (and acked): the job stays failed, nothing is created.
    const late = await deliver(CONVERSIONS_QUEUE, [{ body: { kind: 'step', jobId, stepId }, attempts: 7 }])
    expect(late).toMatchObject({ outcome: 'ok', explicitAcks: ['m1'], retryMessages: [] })
    expect((await callJson('GET', `/jobs/${jobId}`, { token: user.token })).body).toMatchObject({
      status: 'failed',
      files: [],
    })
  })
})
