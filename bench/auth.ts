// bench/auth: argon2id hash time in workerd (latency of a hash route minus an empty route, same isolate), and
// req/s of authenticated GET /auth/user against an empty Hono route in the same workerd (autocannon, loopback),
// in alternating rounds (empty, ours, empty, ours, ...) so that the load of a shared machine falls on both alike;
// the figures are medians over the rounds, the ratio the median of each round's own ratio.
//
// Local D1 (miniflare) runs every query, reads included, as a Durable Object storage transaction whose commit
// fsyncs the database's WAL: on a disk that others are writing to, that fsync alone takes 5–40 ms, which is the
// disk's figure, not ours (production D1 answers a read without a local fsync). So the Worker runs twice: with its
// local state on tmpfs (/dev/shm: the cost of our code and of the query itself), and on the repository's disk
// (what `wrangler dev` on this machine gives).
import autocannon from 'autocannon'
import { existsSync } from 'node:fs'
import { loadavg } from 'node:os'
import { type DevWorker, startDevWorker } from './wrangler-dev.ts'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const SECONDS_PER_RUN = Number(process.env.BENCH_SECONDS ?? 4)

async function latencyMs(url: string, times: number): Promise<number> {
  const samples: number[] = []
  for (let i = 0; i < times; i++) {
    const start = performance.now()
    await (await fetch(url)).arrayBuffer()
    samples.push(performance.now() - start)
  }
  return median(samples)
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

async function requestsPerSecond(url: string, headers: Record<string, string> = {}): Promise<number> {
  const result = await autocannon({ url, headers, connections: 8, duration: SECONDS_PER_RUN })
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`)
  return result.requests.average
}

const load = () =>
  loadavg()
    .map((value) => value.toFixed(1))
    .join(' ')

/** An account logged in on `worker`: the Authorization header of its access token. */
async function logIn(worker: DevWorker): Promise<Record<string, string>> {
  const email = `bench-${Date.now()}@example.com`
  const json = { 'content-type': 'application/json' }
  const body = JSON.stringify({ email, password: 'a benchmark password' })
  await fetch(`${worker.url}/auth/register`, { method: 'POST', headers: json, body })
  const login = (await (await fetch(`${worker.url}/auth/login`, { method: 'POST', headers: json, body })).json()) as {
    token: string
  }
  return { authorization: `Bearer ${login.token}` }
}

const tmpfs = existsSync('/dev/shm') ? '/dev/shm' : undefined
const setups = [
  ...(tmpfs ? [{ label: 'D1 state on tmpfs', parent: tmpfs }] : []),
  { label: 'D1 state on disk', parent: undefined },
]
const workers: { label: string; worker: DevWorker }[] = []
try {
  // One after the other: two `wrangler dev` starting at once contend for the same local sockets.
  for (const setup of setups)
    workers.push({ label: setup.label, worker: await startDevWorker('bench/workers/auth.ts', {}, setup.parent) })
  const { worker } = workers[0]!
  console.log(`load average at start: ${load()}`)

  await latencyMs(`${worker.url}/__bench/hash`, 5) // warm-up: WASM instantiation
  const empty = await latencyMs(`${worker.url}/__bench/empty`, 50)
  const hash = await latencyMs(`${worker.url}/__bench/hash`, 30)
  console.log(
    `argon2id (m=19 MiB, t=2, p=1) in workerd: ${(hash - empty).toFixed(1)} ms per hash (median route ${hash.toFixed(1)} ms − empty ${empty.toFixed(1)} ms)`,
  )

  const runs = await Promise.all(
    workers.map(async ({ label, worker }) => ({
      label,
      worker,
      auth: await logIn(worker),
      ours: [] as number[],
      baseline: [] as number[],
      status: [] as number[],
      ratios: [] as number[],
    })),
  )
  for (const run of runs) await requestsPerSecond(`${run.worker.url}/auth/user`, run.auth) // warm-up: both paths compiled, both statements prepared
  for (let round = 0; round < ROUNDS; round++) {
    for (const run of runs) {
      const baseline = await requestsPerSecond(`${run.worker.url}/__bench/empty`)
      const ours = await requestsPerSecond(`${run.worker.url}/auth/user`, run.auth)
      // For the record, not the goal: the app's unauthenticated GET / pays the same middleware, without auth.
      run.status.push(await requestsPerSecond(`${run.worker.url}/`))
      run.baseline.push(baseline)
      run.ours.push(ours)
      run.ratios.push(ours / baseline)
    }
  }
  console.log(
    `GET /auth/user (JWT verify + one D1 read of account and session), ${ROUNDS} alternating rounds of ${SECONDS_PER_RUN} s, 8 connections; medians:`,
  )
  for (const run of runs) {
    const ours = median(run.ours).toFixed(1)
    const baseline = median(run.baseline).toFixed(1)
    console.log(
      `  ${run.label}: ours ${ours} req/s · empty Hono route ${baseline} req/s · ratio ${median(run.ratios).toFixed(2)}`,
    )
    console.log(
      `    ratio per round: ${run.ratios.map((ratio) => ratio.toFixed(2)).join(' ')}; the app's GET / (same middleware, no auth) ${median(run.status).toFixed(1)} req/s`,
    )
  }
  console.log(`load average at end: ${load()}`)
} finally {
  for (const { worker } of workers) worker.stop()
}
