// A fair share of the queue for each user: at most STEPS_MAX_QUEUED_PER_USER (20) conversion steps queued or
// running per user, 429 with Retry-After past it; and previews on a queue of their own, so another user's thumbnail
// is drawn while one user's conversions hold the conversions queue (issue 31: "user B's first preview … waited 33 s").
import { env } from 'cloudflare:test'
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { openDatabase } from '../../worker/db/client'
import { queuedSteps, STEPS_MAX_QUEUED_PER_USER } from '../../worker/pipeline/jobs'
import { call, callJson } from '../support/api'
import { signUp } from '../support/accounts'
import { heldHasStarted, hold, registerChainConverters, resetHold } from '../support/chain-converters'
import { uploaded } from '../support/files'
import { until } from '../support/until'
import { encodePngBytes } from '../../worker/engines/png/encode'

beforeAll(registerChainConverters)
beforeEach(resetHold)
afterEach(() => hold.release())

const async = { prefer: 'respond-async' }

/** The answer past the bound: 429 RATE_LIMITED with Retry-After. */
function expectTooManySteps(refused: Awaited<ReturnType<typeof callJson>>) {
  expect(refused).toMatchObject({
    status: 429,
    body: {
      code: 'RATE_LIMITED',
      retry_after: 10,
      message: `${STEPS_MAX_QUEUED_PER_USER} of your conversion steps are queued or running: ask again in 10 s`,
    },
  })
  expect(refused.headers.get('retry-after')).toBe('10')
}

describe('a fair share of the queue', { timeout: 180_000 }, () => {
  it("refuses a user's 21st queued conversion with 429 and Retry-After; another user converts and previews meanwhile", async () => {
    const flooder = await signUp()
    const files = await Promise.all(
      Array.from({ length: STEPS_MAX_QUEUED_PER_USER + 1 }, (_, i) =>
        uploaded(flooder, `held-${i}.thold`, `held ${i}`),
      ),
    )
    for (const file of files.slice(0, STEPS_MAX_QUEUED_PER_USER)) {
      expect((await call('POST', `/files/${file._id}/convert`, { token: flooder.token, headers: async })).status).toBe(
        202,
      )
    }
    await heldHasStarted()
    const refused = await callJson('POST', `/files/${files.at(-1)!._id}/convert`, {
      token: flooder.token,
      headers: async,
    })
    expectTooManySteps(refused)
    expect(
      await env.DB.prepare('SELECT COUNT(*) AS n FROM jobs WHERE file_id = ?').bind(files.at(-1)!._id).first('n'),
    ).toBe(0)

    // Another user: their conversion is taken, and their first preview is drawn while the flood still holds.
    const other = await signUp()
    const text = await uploaded(other, 'note.thold', 'mine')
    expect((await call('POST', `/files/${text._id}/convert`, { token: other.token, headers: async })).status).toBe(202)
    const picture = await uploaded(
      other,
      'picture.png',
      await encodePngBytes({ width: 64, height: 32, channels: 3, data: new Uint8Array(64 * 32 * 3).fill(200) }),
    )
    const preview = await until(
      "the other user's preview",
      async () => (await call('GET', `/files/${picture._id}/preview?w=64&format=png`, { token: other.token })).status,
      (status) => status !== 202,
    )
    expect(preview).toBe(200)
    expect(await queuedSteps(openDatabase(env.DB), flooder.id)).toBe(STEPS_MAX_QUEUED_PER_USER)

    // Once the flood drains, the flooder converts again.
    hold.release()
    await until(
      'the flood drained',
      () => queuedSteps(openDatabase(env.DB), flooder.id),
      (count) => count === 0,
    )
    expect(
      (await call('POST', `/files/${files.at(-1)!._id}/convert`, { token: flooder.token, headers: async })).status,
    ).toBe(202)
  })

  it('holds the bound when the conversions are asked for all at once (25 requests racing: 20 taken, 5 answered 429)', async () => {
    const flooder = await signUp()
    const files = await Promise.all(
      Array.from({ length: 25 }, (_, i) => uploaded(flooder, `race-${i}.thold`, `race ${i}`)),
    )
    const statuses = await Promise.all(
      files.map(
        async (file) =>
          (await call('POST', `/files/${file._id}/convert`, { token: flooder.token, headers: async })).status,
      ),
    )
    expect(statuses.filter((status) => status === 202)).toHaveLength(STEPS_MAX_QUEUED_PER_USER)
    expect(statuses.filter((status) => status === 429)).toHaveLength(25 - STEPS_MAX_QUEUED_PER_USER)
    expect(await queuedSteps(openDatabase(env.DB), flooder.id)).toBe(STEPS_MAX_QUEUED_PER_USER)
    hold.release()
    await until(
      'the flood drained',
      () => queuedSteps(openDatabase(env.DB), flooder.id),
      (count) => count === 0,
    )
  })

  // Last: the first test's final conversion may start its held step after the next test has reset the hold, and
  // then holds the queue until that test releases it; this test's failing job must run before its flood.
  it('refuses a retry past the bound with the same 429, and reopens nothing (the job stays failed)', async () => {
    const flooder = await signUp()
    const bad = await uploaded(flooder, 'bad.tbroken', 'x')
    const jobId = (await callJson('POST', `/files/${bad._id}/convert`, { token: flooder.token, headers: async })).body
      ._id as string
    await until(
      'the job failed',
      async () => (await callJson('GET', `/jobs/${jobId}`, { token: flooder.token })).body.status,
      (status) => status === 'failed',
    )
    const files = await Promise.all(
      Array.from({ length: STEPS_MAX_QUEUED_PER_USER }, (_, i) => uploaded(flooder, `full-${i}.thold`, `full ${i}`)),
    )
    for (const file of files)
      expect((await call('POST', `/files/${file._id}/convert`, { token: flooder.token, headers: async })).status).toBe(
        202,
      )
    const before = (await callJson('GET', `/jobs/${jobId}`, { token: flooder.token })).body
    const refused = await callJson('POST', `/jobs/${jobId}/retry`, { token: flooder.token })
    expectTooManySteps(refused)
    const after = (await callJson('GET', `/jobs/${jobId}`, { token: flooder.token })).body
    expect(after).toEqual({ ...before, events_url: after.events_url })
    expect(after.status).toBe('failed')

    hold.release()
    await until(
      'the flood drained',
      () => queuedSteps(openDatabase(env.DB), flooder.id),
      (count) => count === 0,
    )
    const retried = await callJson('POST', `/jobs/${jobId}/retry`, { token: flooder.token })
    expect(retried).toMatchObject({ status: 202, body: { status: 'running', error: null } })
    expect(retried.body.steps.map((step) => step.status)).toEqual(['queued'])
  })
})
