// How a client learns about a job without waiting on the convert request: Server-Sent Events, webhooks to a
// loopback receiver (test/setup/webhook-receiver.ts), and jobs that uploads start by themselves.
import { env } from 'cloudflare:test'
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { bodyAt, call, callJson, callJsonWithSettings } from '../support/api'
import { signUp, type TestUser } from '../support/accounts'
import { heldHasStarted, hold, registerChainConverters, resetHold } from '../support/chain-converters'
import { multipartBody, uploaded } from '../support/files'
import { pollJob } from '../support/jobs'
import { until } from '../support/until'

let user: TestUser

beforeAll(async () => {
  registerChainConverters()
  user = await signUp()
})
beforeEach(resetHold)
// A test that fails before releasing the held step must not leave it holding the queue for the next tests.
afterEach(() => hold.release())

/** The `job` events in a chunk of an event stream, parsed. */
function jobEvents(text: string): Array<{ status: string; files: Array<{ name: string }> }> {
  return text
    .split('\n\n')
    .filter((block) => block.includes('event: job'))
    .map((block) =>
      JSON.parse(
        block
          .split('\n')
          .find((line) => line.startsWith('data: '))!
          .slice('data: '.length),
      ),
    )
}

describe('GET /jobs/:id/events', () => {
  it('streams the job as it changes and ends once it is done', async () => {
    const source = await uploaded(user, 'watched.thold', 'seen')
    const started = await callJson('POST', `/files/${source._id}/convert`, {
      token: user.token,
      headers: { prefer: 'respond-async' },
    })
    await heldHasStarted()
    const res = await call('GET', `/jobs/${started.body._id}/events`, { token: user.token })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/)
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader()
    // The first event arrives while the step is still held: the stream does not wait for the end.
    const first = await reader.read()
    expect(jobEvents(first.value!)).toEqual([expect.objectContaining({ status: 'running', files: [] })])
    hold.release()
    let rest = ''
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rest += chunk.value
    const last = jobEvents(rest).at(-1)!
    expect(last.status).toBe('done')
    expect(last.files.map((file) => file.name)).toEqual(['watched (1 of 1)'])
  })
})

// WHATWG HTML, "Server-sent events": `new EventSource(url [, { withCredentials }])` takes a URL and nothing else, so
// a browser cannot send a bearer header; the job's view carries a signed URL instead.
describe("a job's events_url (EventSource: no headers)", () => {
  async function startedJob(owner: TestUser, name: string) {
    const source = await uploaded(owner, name, 'seen')
    const started = await callJson('POST', `/files/${source._id}/convert`, {
      token: owner.token,
      headers: { prefer: 'respond-async' },
    })
    return bodyAt(started, 202)
  }
  const pathOf = (url: string) => {
    const parsed = new URL(url)
    return `${parsed.pathname}${parsed.search}`
  }

  it('streams the job to a request without any header, and only that job', async () => {
    const job = await startedJob(user, 'signed.tpart')
    expect(job.events_url).toMatch(
      new RegExp(`^http://edgefloor\\.test/jobs/${job._id}/events\\?token=\\d+\\.[A-Za-z0-9_-]{43}$`),
    )
    const read = await callJson('GET', `/jobs/${job._id}`, { token: user.token })
    expect(read.body.events_url).toMatch(new RegExp(`/jobs/${job._id}/events\\?token=`))

    const res = await call('GET', pathOf(job.events_url))
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/)
    let text = ''
    for (const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader(); ; ) {
      const chunk = await reader.read()
      if (chunk.done) break
      text += chunk.value
    }
    expect(jobEvents(text).at(-1)).toMatchObject({ _id: job._id, status: 'done' })
  })

  it("refuses the token on another job, the owner's own included, and a token altered or expired", async () => {
    const job = await startedJob(user, 'mine.tpart')
    const other = await startedJob(user, 'other.tpart')
    const token = new URL(job.events_url).searchParams.get('token')!
    const refused = {
      status: 401,
      body: { message: 'the job events link is invalid or has expired', code: 'EVENTS_LINK_INVALID' },
    }
    expect(await callJson('GET', `/jobs/${other._id}/events?token=${token}`)).toMatchObject(refused)
    const stranger = await signUp()
    const theirs = await startedJob(stranger, 'theirs.tpart')
    expect(await callJson('GET', `/jobs/${theirs._id}/events?token=${token}`)).toMatchObject(refused)
    const [expires, signature] = token.split('.')
    expect(await callJson('GET', `/jobs/${job._id}/events?token=${Number(expires) + 60}.${signature}`)).toMatchObject(
      refused,
    )
    expect(await callJson('GET', `/jobs/${job._id}/events?token=not-a-token`)).toMatchObject(refused)
    const { loadConfig } = await import('../../worker/config')
    const { signToken } = await import('../../worker/files/signed-url')
    const stamp = (await env.DB.prepare('SELECT security_stamp FROM users WHERE id = ?')
      .bind(user.id)
      .first<string>('security_stamp'))!
    const expired = await signToken(
      loadConfig(env),
      'job events',
      job._id,
      { id: user.id, securityStamp: stamp },
      600,
      Date.now() - 3600_000,
    )
    expect(await callJson('GET', `/jobs/${job._id}/events?token=${expired}`)).toMatchObject(refused)
    // A file's download token is not an events token, even for an id that happens to match.
    const file = await uploaded(user, 'file.txt', 'x')
    const fileToken = new URL(file.url).searchParams.get('token')!
    expect(await callJson('GET', `/jobs/${job._id}/events?token=${fileToken}`)).toMatchObject(refused)
  })

  it('ends with logout everywhere (the security stamp changes)', async () => {
    const owner = await signUp()
    const job = await startedJob(owner, 'stamped.tpart')
    expect((await callJson('POST', '/auth/logout', { token: owner.token, json: { all: true } })).status).toBe(200)
    expect(await callJson('GET', pathOf(job.events_url))).toMatchObject({
      status: 401,
      body: { code: 'EVENTS_LINK_INVALID' },
    })
  })
})

describe('webhooks', () => {
  const receiver = (path: string) => `${env.WEBHOOK_RECEIVER_URL}${path}`

  function deliveries(path: string, count: number) {
    return until(
      `${count} webhook deliveries to ${path}`,
      async (): Promise<Array<{ headers: Record<string, string>; body: string; status: number }>> =>
        (await fetch(`${env.WEBHOOK_RECEIVER_URL}/deliveries?path=${path}`)).json(),
      (found) => found.length >= count,
    )
  }

  async function signatureOf(secret: string, message: string) {
    const key = await crypto.subtle.importKey(
      'raw',
      new TextEncoder().encode(secret),
      { name: 'HMAC', hash: 'SHA-256' },
      false,
      ['sign'],
    )
    const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(message)))
    return `sha256=${mac.toHex()}`
  }

  it('refuses an http callback_url unless WEBHOOK_ALLOW_HTTP is set', async () => {
    const source = await uploaded(user, 'plain.tpart', 'abc')
    const res = await callJson('POST', `/files/${source._id}/convert`, {
      token: user.token,
      json: { callback_url: receiver('/hooks/refused') },
    })
    expect(res).toMatchObject({ status: 400, body: { message: 'callback_url must be https' } })
    expect((await callJson('GET', `/files/${source._id}/jobs`, { token: user.token })).body).toEqual([])
  })

  it('delivers job.done, signed with the job secret, to a loopback receiver', async () => {
    const source = await uploaded(user, 'hooked.tpart', 'abc')
    const path = `/hooks/${source._id}`
    const res = await callJsonWithSettings({ WEBHOOK_ALLOW_HTTP: 'true' }, 'POST', `/files/${source._id}/convert`, {
      token: user.token,
      json: { callback_url: receiver(path) },
    })
    const [made] = bodyAt(res, 200)
    const job = (await callJson('GET', `/jobs/${made!.job_id}`, { token: user.token })).body
    const [delivery] = await deliveries(path, 1)
    expect(JSON.parse(delivery!.body)).toEqual({
      event: 'job.done',
      job: { _id: job._id, file_id: source._id, status: 'done', error: null },
    })
    expect(delivery!.headers['content-type']).toBe('application/json')
    const timestamp = delivery!.headers['x-edgefloor-timestamp']!
    expect(delivery!.headers['x-edgefloor-signature']).toBe(
      await signatureOf(job.webhook_secret!, `${timestamp}.${delivery!.body}`),
    )
  })

  it('delivers job.failed, and retries a receiver that answered 5xx', async () => {
    const source = await uploaded(user, 'hooked.tbroken', 'x')
    const path = `/flaky/${source._id}`
    const res = await callJsonWithSettings({ WEBHOOK_ALLOW_HTTP: 'true' }, 'POST', `/files/${source._id}/convert`, {
      token: user.token,
      json: { callback_url: receiver(path) },
    })
    expect(res.status).toBe(422)
    const { job } = res.body
    const received = await deliveries(path, 2)
    expect(received.map((delivery) => delivery.status)).toEqual([503, 200])
    expect(received[1]!.body).toBe(received[0]!.body)
    expect(JSON.parse(received[1]!.body)).toMatchObject({
      event: 'job.failed',
      job: {
        _id: job,
        status: 'failed',
        error: 'test-broken on "hooked.tbroken" failed: the input is corrupt at byte 3',
      },
    })
  })
})

describe('FILES_AUTO_CONVERT', () => {
  const upload = (settings: Partial<Record<keyof Env, string>>, name: string, bytes: string) =>
    callJsonWithSettings(settings, 'POST', '/files', {
      token: user.token,
      body: multipartBody(name, bytes),
      headers: { 'x-edgefloor-name': name },
    })

  it('starts the chain of an upload by itself', async () => {
    const res = await upload({ FILES_AUTO_CONVERT: 'true' }, 'auto.tpart', 'abc')
    const file = bodyAt(res, 201)
    const [listed] = (await callJson('GET', `/files/${file._id}/jobs`, { token: user.token })).body
    expect(listed).toMatchObject({ file_id: file._id })
    const job = await pollJob(listed!._id, user)
    expect(job.status).toBe('done')
    expect(job.files.map((made) => [made.name, made.parent_file])).toEqual([['auto (1 of 1)', file._id]])
  })

  it('stores without a job an upload nothing converts, and one whose bytes its converter refuses', async () => {
    for (const name of ['auto.xyz', 'auto.jpg']) {
      const res = await upload({ FILES_AUTO_CONVERT: 'true' }, name, 'plain text')
      expect(res.status, name).toBe(201)
      const file = res.body
      expect((await callJson('GET', `/files/${file._id}/jobs`, { token: user.token })).body, name).toEqual([])
    }
  })

  it('starts nothing when it is off', async () => {
    const res = await upload({}, 'manual.tpart', 'abc')
    const file = res.body
    expect((await callJson('GET', `/files/${file._id}/jobs`, { token: user.token })).body).toEqual([])
  })
})
