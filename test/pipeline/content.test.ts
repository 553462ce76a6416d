// A conversion belongs to the content it read, through the real queue, D1 and R2: a replace during a held step,
// two equal converts at once, the quota reached by a conversion's outputs, and each event once (job.failed
// webhooks, dead-letter attempt counts, the event stream over an unchanged job).
import { env } from 'cloudflare:test'
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { loadConfig } from '../../worker/config'
import { ConversionError, type Converter } from '../../worker/converters/converter'
import { converterNamed, registerConverter } from '../../worker/converters/registry'
import { openDatabase } from '../../worker/db/client'
import { newId } from '../../worker/db/ids'
import { runStep, type PipelineDeps } from '../../worker/pipeline/step-runner'
import { createJob } from '../../worker/pipeline/jobs'
import type { StepMessage } from '../../worker/queue'
import { findOwnedFile } from '../../worker/files/records'
import { threePages } from '../fixtures/pdf/pdfs'
import { call, callJson, callJsonWithSettings } from '../support/api'
import { signUp, type TestUser } from '../support/accounts'
import { heldHasStarted, hold, registerChainConverters, resetHold } from '../support/chain-converters'
import { multipartBody, uploaded } from '../support/files'
import { pollJob } from '../support/jobs'
import { DEAD_LETTER_QUEUE, deliver } from '../support/queue'
import { localEngines } from '../../worker/engine-workers/local'

/** Two pages, planned as two parts: page 1 at once, page 2 once the test releases `hold`. */
const heldPages: Converter = {
  name: 'test-held-pages',
  from: ['.tpages'],
  to: '.tpage',
  async plan() {
    return {
      total: 2,
      parts: [
        { start: 0, end: 1 },
        { start: 1, end: 2 },
      ],
    }
  },
  async *convert(input, ctx) {
    const body = await input.bytes(1024)
    const index = ctx.part?.start ?? 0
    if (index === 1) {
      hold.hasStarted = true
      await hold.released
    }
    yield { index, total: 2, extension: '.tpage', contentType: 'text/plain', body }
  },
}

/** Never works, for a step the tests redeliver by hand. */
const alwaysBusy: Converter = {
  name: 'test-always-busy',
  from: ['.tallbusy'],
  to: '.tnever',
  // biome-ignore lint/correctness/useYield: never gets to its first output
  async *convert() {
    throw new ConversionError('the engine is busy', { retryable: true })
  },
}

let user: TestUser
beforeAll(async () => {
  registerChainConverters()
  for (const converter of [heldPages, alwaysBusy]) if (!converterNamed(converter.name)) registerConverter(converter)
  user = await signUp()
})
beforeEach(resetHold)
afterEach(() => hold.release())

const convertAsync = (fileId: string, json?: unknown) =>
  callJson('POST', `/files/${fileId}/convert`, { token: user.token, headers: { prefer: 'respond-async' }, json })
const countRows = (sql: string, ...values: unknown[]) =>
  env.DB.prepare(sql)
    .bind(...values)
    .first<number>('n')

describe('a replace during a held step', { timeout: 120_000 }, () => {
  it('fails the old content\'s job with "source replaced", removes its outputs, and keeps the new content', async () => {
    const source = await uploaded(user, 'draft.thold', 'old words', { 'x-edgefloor-prefix': 'replaced' })
    const started = await convertAsync(source._id)
    await heldHasStarted()
    const replaced = await call('PUT', `/files/${source._id}`, {
      token: user.token,
      body: multipartBody('draft.thold', 'new words'),
    })
    expect(replaced.status).toBe(200)
    hold.release()
    const job = await pollJob(started.body._id, user)
    expect(job).toMatchObject({ status: 'failed', files: [] })
    expect(job.error).toContain('source replaced')
    expect(await countRows('SELECT count(*) AS n FROM files WHERE job_id = ?', job._id)).toBe(0)
    const file = await callJson('GET', `/files/${source._id}`, { token: user.token })
    expect(file.body).toMatchObject({ size: 'new words'.length, files: [] })
    // Only the new content's object is left under the prefix: the old one and the step's outputs are gone.
    expect((await env.BUCKET.list({ prefix: `u/${user.id}/replaced/` })).objects).toHaveLength(1)
    // The new content converts as usual, named after the upload.
    const again = await convertAsync(source._id)
    expect(again.body._id).not.toBe(job._id)
    await heldHasStarted()
    hold.release()
    const done = await pollJob(again.body._id, user)
    expect(done).toMatchObject({ status: 'done', files: [{ name: 'draft (1 of 1)', extension: '.theld' }] })
    expect(await (await call('GET', `/files/${done.files[0]!._id}/download`, { token: user.token })).text()).toBe(
      'new words',
    )
  })
})

describe('two equal converts at once', { timeout: 120_000 }, () => {
  it('answer the same job: one conversion, one set of outputs', async () => {
    const source = await uploaded(user, 'twice.thold', 'once only')
    const [first, second] = await Promise.all([
      convertAsync(source._id, { options: { landscape: true, nativePageRanges: '1' } }),
      convertAsync(source._id, { options: { nativePageRanges: '1', landscape: true } }),
    ])
    expect(first.status).toBe(202)
    expect(second.status).toBe(202)
    expect(second.body._id).toBe(first.body._id)
    await heldHasStarted()
    // Other options are another conversion.
    const other = await convertAsync(source._id, { options: { landscape: false } })
    expect(other.body._id).not.toBe(first.body._id)
    hold.release()
    const job = await pollJob(first.body._id, user)
    expect(job.status).toBe('done')
    expect(await countRows('SELECT count(*) AS n FROM jobs WHERE file_id = ?', source._id)).toBe(2)
    expect(await countRows('SELECT count(*) AS n FROM files WHERE job_id = ?', first.body._id)).toBe(1)
    // A finished job is not reused: a new request converts again.
    const later = await convertAsync(source._id, { options: { landscape: true, nativePageRanges: '1' } })
    expect(later.body._id).not.toBe(first.body._id)
    hold.release()
    await pollJob(later.body._id, user)
    await pollJob(other.body._id, user)
  })
})

describe('the quota reached by a conversion', { timeout: 180_000 }, () => {
  it('fails the step that passes it with 413 "storage quota exceeded", removes its partial outputs, keeps the original', async () => {
    // What the pages take, measured on another account.
    const measure = await signUp()
    const measured = await uploaded(measure, 'Pages.pdf', threePages)
    const pages = await callJson('POST', `/files/${measured._id}/convert`, { token: measure.token })
    expect(pages.status).toBe(200)
    const sizes: number[] = pages.body.map((page) => page.size)
    // The test binds FILES_QUOTA_BYTES to 1 TiB: a record standing for what the user already stores leaves room
    // for the first page and half of the second.
    const owner = await signUp()
    const quota = Number(loadConfig(env).FILES_QUOTA_BYTES)
    expect(quota).toBeGreaterThan(0)
    const pdf = await uploaded(owner, 'Pages.pdf', threePages)
    const left = sizes[0]! + Math.floor(sizes[1]! / 2)
    const now = Date.now()
    await env.DB.prepare(
      'INSERT INTO files (id, user_id, name, extension, content_type, size, hash, key, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    )
      .bind(
        newId(now),
        owner.id,
        'archive',
        '.bin',
        'application/octet-stream',
        quota - pdf.size - left,
        '0'.repeat(64),
        `u/${owner.id}/archive-${now}`,
        now,
        now,
      )
      .run()
    const res = await callJson('POST', `/files/${pdf._id}/convert`, { token: owner.token })
    expect(res.status).toBe(413)
    expect(res.body).toMatchObject({ code: 'QUOTA_EXCEEDED', message: expect.stringMatching(/storage quota exceeded/) })
    expect(await countRows('SELECT count(*) AS n FROM files WHERE parent_id = ?', pdf._id)).toBe(0)
    expect((await env.BUCKET.list({ prefix: `u/${owner.id}/` })).objects.map((object) => object.key)).toEqual([
      `u/${owner.id}/${pdf._id}`,
    ])
    expect(await countRows('SELECT count(*) AS n FROM storage_reservations WHERE user_id = ?', owner.id)).toBe(0)
    const original = await callJson('GET', `/files/${pdf._id}`, { token: owner.token })
    expect(original.body).toMatchObject({ size: pdf.size, hash: pdf.hash, files: [] })
  })
})

describe('each event once', { timeout: 120_000 }, () => {
  const receiver = (path: string) => `${env.WEBHOOK_RECEIVER_URL}${path}`
  const deliveries = async (path: string) =>
    (await (await fetch(`${env.WEBHOOK_RECEIVER_URL}/deliveries?path=${path}`)).json()) as Array<{ body: string }>

  function pipelineDeps(): PipelineDeps {
    return {
      db: openDatabase(env.DB),
      bucket: env.BUCKET,
      queue: env.CONVERSIONS,
      config: loadConfig(env),
      engines: localEngines,
      waitUntil: () => {},
    }
  }

  it('sends job.failed once when a failed step is delivered again, and the dead letter counts the real attempts', async () => {
    const file = await uploaded(user, 'hooked-once.tbroken', 'x')
    const path = `/once/${file._id}`
    const res = await callJsonWithSettings({ WEBHOOK_ALLOW_HTTP: 'true' }, 'POST', `/files/${file._id}/convert`, {
      token: user.token,
      json: { callback_url: receiver(path) },
    })
    expect(res.status).toBe(422)
    const jobId = res.body.job!
    const deadline = Date.now() + 30_000
    while ((await deliveries(path)).length < 1 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 100))
    // The failed step reaches the dead-letter consumer too (a redelivery raced its failure): the job stays as it
    // was, and no second job.failed goes out.
    const job = await callJson('GET', `/jobs/${jobId}`, { token: user.token })
    const deadLetter = await deliver(DEAD_LETTER_QUEUE, [
      { body: { kind: 'step', jobId, stepId: job.body.steps[0]!._id }, attempts: 1 },
    ])
    expect(deadLetter).toMatchObject({ outcome: 'ok', explicitAcks: ['m1'] })
    const sent = await deliveries(path)
    expect(sent).toHaveLength(1)
    expect(JSON.parse(sent[0]!.body)).toMatchObject({ event: 'job.failed' })
    expect((await callJson('GET', `/jobs/${jobId}`, { token: user.token })).body.error).toBe(job.body.error)

    // A step the queue delivered six times: its dead letter (whose own count starts at 1) says six.
    // Made without a queue message, so only this test delivers it.
    const busy = await uploaded(user, 'six.tallbusy', 'x')
    const deps = pipelineDeps()
    const created = await createJob(deps.db, await findOwnedFile(deps.db, user.id, busy._id), alwaysBusy, {})
    const message: StepMessage = { kind: 'step', jobId: created.job.id, stepId: created.step!.id }
    for (let attempt = 1; attempt <= 6; attempt++)
      await expect(runStep(deps, message, attempt)).rejects.toThrow('the engine is busy')
    expect(await deliver(DEAD_LETTER_QUEUE, [{ body: message, attempts: 1 }])).toMatchObject({ explicitAcks: ['m1'] })
    expect((await callJson('GET', `/jobs/${message.jobId}`, { token: user.token })).body.error).toBe(
      'test-always-busy on "six.tallbusy" failed: gave up after 6 attempts: the engine is busy',
    )
  })

  it("streams a job only when it changed, not when only its files' signed URLs moved on", async () => {
    const source = await uploaded(user, 'watched.tpages', 'page')
    const started = await convertAsync(source._id)
    await heldHasStarted()
    // Page 1 is stored while page 2 is held.
    const deadline = Date.now() + 30_000
    while (
      (await callJson('GET', `/jobs/${started.body._id}`, { token: user.token })).body.files.length < 1 &&
      Date.now() < deadline
    ) {
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    const res = await call('GET', `/jobs/${started.body._id}/events`, { token: user.token })
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader()
    const first = await reader.read()
    expect(first.value).toContain('"status":"running"')
    // Signed URLs carry their expiry in seconds: 2.5 s is enough for them to change twice; the job did not.
    const quiet = await Promise.race([
      reader.read().then(() => 'event'),
      new Promise((resolve) => setTimeout(() => resolve('quiet'), 2500)),
    ])
    expect(quiet).toBe('quiet')
    hold.release()
    expect((await pollJob(started.body._id, user)).status).toBe('done')
    await reader.cancel()
  })
})
