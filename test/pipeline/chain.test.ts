// Jobs through the real local Queue: chains of steps, naming and parent_file, waiting and 202, fan-out in
// parts, permanent and transient failures, idempotent redelivery, ownership.
import { env } from 'cloudflare:test'
import { beforeAll, describe, expect, it } from 'vitest'
import { call, callJson } from '../support/api'
import { signUp, type TestUser } from '../support/accounts'
import { uploaded } from '../support/files'
import { pollJob } from '../support/jobs'
import { gate, registerChainConverters } from '../support/chain-converters'
import { localEngines } from '../../worker/engine-workers/local'

let user: TestUser

beforeAll(async () => {
  registerChainConverters()
  user = await signUp()
})

describe('GET /convert/:extension', () => {
  it('answers what an extension becomes, and null when nothing converts it', async () => {
    expect((await callJson('GET', '/convert/tsplit', { token: user.token })).body).toMatchObject({
      extension: '.tsplit',
      accepted: true,
      to: '.tpart',
      targets: expect.arrayContaining(['.tpart', '.tupper']),
    })
    expect((await callJson('GET', '/convert/.TSPLIT', { token: user.token })).body.extension).toBe('.tsplit')
    expect((await callJson('GET', '/convert/xyz', { token: user.token })).body).toEqual({
      extension: '.xyz',
      accepted: false,
      to: null,
      targets: [],
    })
  })
})

describe('POST /files/:id/convert', () => {
  it('waits for the whole chain and answers every file in chain order', async () => {
    const source = await uploaded(user, 'notes.tsplit', 'abcdwxyz')
    const res = await callJson('POST', `/files/${source._id}/convert`, { token: user.token })
    expect(res.status).toBe(200)
    const names = res.body.map((file) => file.name)
    expect(names).toEqual(['notes (1 of 2)', 'notes (2 of 2)', 'notes (1 of 1)', 'notes (1 of 1)'])
    const [part1, part2, upper1, upper2] = res.body
    expect(part1).toMatchObject({ parent_file: source._id, part_index: 0, part_total: 2, metadata: { half: 0 } })
    expect(part2!.parent_file).toBe(source._id)
    expect(upper1!.parent_file).toBe(part1!._id)
    expect(upper2!.parent_file).toBe(part2!._id)
    expect(await (await call('GET', `/files/${upper2!._id}/download`, { token: user.token })).text()).toBe('WXYZ')
    const original = await callJson('GET', `/files/${source._id}`, { token: user.token })
    expect(original.body).toMatchObject({ hash: source.hash, size: 8 })
  })

  it('gives a converter only the settings it lists: no other setting, no secret, no file store', async () => {
    const source = await uploaded(user, 'probe.tsettings', 'x')
    const res = await callJson('POST', `/files/${source._id}/convert`, { token: user.token })
    expect(res.status).toBe(200)
    const seen = await (await call('GET', `/files/${res.body[0]!._id}/download`, { token: user.token })).json()
    // The AI binding is a binding, not a setting; no `resources` since test-settings lists no `…_PREFIX` setting.
    expect(seen).toEqual({ settings: ['PDF_DPI'], context: ['ai', 'attempt', 'jobId', 'options', 'settings'] })
  })

  it('answers 202 with the job and its Location for Prefer: respond-async', async () => {
    const source = await uploaded(user, 'later.tsplit', 'abcd')
    const res = await callJson('POST', `/files/${source._id}/convert`, {
      token: user.token,
      headers: { prefer: 'respond-async' },
    })
    expect(res.status).toBe(202)
    expect(res.headers.get('location')).toBe(`/jobs/${res.body._id}`)
    expect(res.body).toMatchObject({ file_id: source._id, status: 'queued' })
    const job = await pollJob(res.body._id, user)
    expect(job.status).toBe('done')
    expect(job.files).toHaveLength(4)
    expect(job.steps.map((step) => `${step.converter}:${step.status}`).sort()).toEqual([
      'test-split:done',
      'test-upper:done',
      'test-upper:done',
    ])
    const listed = await callJson('GET', `/files/${source._id}/jobs`, { token: user.token })
    expect(listed.body.map((j) => j._id)).toEqual([res.body._id])
  })

  it('fans a planned step out into parts and keeps the outputs in order', async () => {
    const source = await uploaded(user, 'word.tfan', 'edgefloor')
    const res = await callJson('POST', `/files/${source._id}/convert`, { token: user.token })
    expect(res.status).toBe(200)
    expect(res.body.map((file) => file.name)).toEqual(Array.from({ length: 9 }, (_, i) => `word (${i + 1} of 9)`))
    const texts = await Promise.all(
      res.body.map(async (file) => (await call('GET', `/files/${file._id}/download`, { token: user.token })).text()),
    )
    expect(texts.join('')).toBe('edgefloor')
    expect((await callJson('GET', `/files/${source._id}`, { token: user.token })).body.metadata).toEqual({
      char_count: 9,
    })
  })

  it('fans out past 100 parts: the steps go to the queue in batches it accepts', async () => {
    // Cloudflare Queues: "sendBatch … up to 100 messages" a call (Miniflare enforces it too). test-fan makes one part
    // a pair of characters, so 201 characters are 101 parts, one queue message each.
    const text = 'edgefloor'.repeat(23).slice(0, 201)
    const source = await uploaded(user, 'long.tfan', text)
    const res = await callJson('POST', `/files/${source._id}/convert`, {
      token: user.token,
      headers: { Prefer: 'respond-async' },
    })
    expect(res.status).toBe(202)
    const job = await pollJob(res.body._id, user)
    expect(job.status).toBe('done')
    expect(job.steps.filter((step) => step.part !== null)).toHaveLength(101)
    expect(job.files.map((file) => file.name).slice(-2)).toEqual(['long (200 of 201)', 'long (201 of 201)'])
  })

  it('fails fast on a permanent error, naming the step and the reason', async () => {
    const source = await uploaded(user, 'bad.tbroken', 'xyz')
    const res = await callJson('POST', `/files/${source._id}/convert`, { token: user.token })
    expect(res.status).toBe(422)
    expect(res.body).toMatchObject({
      message: 'test-broken on "bad.tbroken" failed: the input is corrupt at byte 3',
      code: 'CONVERSION_FAILED',
    })
    const job = await callJson('GET', `/jobs/${res.body.job}`, { token: user.token })
    expect(job.body).toMatchObject({
      status: 'failed',
      steps: [{ status: 'failed', attempts: 1, error: 'the input is corrupt at byte 3' }],
    })
    expect((await callJson('GET', `/files/${source._id}`, { token: user.token })).body.files).toEqual([])
  })

  it('answers the code the converter failed with, on the request and in the job', async () => {
    const source = await uploaded(user, 'odd.trefuse', 'xyz')
    const res = await callJson('POST', `/files/${source._id}/convert`, { token: user.token })
    expect(res.status).toBe(415)
    expect(res.body).toMatchObject({
      message: 'test-refusing on "odd.trefuse" failed: the input is of a kind this engine cannot read',
      code: 'UNSUPPORTED_FORMAT',
    })
    const job = await callJson('GET', `/jobs/${res.body.job}`, { token: user.token })
    expect(job.body).toMatchObject({
      status: 'failed',
      error_code: 'UNSUPPORTED_FORMAT',
      steps: [{ status: 'failed' }],
    })
    const broken = await uploaded(user, 'plain.tbroken', 'xyz')
    const failed = await callJson('POST', `/files/${broken._id}/convert`, { token: user.token })
    expect((await callJson('GET', `/jobs/${failed.body.job}`, { token: user.token })).body).toMatchObject({
      status: 'failed',
      error_code: 'CONVERSION_FAILED',
    })
  })

  it('retries a transient failure with backoff until it works', async () => {
    const source = await uploaded(user, 'busy.tflaky', 'x')
    const res = await callJson('POST', `/files/${source._id}/convert`, { token: user.token })
    expect(res.status).toBe(200)
    expect(await (await call('GET', `/files/${res.body[0]!._id}/download`, { token: user.token })).text()).toBe(
      'worked on attempt 3',
    )
  }, 60_000)

  it('refuses a file nothing converts with 415 and creates no job', async () => {
    const source = await uploaded(user, 'plain.xyz', 'x')
    const res = await callJson('POST', `/files/${source._id}/convert`, { token: user.token })
    expect(res).toMatchObject({
      status: 415,
      body: { message: expect.stringMatching(/^no converter accepts \.xyz; these extensions convert: \.avif, /) },
    })
    expect((await callJson('GET', `/files/${source._id}/jobs`, { token: user.token })).body).toEqual([])
  })

  it("answers 404 for another user's file and job", async () => {
    const source = await uploaded(user, 'mine.tsplit', 'abcd')
    const job = await callJson('POST', `/files/${source._id}/convert`, {
      token: user.token,
      headers: { prefer: 'respond-async' },
    })
    const stranger = await signUp()
    for (const [method, path] of [
      ['POST', `/files/${source._id}/convert`],
      ['GET', `/files/${source._id}/jobs`],
      ['GET', `/jobs/${job.body._id}`],
      ['GET', `/jobs/${job.body._id}/events`],
      ['POST', `/jobs/${job.body._id}/retry`],
    ] as const) {
      expect((await call(method, path, { token: stranger.token })).status, `${method} ${path}`).toBe(404)
    }
    await pollJob(job.body._id, user)
  })
})

describe('POST /jobs/:id/retry', () => {
  it('queues the failed step again and the steps its failure left unrun, and the job finishes', async () => {
    gate.isOpen = false
    const source = await uploaded(user, 'gate.tgate', 'wxyz')
    const res = await callJson('POST', `/files/${source._id}/convert`, { token: user.token })
    expect(res).toMatchObject({
      status: 422,
      body: { message: 'test-gated on "gate.tgate" failed: the gate is closed' },
    })
    const failed = (await callJson('GET', `/jobs/${res.body.job}`, { token: user.token })).body
    const statuses = failed.steps.map((step) => step.status)
    expect(statuses.filter((status: string) => status === 'failed').length).toBeGreaterThan(0)
    // The parts delivered after the failure were settled unrun: they wait, queued, for a retry.
    expect(statuses.filter((status: string) => status === 'queued').length).toBeGreaterThan(0)
    expect(statuses.filter((status: string) => status === 'done')).toEqual([])

    gate.isOpen = true
    const retried = await callJson('POST', `/jobs/${failed._id}/retry`, { token: user.token })
    expect(retried).toMatchObject({ status: 202, body: { status: 'running', error: null } })
    const job = await pollJob(failed._id, user)
    expect(job.status).toBe('done')
    expect(job.steps.map((step) => step.status).sort()).toEqual(['done', 'done', 'done', 'done', 'split'])
    expect(job.files.map((file) => file.name)).toEqual([1, 2, 3, 4].map((n) => `gate (${n} of 4)`))
    expect((await callJson('POST', `/jobs/${failed._id}/retry`, { token: user.token })).status).toBe(409)
  })
})

describe('redelivery', () => {
  it('running every message of a job three times leaves one record and one object per output', async () => {
    const source = await uploaded(user, 'again.tsplit', 'abcdefgh')
    const done = await callJson('POST', `/files/${source._id}/convert`, { token: user.token })
    expect(done.status).toBe(200)
    const job = await callJson('GET', `/jobs/${done.body[0]!.job_id}`, { token: user.token })
    // Deliver every step's message again, three times, as at-least-once delivery may.
    const { runStep } = await import('../../worker/pipeline/step-runner')
    const { openDatabase } = await import('../../worker/db/client')
    const { loadConfig } = await import('../../worker/config')
    const deps = {
      db: openDatabase(env.DB),
      bucket: env.BUCKET,
      queue: env.CONVERSIONS,
      config: loadConfig(env),
      engines: localEngines,
      waitUntil: () => {},
    }
    for (let round = 0; round < 3; round++) {
      for (const step of job.body.steps) await runStep(deps, { kind: 'step', jobId: job.body._id, stepId: step._id }, 1)
    }
    // And as if the steps had never finished: reset them and run again.
    await env.DB.prepare("UPDATE job_steps SET status = 'queued' WHERE job_id = ?").bind(job.body._id).run()
    await env.DB.prepare("UPDATE jobs SET status = 'running' WHERE id = ?").bind(job.body._id).run()
    for (let round = 0; round < 3; round++) {
      for (const step of job.body.steps) await runStep(deps, { kind: 'step', jobId: job.body._id, stepId: step._id }, 2)
    }
    const rows = await env.DB.prepare('SELECT count(*) AS n FROM files WHERE job_id = ?').bind(job.body._id).first('n')
    expect(rows).toBe(4)
    const objects = await env.BUCKET.list({ prefix: `u/${user.id}/` })
    const keys = await env.DB.prepare('SELECT key FROM files WHERE user_id = ?').bind(user.id).all<{ key: string }>()
    expect(objects.objects.map((object) => object.key).sort()).toEqual(keys.results.map((row) => row.key).sort())
  })

  it('runs a step message of the shape sent before messages had a kind (queued while a deploy rolls out)', async () => {
    const source = await uploaded(user, 'deploy.tpart', 'abc')
    const done = await callJson('POST', `/files/${source._id}/convert`, { token: user.token })
    expect(done.status).toBe(200)
    const jobId = done.body[0]!.job_id!
    const [step] = (await callJson('GET', `/jobs/${jobId}`, { token: user.token })).body.steps
    // As if its message had been sent by the Worker before this one and not yet delivered.
    await env.DB.prepare('DELETE FROM files WHERE job_id = ?').bind(jobId).run()
    await env.DB.prepare("UPDATE job_steps SET status = 'queued', output_ids = '[]' WHERE id = ?").bind(step!._id).run()
    await env.DB.prepare("UPDATE jobs SET status = 'running', finished_at = NULL WHERE id = ?").bind(jobId).run()
    await env.CONVERSIONS.send({ jobId, stepId: step!._id })
    const job = await pollJob(jobId, user)
    expect(job).toMatchObject({ status: 'done', steps: [{ status: 'done' }] })
    expect(job.files.map((file) => file.name)).toEqual(['deploy (1 of 1)'])
  })

  it('a step the real queue delivers three times overwrites its objects under deterministic keys', async () => {
    const source = await uploaded(user, 'thrice.tpart', 'abc', { 'x-edgefloor-prefix': 'inbox' })
    const done = await callJson('POST', `/files/${source._id}/convert`, { token: user.token })
    expect(done.status).toBe(200)
    const jobId = done.body[0]!.job_id!
    const [step] = (await callJson('GET', `/jobs/${jobId}`, { token: user.token })).body.steps
    const key = `u/${user.id}/inbox/${step!._id}-0`
    expect(await env.DB.prepare('SELECT key FROM files WHERE job_id = ?').bind(jobId).first('key')).toBe(key)
    // As if the step had written its object and died before D1 recorded it: the object stays, the record goes.
    await env.DB.prepare('DELETE FROM files WHERE job_id = ?').bind(jobId).run()
    await env.DB.prepare("UPDATE job_steps SET status = 'queued', output_ids = '[]' WHERE id = ?").bind(step!._id).run()
    await env.DB.prepare("UPDATE jobs SET status = 'running', finished_at = NULL WHERE id = ?").bind(jobId).run()
    for (let delivery = 0; delivery < 3; delivery++)
      await env.CONVERSIONS.send({ kind: 'step', jobId, stepId: step!._id })
    const job = await pollJob(jobId, user)
    expect(job.status).toBe('done')
    expect(job.files.map((file) => file.name)).toEqual(['thrice (1 of 1)'])
    const rows = await env.DB.prepare('SELECT key FROM files WHERE job_id = ?').bind(jobId).all<{ key: string }>()
    expect(rows.results).toEqual([{ key }])
    const objects = await env.BUCKET.list({ prefix: `u/${user.id}/inbox/` })
    expect(objects.objects.map((object) => object.key).sort()).toEqual([`u/${user.id}/inbox/${source._id}`, key].sort())
    expect(await (await env.BUCKET.get(key))!.text()).toBe('ABC')
  })
})
