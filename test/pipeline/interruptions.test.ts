// What happens to a job while its step is mid-conversion: the source deleted under it, and a convert request
// whose wait runs out. The test converter `test-held` pauses inside convert() until the test releases it.
import { env } from 'cloudflare:test'
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { bodyAt, call, callJson, callJsonWithSettings } from '../support/api'
import { signUp, type TestUser } from '../support/accounts'
import { heldHasStarted, hold, registerChainConverters, resetHold } from '../support/chain-converters'
import { uploaded } from '../support/files'
import { pollJob } from '../support/jobs'

let user: TestUser

beforeAll(async () => {
  registerChainConverters()
  user = await signUp()
})
beforeEach(resetHold)
// A test that fails before releasing the held step must not leave it holding the queue for the next tests.
afterEach(() => hold.release())

describe('a source deleted mid-conversion', () => {
  it('leaves no output record and no object, and fails the job', async () => {
    const source = await uploaded(user, 'gone.thold', 'bytes', { 'x-edgefloor-prefix': 'gone' })
    const started = await callJson('POST', `/files/${source._id}/convert`, {
      token: user.token,
      headers: { prefer: 'respond-async' },
    })
    await heldHasStarted()
    const deleted = await callJson('DELETE', `/files/${source._id}`, { token: user.token })
    expect(deleted).toMatchObject({ status: 200, body: { deleted: [source._id] } })
    hold.release()
    const job = await pollJob(started.body._id, user)
    expect(job).toMatchObject({
      status: 'failed',
      error: 'test-held on "gone.thold" failed: the source file was deleted during the conversion',
      files: [],
    })
    expect(await env.DB.prepare('SELECT count(*) AS n FROM files WHERE job_id = ?').bind(job._id).first('n')).toBe(0)
    expect((await env.BUCKET.list({ prefix: `u/${user.id}/gone/` })).objects).toEqual([])
  })
})

describe('POST /files/:id/convert when CONVERT_WAIT_MS runs out', () => {
  it('answers 202 with the job and its Location, and the job finishes later', async () => {
    const source = await uploaded(user, 'slow.thold', 'later')
    const res = await callJsonWithSettings({ CONVERT_WAIT_MS: '50' }, 'POST', `/files/${source._id}/convert`, {
      token: user.token,
    })
    const body = bodyAt(res, 202)
    expect(res.headers.get('location')).toBe(`/jobs/${body._id}`)
    expect(res.headers.get('preference-applied')).toBeNull()
    expect(body).toMatchObject({ file_id: source._id, status: expect.stringMatching(/^(queued|running)$/) })
    hold.release()
    const job = await pollJob(body._id, user)
    expect(job.status).toBe('done')
    expect(job.files.map((file) => file.name)).toEqual(['slow (1 of 1)'])
    expect(await (await call('GET', `/files/${job.files[0]!._id}/download`, { token: user.token })).text()).toBe(
      'later',
    )
  })
})
