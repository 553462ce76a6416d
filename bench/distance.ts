// bench/distance: the real routes with D1 and R2 as far away as a global deployment has them (bench/workers/distance.ts
// delays each round trip): D1's primary PRIMARY_MS away, a read replica REPLICA_MS away, R2 R2_MS away (settings of
// the bench, environment variables). Each route is timed `near` (no delay: its own compute on this machine), `far`
// (read replication: reads at the replica) and `far, no replicas` (every round trip at the primary), the three in
// alternation round after round so the load of a shared machine falls on all alike; figures are medians. The
// baseline is what the issue asks a read to cost: one replica round trip (plus one R2 round trip for a route that
// reads bytes) plus the route's own compute; the goal is a ratio of at most 1.5 for every read route. The preview is
// timed on its edge-cache hit path (the copy put there by the bench entry).
import { loadavg } from 'node:os'
import { benchLogin, type DevWorker, startDevWorker } from './wrangler-dev.ts'

const PRIMARY_MS = Number(process.env.PRIMARY_MS ?? 150)
const REPLICA_MS = Number(process.env.REPLICA_MS ?? 10)
const R2_MS = Number(process.env.R2_MS ?? 40)
const ROUNDS = Number(process.env.ROUNDS ?? 9)
const GOAL = 1.5

type Distance = 'near' | 'far' | 'far, no replicas'
const DISTANCES: Distance[] = ['near', 'far', 'far, no replicas']

interface Route {
  name: string
  /** R2 round trips the route needs besides D1 (in the baseline). */
  r2Trips: number
  isRead: boolean
  /** The request to time (what it needs made first, untimed). */
  request(): [string, RequestInit] | Promise<[string, RequestInit]>
}

const median = (values: readonly number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

async function timed(worker: DevWorker, route: Route, distance: Distance): Promise<number> {
  const [path, init] = await route.request()
  const headers = new Headers(init.headers)
  headers.set('x-bench-distance', distance)
  headers.set('x-bench-delays', `${PRIMARY_MS},${REPLICA_MS},${R2_MS}`)
  const start = performance.now()
  const response = await fetch(`${worker.url}${path}`, { ...init, headers })
  await response.arrayBuffer()
  const elapsed = performance.now() - start
  if (response.status >= 300) throw new Error(`${route.name} (${distance}): ${response.status}`)
  return elapsed
}

let worker: DevWorker | undefined
try {
  worker = await startDevWorker('bench/workers/distance.ts')
  const auth = await benchLogin(worker)
  const json = { ...auth, 'content-type': 'application/json' }
  const upload = async (name: string, body: string) =>
    (await (
      await fetch(`${worker!.url}/files`, { method: 'POST', headers: { ...auth, 'x-edgefloor-name': name }, body })
    ).json()) as { _id: string }
  const file = await upload('report.txt', 'a file far from its database\n'.repeat(100))
  const job = (await (
    await fetch(`${worker.url}/files/${file._id}/convert`, {
      method: 'POST',
      headers: { ...json, prefer: 'respond-async' },
      body: '{}',
    })
  ).json()) as { _id: string }
  const tusUpload = async (length: number) => {
    const tus = await fetch(`${worker!.url}/files/tus`, {
      method: 'POST',
      headers: { ...auth, 'tus-resumable': '1.0.0', 'upload-length': String(length) },
    })
    return new URL(tus.headers.get('location')!).pathname
  }
  const tusPath = await tusUpload(10)
  const seeded = await fetch(`${worker.url}/__bench/cache-preview/${file._id}`, { method: 'POST' })
  if (seeded.status !== 204) throw new Error(`seeding the preview cache: ${seeded.status}`)

  const read = (name: string, path: string, r2Trips = 0, init: RequestInit = {}): Route => ({
    name,
    r2Trips,
    isRead: true,
    request: () => [path, { ...init, headers: { ...auth, ...(init.headers as Record<string, string>) } }],
  })
  const routes: Route[] = [
    read('GET /auth/user', '/auth/user'),
    read('GET /files', '/files'),
    read('GET /files/:id', `/files/${file._id}`),
    read('GET /files/:id/files', `/files/${file._id}/files`),
    read('GET /files/:id/jobs', `/files/${file._id}/jobs`),
    read('GET /jobs/:id', `/jobs/${job._id}`),
    read('HEAD /files/tus/:id', tusPath, 0, { method: 'HEAD', headers: { 'tus-resumable': '1.0.0' } }),
    read('GET /files/:id/download', `/files/${file._id}/download`, 1),
    read('GET /files/:id/preview (edge cache hit)', `/files/${file._id}/preview?w=64`, 0, {
      headers: { accept: 'image/webp' },
    }),
    {
      // A fresh upload each time (made untimed); R2 stores the part, joins, and is read for the type.
      name: 'PATCH /files/tus/:id (completing the upload, a write)',
      r2Trips: 3,
      isRead: false,
      request: async () => [
        await tusUpload(5),
        {
          method: 'PATCH',
          headers: {
            ...auth,
            'tus-resumable': '1.0.0',
            'upload-offset': '0',
            'content-type': 'application/offset+octet-stream',
          },
          body: 'small',
        },
      ],
    },
    {
      name: 'POST /files (a write)',
      r2Trips: 1,
      isRead: false,
      request: () => [
        '/files',
        { method: 'POST', headers: { ...auth, 'x-edgefloor-name': 'small.txt' }, body: 'small' },
      ],
    },
  ]

  console.log(
    `distance: D1 primary ${PRIMARY_MS} ms, replica ${REPLICA_MS} ms, R2 ${R2_MS} ms away; ${ROUNDS} rounds; load average ${loadavg()[0]!.toFixed(1)}`,
  )
  // A warm-up of every route and distance: the first request of a kind compiles its code paths.
  for (const route of routes) for (const distance of DISTANCES) await timed(worker, route, distance)
  const samples = new Map(
    routes.map((route) => [route.name, new Map(DISTANCES.map((distance) => [distance, [] as number[]]))]),
  )
  for (let round = 0; round < ROUNDS; round++) {
    for (const route of routes)
      for (const distance of DISTANCES)
        samples
          .get(route.name)!
          .get(distance)!
          .push(await timed(worker, route, distance))
  }

  console.log(
    '| Route | near (compute) | far | far, no replicas | baseline: replica RT + R2 RTs + compute | far / baseline |',
  )
  console.log('|---|---|---|---|---|---|')
  const misses: string[] = []
  for (const route of routes) {
    const [near, far, primaryOnly] = DISTANCES.map((distance) => median(samples.get(route.name)!.get(distance)!))
    const baseline = REPLICA_MS + route.r2Trips * R2_MS + near!
    const ratio = far! / baseline
    if (route.isRead && ratio > GOAL) misses.push(route.name)
    console.log(
      `| \`${route.name}\` | ${near!.toFixed(1)} ms | ${far!.toFixed(1)} ms | ${primaryOnly!.toFixed(1)} ms | ${baseline.toFixed(1)} ms | ${ratio.toFixed(2)} |`,
    )
  }
  console.log(
    misses.length === 0
      ? `every read route within ${GOAL}× its baseline`
      : `over ${GOAL}× its baseline: ${misses.join(', ')}`,
  )
} finally {
  await worker?.stop()
}
