// D1 read replication through the Sessions API, per request: a read (GET, HEAD) starts `first-unconstrained`, so its
// first statement goes to the nearest replica; a write starts `first-primary`. A client that sends back the
// `X-D1-Bookmark` of its last answer starts from that bookmark instead, so it reads at least what it wrote (the
// header's name is the one of Cloudflare's read-replication guide). Every answer carries the session's bookmark.
import { createMiddleware } from 'hono/factory'
import type { AppEnv } from '../api'
import { ApiError } from '../errors'
import { runInSession } from './sessions'

export const BOOKMARK_HEADER = 'x-d1-bookmark'

/** D1's bookmarks: three 8-digit hex counters and a 32-digit hex hash. Anything else would fail in D1 (a 500). */
const BOOKMARK = /^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$/

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

export const d1Session = createMiddleware<AppEnv>(async (c, next) => {
  const bookmark = c.req.header(BOOKMARK_HEADER)?.trim()
  if (bookmark !== undefined && !BOOKMARK.test(bookmark)) {
    throw new ApiError('VALIDATION_FAILED', {
      message: 'X-D1-Bookmark must be a bookmark this API answered (X-D1-Bookmark of an earlier response)',
    })
  }
  const session = c.env.DB.withSession(
    bookmark || (READ_METHODS.has(c.req.method) ? 'first-unconstrained' : 'first-primary'),
  )
  await runInSession(session, next)
  const latest = session.getBookmark() ?? bookmark
  if (latest) c.header(BOOKMARK_HEADER, latest)
})
