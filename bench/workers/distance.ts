// Bench entry: the real Worker with its D1 and R2 bindings delayed as a deployment far from them would see them
// (bench/distance.ts). Each request names its distance in `x-bench-distance` and the delays in `x-bench-delays`
// (`PRIMARY_MS,REPLICA_MS,R2_MS`, the bench's settings):
// - `near`: no delay (the route's own compute, the baseline's second term);
// - `far`: D1's primary PRIMARY_MS away, a read replica REPLICA_MS away, R2 R2_MS away; a D1 session's reads go to
//   the replica, its writes to the primary, and the binding used outside a session to the primary. A `first-primary`
//   session's first round trip goes to the primary: a write's, and the read's that refreshes the isolate's floor (one
//   per FLOOR_MAX_AGE_MS, worker/db/replicas.ts); every other read starts from a bookmark, at the replica;
// - `far, no replicas`: the same with every D1 round trip at the primary (a database without read replication).
// A round trip is one statement run or one batch, as D1 sends them. `POST /__bench/cache-preview/:id` puts a 64-pixel
// WebP preview of the file in the location's cache (this Worker runs without the consumer that draws previews), so the
// bench can time the preview route's hit path.
import worker from '../../worker/index'
import { previewCacheKey } from '../../worker/previews/edge-cache'
import { PreviewQuery, previewParams } from '../../worker/previews/params'

type Distance = 'near' | 'far' | 'far, no replicas'

interface Delays {
  primaryMs: number
  replicaMs: number
  r2Ms: number
  hasReplicas: boolean
}

const WRITE = /^\s*(insert|update|delete|replace)\b/i
const wait = (ms: number) => (ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve())

type Where = 'primary' | 'replica'

/** `firstAtPrimary`: a `first-primary` session's first round trip goes to the primary, its later reads to a replica. */
function delayedTarget(inner: D1Database | D1DatabaseSession, delays: Delays, reads: Where, firstAtPrimary = false) {
  let isFirst = firstAtPrimary
  const trip = async <T>(queries: string[], run: () => Promise<T>) => {
    const atPrimary =
      !delays.hasReplicas || reads === 'primary' || isFirst || queries.some((query) => WRITE.test(query))
    isFirst = false
    await wait(atPrimary ? delays.primaryMs : delays.replicaMs)
    return run()
  }
  const statement = (real: D1PreparedStatement, query: string): D1PreparedStatement =>
    ({
      real,
      query,
      bind: (...values: unknown[]) => statement(real.bind(...values), query),
      first: (column?: string) => trip([query], () => (column === undefined ? real.first() : real.first(column))),
      all: () => trip([query], () => real.all()),
      run: () => trip([query], () => real.run()),
      raw: (options?: { columnNames?: boolean }) =>
        trip([query], () => (options?.columnNames ? real.raw({ columnNames: true }) : real.raw())),
    }) as unknown as D1PreparedStatement
  type Wrapped = { real: D1PreparedStatement; query: string }
  return {
    prepare: (query: string) => statement(inner.prepare(query), query),
    batch: (statements: D1PreparedStatement[]) => {
      const wrapped = statements as unknown as Wrapped[]
      return trip(
        wrapped.map((one) => one.query),
        () => inner.batch(wrapped.map((one) => one.real)),
      )
    },
  }
}

function delayedD1(binding: D1Database, delays: Delays): D1Database {
  return {
    ...delayedTarget(binding, delays, 'primary'),
    exec: (query: string) => wait(delays.primaryMs).then(() => binding.exec(query)),
    dump: () => binding.dump(),
    // A session's reads go to the nearest replica that has its bookmark (after a first-primary session's first round
    // trip); its writes to the primary.
    withSession: (constraint?: string) => {
      const session = binding.withSession(constraint)
      return {
        ...delayedTarget(session, delays, 'replica', constraint === 'first-primary'),
        getBookmark: () => session.getBookmark(),
      }
    },
  } as unknown as D1Database
}

/**
 * Every call on the bucket, or on a multipart upload it answers, waits R2_MS first (a get's body then streams at
 * loopback speed). `resumeMultipartUpload` makes no request: it answers at once, its upload's calls are delayed.
 */
function delayedR2<T extends object>(bucket: T, r2Ms: number): T {
  return new Proxy(bucket, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown
      if (typeof value !== 'function') return value
      const call = (...args: unknown[]) => (value as (...args: unknown[]) => unknown).apply(target, args)
      if (property === 'resumeMultipartUpload') return (...args: unknown[]) => delayedR2(call(...args) as object, r2Ms)
      return async (...args: unknown[]) => {
        await wait(r2Ms)
        const result = await call(...args)
        return property === 'createMultipartUpload' ? delayedR2(result as object, r2Ms) : result
      }
    },
  })
}

const envs = new WeakMap<object, Map<string, Env>>()

/** One delayed env per distance, delays and real env, so the Worker's per-binding caches (the drizzle client) stay warm. */
function envFor(env: Env, distance: Distance, delaysHeader: string): Env {
  let byDistance = envs.get(env)
  if (!byDistance) envs.set(env, (byDistance = new Map()))
  const key = `${distance}|${delaysHeader}`
  let delayed = byDistance.get(key)
  if (!delayed) {
    const far = distance !== 'near'
    const [primaryMs = 150, replicaMs = 10, r2Ms = 40] = delaysHeader.split(',').map(Number)
    const delays: Delays = {
      primaryMs: far ? primaryMs : 0,
      replicaMs: far ? replicaMs : 0,
      r2Ms: far ? r2Ms : 0,
      hasReplicas: distance === 'far',
    }
    delayed = { ...env, DB: delayedD1(env.DB, delays), BUCKET: delayedR2(env.BUCKET, delays.r2Ms) }
    byDistance.set(key, delayed)
  }
  return delayed
}

/** A 1×1 WebP: the hit path's cost does not depend on the bytes. */
const WEBP = Uint8Array.from(atob('UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA=='), (char) => char.charCodeAt(0))

async function cachePreview(env: Env, fileId: string): Promise<Response> {
  const file = await env.DB.prepare('SELECT user_id, hash, extension, content_type FROM files WHERE id = ?')
    .bind(fileId)
    .first<{ user_id: string; hash: string; extension: string; content_type: string }>()
  if (!file) return new Response(null, { status: 404 })
  const key = previewCacheKey(
    { userId: file.user_id, hash: file.hash, extension: file.extension, contentType: file.content_type },
    previewParams(PreviewQuery.parse({ w: '64' }), 'image/webp'),
  )
  await caches.default.put(
    key,
    new Response(WEBP, {
      headers: {
        'content-type': 'image/webp',
        'content-length': String(WEBP.length),
        'cache-control': 'public, max-age=31536000, immutable',
      },
    }),
  )
  return new Response(null, { status: 204 })
}

export default {
  fetch(request, env, ctx) {
    const seeding = /^\/__bench\/cache-preview\/([0-9a-f]{24})$/.exec(new URL(request.url).pathname)
    if (seeding && request.method === 'POST') return cachePreview(env, seeding[1]!)
    const distance = (request.headers.get('x-bench-distance') ?? 'near') as Distance
    return worker.fetch(request, envFor(env, distance, request.headers.get('x-bench-delays') ?? ''), ctx)
  },
} satisfies ExportedHandler<Env>

export { RateLimiter } from '../../worker/index'
