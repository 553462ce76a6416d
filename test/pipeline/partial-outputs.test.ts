// Outputs are stored one at a time as the converter yields them: a step that fails part-way through its
// outputs, for good or for a transient reason, through the real local Queue.
import { env } from 'cloudflare:test'
import { beforeAll, describe, expect, it } from 'vitest'
import { call, callJson } from '../support/api'
import { signUp, type TestUser } from '../support/accounts'
import { registerChainConverters } from '../support/chain-converters'
import { uploaded } from '../support/files'

let user: TestUser

beforeAll(async () => {
  registerChainConverters()
  user = await signUp()
})

const outputRecords = (jobId: string) =>
  env.DB.prepare('SELECT name, key FROM files WHERE job_id = ? ORDER BY part_index')
    .bind(jobId)
    .all<{ name: string; key: string }>()

describe('a step failing after two of its four outputs', () => {
  it('for good: removes the outputs it stored, records and objects, and fails the job', async () => {
    const source = await uploaded(user, 'halfway.tpartway', 'permanent', { 'x-edgefloor-prefix': 'halfway' })
    const res = await callJson('POST', `/files/${source._id}/convert`, { token: user.token })
    expect(res).toMatchObject({
      status: 422,
      body: { message: 'test-partway on "halfway.tpartway" failed: piece 3 is corrupt' },
    })
    const job = await callJson('GET', `/jobs/${res.body.job}`, { token: user.token })
    expect(job.body).toMatchObject({
      status: 'failed',
      files: [],
      steps: [{ status: 'failed', attempts: 1, error: 'piece 3 is corrupt' }],
    })
    expect((await outputRecords(res.body.job!)).results).toEqual([])
    const objects = await env.BUCKET.list({ prefix: `u/${user.id}/halfway/` })
    expect(objects.objects.map((object) => object.key)).toEqual([`u/${user.id}/halfway/${source._id}`])
    expect((await callJson('GET', `/files/${source._id}`, { token: user.token })).body).toMatchObject({
      hash: source.hash,
      files: [],
    })
  })

  it('for a transient reason: the redelivery completes the set, and exactly one set is left', async () => {
    const source = await uploaded(user, 'again.tpartway', 'transient', { 'x-edgefloor-prefix': 'again' })
    const res = await callJson('POST', `/files/${source._id}/convert`, { token: user.token })
    expect(res.status).toBe(200)
    expect(res.body.map((file) => file.name)).toEqual([1, 2, 3, 4].map((n) => `again (${n} of 4)`))
    const [step] = (await callJson('GET', `/jobs/${res.body[0]!.job_id}`, { token: user.token })).body.steps
    expect(step).toMatchObject({ status: 'done', attempts: 2 })
    const keys = [0, 1, 2, 3].map((index) => `u/${user.id}/again/${step!._id}-${index}`)
    expect((await outputRecords(res.body[0]!.job_id!)).results.map((row) => row.key)).toEqual(keys)
    const objects = await env.BUCKET.list({ prefix: `u/${user.id}/again/` })
    expect(objects.objects.map((object) => object.key).sort()).toEqual(
      [`u/${user.id}/again/${source._id}`, ...keys].sort(),
    )
    // The first delivery's two outputs were kept, not made again; the second delivery made the rest.
    const texts = await Promise.all(
      res.body.map(async (file) => (await call('GET', `/files/${file._id}/download`, { token: user.token })).text()),
    )
    expect(texts).toEqual(['piece 1, attempt 1', 'piece 2, attempt 1', 'piece 3, attempt 2', 'piece 4, attempt 2'])
  }, 60_000)
})
