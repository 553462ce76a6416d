// D1 read replication through the Sessions API, per request. A write starts `first-primary`. A read starts from the
// isolate's floor: the newest bookmark this isolate has taken from a session that started at the primary, when it is
// younger than FLOOR_MAX_AGE_MS; when it is older (or the isolate has none yet), the read starts `first-primary` and
// its bookmark becomes the new floor. A client that sends back the `X-D1-Bookmark` of its last answer starts from the
// newer of its bookmark and the floor, so it reads at least what it wrote (the header's name is the one of Cloudflare's
// read-replication guide). Every answer carries the session's bookmark.
//
// The floor bounds a replica's lag for everyone, a client's bookmark only for that client (and a client chooses what
// it sends): a request that starts at time t reads a copy at least as new as the primary was at t − FLOOR_MAX_AGE_MS,
// because Cloudflare's guide says a session started with a bookmark "starts with a database version that is at least as
// up-to-date as the provided bookmark". So a logout (a write at the primary) is refused everywhere within
// FLOOR_MAX_AGE_MS (docs/global-clients.md, "Logout and revoked sessions").
import { createMiddleware } from 'hono/factory'
import type { AppEnv } from '../api'
import { ApiError } from '../errors'
import { runInSession } from './sessions'

export const BOOKMARK_HEADER = 'x-d1-bookmark'

/**
 * How old the floor may be before a read refreshes it at the primary: the bound on how long a replica may answer a
 * logged-out token. 30 s keeps that bound at the scale of a page reload while a busy isolate pays the primary's
 * distance once per 30 s (docs/global-clients.md says why).
 */
export const FLOOR_MAX_AGE_MS = 30_000

/** D1's bookmarks: three 8-digit hex counters and a 32-digit hex hash. Anything else would fail in D1 (a 500). */
const BOOKMARK = /^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$/

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

/**
 * The newer of two bookmarks. D1's glossary: "Bookmarks are lexicographically sortable. Sorting orders a list of
 * bookmarks from oldest-to-newest", so they compare as text.
 */
export function newerBookmark(one: string, other: string | undefined): string {
  return other !== undefined && other > one ? other : one
}

interface Floor {
  bookmark: string
  /** When the session it came from started at the primary: the copy is at least as new as the primary was then. */
  obtainedAtMs: number
}

/** This isolate's floor (the Worker has one D1 database, DB). */
let floor: Floor | undefined

/** Raises the floor to `bookmark`, taken from a session that started at the primary at `startedAtMs`. */
function raiseFloor(bookmark: string, startedAtMs: number): void {
  // Each of the two is at least the primary at its own time, so the newer bookmark is at least the later of the two.
  floor = {
    bookmark: newerBookmark(bookmark, floor?.bookmark),
    obtainedAtMs: Math.max(startedAtMs, floor?.obtainedAtMs ?? startedAtMs),
  }
}

/** What a request's session starts from: `first-primary`, or the newest bookmark it may start from. */
function sessionStart(method: string, clientBookmark: string | undefined, nowMs: number): string {
  if (!floor || nowMs - floor.obtainedAtMs >= FLOOR_MAX_AGE_MS) return 'first-primary'
  // A write without a bookmark goes to the primary anyway; with one it starts where a read would.
  if (!READ_METHODS.has(method) && !clientBookmark) return 'first-primary'
  return newerBookmark(floor.bookmark, clientBookmark)
}

export const d1Session = createMiddleware<AppEnv>(async (c, next) => {
  const bookmark = c.req.header(BOOKMARK_HEADER)?.trim()
  if (bookmark !== undefined && !BOOKMARK.test(bookmark)) {
    throw new ApiError('VALIDATION_FAILED', {
      message: 'X-D1-Bookmark must be a bookmark this API answered (X-D1-Bookmark of an earlier response)',
    })
  }
  const startedAtMs = Date.now()
  const start = sessionStart(c.req.method, bookmark, startedAtMs)
  const session = c.env.DB.withSession(start)
  await runInSession(session, next)
  const latest = session.getBookmark() ?? undefined
  if (start === 'first-primary' && latest) raiseFloor(latest, startedAtMs)
  const answered = latest ?? bookmark
  if (answered) c.header(BOOKMARK_HEADER, answered)
})
