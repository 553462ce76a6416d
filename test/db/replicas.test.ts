// D1 read replication through the Sessions API (worker/db/replicas.ts), as Cloudflare's read-replication guide
// (developers.cloudflare.com/d1/best-practices/read-replication) has a Worker use it:
//   const bookmark = request.headers.get("x-d1-bookmark") ?? "first-unconstrained";
//   const session = env.DB01.withSession(bookmark);
//   response.headers.set("x-d1-bookmark", session.getBookmark() ?? "");
// "Sessions API ensures sequential consistency for all queries in a session"; `withSession("first-primary")` "will
// route the first query to the primary database instance"; a `bookmark` parameter guarantees "that the session starts
// with a database version that is at least as up-to-date as the provided bookmark". D1's glossary: "Bookmarks are
// lexicographically sortable. Sorting orders a list of bookmarks from oldest-to-newest."
// Edgefloor starts a read from the isolate's floor instead of `first-unconstrained` (the newest bookmark of a session
// that started at the primary, younger than FLOOR_MAX_AGE_MS), so a logout is refused everywhere within that bound.
// Time is vitest's fake Date (nothing waits); a fresh isolate is a fresh import of the app (vi.resetModules).
import { createExecutionContext, env, waitOnExecutionContext } from 'cloudflare:test'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createApp } from '../../worker/app'
import { FLOOR_MAX_AGE_MS } from '../../worker/db/replicas'
import { BASE, requestFor, type CallOptions } from '../support/api'
import { signUp, type TestUser } from '../support/accounts'
import { D1Recorder } from '../support/counting-d1'

const recorder = new D1Recorder()
const app = createApp()
const recordedEnv = { ...env, DB: recorder.wrap(env.DB) }
const BOOKMARK = /^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$/
/** A well-formed bookmark older than any the database answers. */
const OLDEST = `00000000-00000000-00000000-${'0'.repeat(32)}`

type App = ReturnType<typeof createApp>

async function send(method: string, path: string, options: CallOptions = {}, to: App = app) {
  const ctx = createExecutionContext()
  recorder.start()
  const response = await to.fetch(requestFor(method, path, options), recordedEnv, ctx)
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

/** The app as a new isolate has it: its own module state, so no floor yet. */
async function freshIsolate(): Promise<App> {
  vi.resetModules()
  const fresh = await import('../../worker/app')
  return fresh.createApp()
}

const advanceClock = (ms: number) => vi.setSystemTime(Date.now() + ms)

/** D1's bookmarks compare as text, oldest first (the glossary above). */
const isNotOlder = (later: string, earlier: string) => later >= earlier

let user: TestUser
beforeAll(async () => {
  user = await signUp()
  vi.useFakeTimers({ toFake: ['Date'] })
})

afterAll(() => {
  vi.useRealTimers()
})

describe('D1 sessions per request, with bookmarks (X-D1-Bookmark)', () => {
  it('starts a write at the primary and a read from the floor the write raised, and answers each its bookmark', async () => {
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
    expect(read.sessions).toEqual([written.bookmark])
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
    // The session was opened from the bookmark (the floor is that same write's), and its statements ran in it.
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

describe("the isolate's floor: every read at least as new as the primary FLOOR_MAX_AGE_MS ago", () => {
  it("starts a fresh isolate's first read at the primary, makes its bookmark the floor, and the next read starts from it", async () => {
    const isolate = await freshIsolate()
    const first = await send('GET', '/files', { token: user.token }, isolate)
    expect(first.status).toBe(200)
    expect(first.sessions).toEqual(['first-primary'])
    expect(first.bookmark).toMatch(BOOKMARK)
    const next = await send('GET', '/files', { token: user.token }, isolate)
    expect(next.sessions).toEqual([first.bookmark])
    expect(next.trips.map((trip) => trip.session)).toEqual([first.bookmark])
  })

  it('goes to the primary again once the floor is FLOOR_MAX_AGE_MS old, one read for the interval', async () => {
    const isolate = await freshIsolate()
    const first = await send('GET', '/files', { token: user.token }, isolate)
    advanceClock(FLOOR_MAX_AGE_MS - 1)
    expect((await send('GET', '/files', { token: user.token }, isolate)).sessions).toEqual([first.bookmark])
    advanceClock(1)
    const refreshed = await send('GET', '/files', { token: user.token }, isolate)
    expect(refreshed.sessions).toEqual(['first-primary'])
    expect(isNotOlder(refreshed.bookmark!, first.bookmark!)).toBe(true)
    expect((await send('GET', '/files', { token: user.token }, isolate)).sessions).toEqual([refreshed.bookmark])
  })

  it("raises the floor with every write's bookmark (a write starts at the primary), and restarts its age", async () => {
    const isolate = await freshIsolate()
    const read = await send('GET', '/files', { token: user.token }, isolate)
    advanceClock(FLOOR_MAX_AGE_MS - 1000)
    const written = await send(
      'POST',
      '/files',
      { token: user.token, body: 'raises the floor', headers: { 'x-edgefloor-name': 'floor.txt' } },
      isolate,
    )
    expect(written.status).toBe(201)
    expect(written.sessions).toEqual(['first-primary'])
    expect(written.bookmark! > read.bookmark!).toBe(true)
    // Past the first read's interval, within the write's: the write's bookmark is the floor.
    advanceClock(1000)
    const after = await send('GET', `/files/${written.body._id}`, { token: user.token }, isolate)
    expect(after.status).toBe(200)
    expect(after.sessions).toEqual([written.bookmark])
  })

  it("starts from a client's bookmark newer than the floor, and from the floor when the client's is older", async () => {
    const isolate = await freshIsolate()
    const floor = (await send('GET', '/files', { token: user.token }, isolate)).bookmark!
    // A write sent with a bookmark starts where a read would (not at the primary), so it leaves the floor as it was.
    const written = await send(
      'POST',
      '/files',
      { token: user.token, body: 'newer', headers: { 'x-edgefloor-name': 'newer.txt', 'x-d1-bookmark': floor } },
      isolate,
    )
    expect(written.sessions).toEqual([floor])
    expect(written.bookmark! > floor).toBe(true)
    const newer = await send(
      'GET',
      '/files',
      { token: user.token, headers: { 'x-d1-bookmark': written.bookmark! } },
      isolate,
    )
    expect(newer.sessions).toEqual([written.bookmark])
    // A client cannot send the isolate below its floor: an old bookmark starts from the floor.
    const older = await send('GET', '/files', { token: user.token, headers: { 'x-d1-bookmark': OLDEST } }, isolate)
    expect(older.sessions).toEqual([floor])
  })

  it('refuses a logged-out token at every location within FLOOR_MAX_AGE_MS of the logout (the bound)', async () => {
    const victim = await signUp()
    const here = await freshIsolate()
    const there = await freshIsolate()
    // The isolate far from the logout takes its floor before it, at t0.
    const before = await send('GET', '/auth/user', { token: victim.token }, there)
    expect(before.status).toBe(200)
    expect(before.sessions).toEqual(['first-primary'])
    advanceClock(5000)
    // The device logs out here, at t0 + 5 s: a write, at the primary.
    const logout = await send('POST', '/auth/logout', { token: victim.token }, here)
    expect(logout.status).toBe(200)
    expect(logout.sessions).toEqual(['first-primary'])
    // Another client holding the token, without the logout's bookmark, reads here at once: here's floor has the logout.
    const sameLocation = await send('GET', '/auth/user', { token: victim.token }, here)
    expect(sameLocation.status).toBe(401)
    expect(isNotOlder(sameLocation.sessions[0]!, logout.bookmark!)).toBe(true)
    // There, within the interval, the read starts from a floor older than the logout: a replica may still answer it.
    const stale = await send('GET', '/files', { token: victim.token }, there)
    expect(stale.sessions).toEqual([before.bookmark])
    expect(before.bookmark! < logout.bookmark!).toBe(true)
    // At t0 + FLOOR_MAX_AGE_MS (less than FLOOR_MAX_AGE_MS after the logout) there's floor is refreshed at the primary,
    // and from then on every read there starts from a copy at least as new as the logout.
    advanceClock(FLOOR_MAX_AGE_MS - 5000)
    const refreshed = await send('GET', '/auth/user', { token: victim.token }, there)
    expect(refreshed.sessions).toEqual(['first-primary'])
    expect(refreshed.status).toBe(401)
    expect(isNotOlder(refreshed.bookmark!, logout.bookmark!)).toBe(true)
    const after = await send('GET', '/files', { token: victim.token }, there)
    expect(after.status).toBe(401)
    expect(isNotOlder(after.sessions[0]!, logout.bookmark!)).toBe(true)
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
