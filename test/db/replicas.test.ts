// D1 read replication through the Sessions API (worker/db/replicas.ts), as Cloudflare's read-replication guide
// (developers.cloudflare.com/d1/best-practices/read-replication) has a Worker use it:
//   const bookmark = request.headers.get("x-d1-bookmark") ?? "first-unconstrained";
//   const session = env.DB01.withSession(bookmark);
//   response.headers.set("x-d1-bookmark", session.getBookmark() ?? "");
// "Sessions API ensures sequential consistency for all queries in a session", and D1's glossary: "Bookmarks are
// lexicographically sortable. Sorting orders a list of bookmarks from oldest-to-newest."
import { createExecutionContext, env, waitOnExecutionContext } from 'cloudflare:test'
import { beforeAll, describe, expect, it } from 'vitest'
import { createApp } from '../../worker/app'
import { BASE, requestFor, type CallOptions } from '../support/api'
import { signUp, type TestUser } from '../support/accounts'
import { D1Recorder } from '../support/counting-d1'

const recorder = new D1Recorder()
const app = createApp()
const recordedEnv = { ...env, DB: recorder.wrap(env.DB) }
const BOOKMARK = /^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$/

async function send(method: string, path: string, options: CallOptions = {}) {
  const ctx = createExecutionContext()
  recorder.start()
  const response = await app.fetch(requestFor(method, path, options), recordedEnv, ctx)
  const { sessions, trips } = recorder.stop()
  const text = await response.text()
  await waitOnExecutionContext(ctx)
  return {
    status: response.status,
    body: text ? JSON.parse(text) : undefined,
    bookmark: response.headers.get('x-d1-bookmark'),
    sessions,
    trips,
  }
}

/** D1's bookmarks compare as text, oldest first (the glossary above). */
const isNotOlder = (later: string, earlier: string) => later >= earlier

let user: TestUser
beforeAll(async () => {
  user = await signUp()
})

describe('D1 sessions per request, with bookmarks (X-D1-Bookmark)', () => {
  it('starts a write at the primary and a read anywhere, and answers each its bookmark', async () => {
    const written = await send('POST', '/files', {
      token: user.token,
      body: 'written',
      headers: { 'x-edgefloor-name': 'w.txt' },
    })
    expect(written.status).toBe(201)
    expect(written.sessions).toEqual(['first-primary'])
    expect(written.bookmark).toMatch(BOOKMARK)
    expect(written.trips.every((trip) => trip.session === 'first-primary')).toBe(true)

    const read = await send('GET', '/files', { token: user.token })
    expect(read.status).toBe(200)
    expect(read.sessions).toEqual(['first-unconstrained'])
    expect(read.bookmark).toMatch(BOOKMARK)
  })

  it("reads what the client wrote: a read sent with the write's bookmark starts from it and sees the file", async () => {
    const written = await send('POST', '/files', {
      token: user.token,
      body: 'mine',
      headers: { 'x-edgefloor-name': 'mine.txt' },
    })
    const bookmark = written.bookmark!
    const read = await send('GET', `/files/${written.body._id}`, {
      token: user.token,
      headers: { 'x-d1-bookmark': bookmark },
    })
    expect(read.status).toBe(200)
    expect(read.body).toMatchObject({ _id: written.body._id, name: 'mine.txt' })
    // The session was opened from the bookmark, not unconstrained, and its statements ran in it.
    expect(read.sessions).toEqual([bookmark])
    expect(read.trips.map((trip) => trip.session)).toEqual([bookmark])
    expect(isNotOlder(read.bookmark!, bookmark)).toBe(true)
  })

  it('answers the bookmark it was sent when the request read nothing from D1', async () => {
    const { bookmark } = await send('POST', '/files', {
      token: user.token,
      body: 'x',
      headers: { 'x-edgefloor-name': 'x.txt' },
    })
    const status = await send('GET', '/', { headers: { 'x-d1-bookmark': bookmark! } })
    expect(status.trips).toEqual([])
    expect(status.bookmark).toBe(bookmark)
  })

  it.each([
    ['not-a-bookmark'],
    ['00000000-0000000e-00000000'],
    ['00000000-0000000E-00000000-00000000000000000000000000000000'],
    ["'; DROP TABLE files; --"],
  ])('refuses a malformed bookmark %j with 400 before opening a session', async (bookmark) => {
    const refused = await send('GET', '/files', { token: user.token, headers: { 'x-d1-bookmark': bookmark } })
    expect(refused.status).toBe(400)
    expect(refused.body).toEqual({
      message: 'X-D1-Bookmark must be a bookmark this API answered (X-D1-Bookmark of an earlier response)',
      code: 'VALIDATION_FAILED',
    })
    expect(refused.sessions).toEqual([])
    expect(refused.trips).toEqual([])
  })
})

describe('@edgefloor/client keeps the bookmark', () => {
  it('sends the newest bookmark it was answered with every call, so its reads see its writes', async () => {
    const { EdgefloorClient } = await import('../../client/index')
    const sent: Array<string | null> = []
    const client = new EdgefloorClient(BASE, {
      token: user.token,
      fetch: async (input, init) => {
        const request = new Request(input, init)
        sent.push(request.headers.get('x-d1-bookmark'))
        return app.fetch(request, env, createExecutionContext())
      },
    })
    expect(client.bookmark).toBeUndefined()
    const stored = await client.upload(new Blob(['through the client']), { name: 'client.txt' })
    expect(sent).toEqual([null])
    const afterWrite = client.bookmark!
    expect(afterWrite).toMatch(BOOKMARK)
    const read = await client.file(stored._id)
    expect(read._id).toBe(stored._id)
    expect(sent[1]).toBe(afterWrite)
    expect(isNotOlder(client.bookmark!, afterWrite)).toBe(true)
  })
})
