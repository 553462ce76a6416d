// bench/api-keys: the per-request cost of an API key against the baseline of an access token (JWT), on the same
// route (GET /files, an account with one file) in the same workerd, in alternating rounds (token, key, token, key,
// ...) so the load of a shared machine falls on both alike; req/s by autocannon on loopback, medians over the rounds,
// the ratio the median of each round's own ratio. The key costs a SHA-256 and one D1 read (key, user) where the
// token costs an HMAC check and one D1 read (user, session); last_used_at is written at most once a minute.
// Local D1 on tmpfs when the machine has one (see bench/auth.ts: the disk's fsync is not production's figure).
import autocannon from 'autocannon'
import { existsSync } from 'node:fs'
import { loadavg } from 'node:os'
import { startDevWorker } from './wrangler-dev.ts'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const SECONDS_PER_RUN = Number(process.env.BENCH_SECONDS ?? 4)

const median = (values: readonly number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const load = () =>
  loadavg()
    .map((value) => value.toFixed(1))
    .join(' ')

async function requestsPerSecond(url: string, headers: Record<string, string>): Promise<number> {
  const result = await autocannon({ url, headers, connections: 8, duration: SECONDS_PER_RUN })
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`)
  return result.requests.average
}

const worker = await startDevWorker('bench/workers/auth.ts', {}, existsSync('/dev/shm') ? '/dev/shm' : undefined)
try {
  console.log(`load average at start: ${load()}`)
  const json = { 'content-type': 'application/json' }
  const body = JSON.stringify({ email: `bench-keys-${Date.now()}@example.com`, password: 'a benchmark password' })
  await fetch(`${worker.url}/auth/register`, { method: 'POST', headers: json, body })
  const { token } = (await (
    await fetch(`${worker.url}/auth/login`, { method: 'POST', headers: json, body })
  ).json()) as { token: string }
  const form = new FormData()
  form.append('file', new File(['hello'], 'bench.txt'))
  await fetch(`${worker.url}/files`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form })
  const made = await fetch(`${worker.url}/auth/api-keys`, {
    method: 'POST',
    headers: { ...json, authorization: `Bearer ${token}` },
    body: JSON.stringify({ name: 'bench', scopes: ['files:read'] }),
  })
  const { key } = (await made.json()) as { key: string }

  const url = `${worker.url}/files`
  const withToken = { authorization: `Bearer ${token}` }
  const withKey = { authorization: `Bearer ${key}` }
  await requestsPerSecond(url, withToken) // warm-up: both paths compiled, their statements prepared
  await requestsPerSecond(url, withKey)
  const tokens: number[] = []
  const keys: number[] = []
  const ratios: number[] = []
  for (let round = 0; round < ROUNDS; round++) {
    const baseline = await requestsPerSecond(url, withToken)
    const ours = await requestsPerSecond(url, withKey)
    tokens.push(baseline)
    keys.push(ours)
    ratios.push(ours / baseline)
  }
  console.log(`GET /files, ${ROUNDS} alternating rounds of ${SECONDS_PER_RUN} s, 8 connections; medians:`)
  console.log(
    `  API key ${median(keys).toFixed(1)} req/s · access token ${median(tokens).toFixed(1)} req/s · ratio ${median(ratios).toFixed(2)}`,
  )
  console.log(`  ratio per round: ${ratios.map((ratio) => ratio.toFixed(2)).join(' ')}`)
  console.log(`load average at end: ${load()}`)
} finally {
  worker.stop()
}
