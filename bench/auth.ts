// bench/auth: argon2id hash time in workerd (latency of a hash route minus an empty route, same isolate), and
// req/s of authenticated GET /auth/user against an empty Hono route in the same workerd (autocannon, loopback).
import autocannon from 'autocannon'
import { formatRatio, startDevWorker } from './wrangler-dev.ts'

async function latencyMs(url: string, times: number): Promise<number> {
  const samples: number[] = []
  for (let i = 0; i < times; i++) {
    const start = performance.now()
    await (await fetch(url)).arrayBuffer()
    samples.push(performance.now() - start)
  }
  samples.sort((a, b) => a - b)
  return samples[Math.floor(samples.length / 2)]!
}

async function requestsPerSecond(url: string, headers: Record<string, string> = {}): Promise<number> {
  const result = await autocannon({ url, headers, connections: 8, duration: 8 })
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`)
  return result.requests.average
}

const worker = await startDevWorker('bench/workers/auth.ts')
try {
  await latencyMs(`${worker.url}/__bench/hash`, 5) // warm-up: WASM instantiation
  const empty = await latencyMs(`${worker.url}/__bench/empty`, 50)
  const hash = await latencyMs(`${worker.url}/__bench/hash`, 30)
  console.log(`argon2id (m=19 MiB, t=2, p=1) in workerd: ${(hash - empty).toFixed(1)} ms per hash (median route ${hash.toFixed(1)} ms − empty ${empty.toFixed(1)} ms)`)

  const email = `bench-${Date.now()}@example.com`
  const json = { 'content-type': 'application/json' }
  await fetch(`${worker.url}/auth/register`, { method: 'POST', headers: json, body: JSON.stringify({ email, password: 'a benchmark password' }) })
  const login = (await (await fetch(`${worker.url}/auth/login`, { method: 'POST', headers: json, body: JSON.stringify({ email, password: 'a benchmark password' }) })).json()) as { token: string }

  const baseline = await requestsPerSecond(`${worker.url}/__bench/empty`)
  const ours = await requestsPerSecond(`${worker.url}/auth/user`, { authorization: `Bearer ${login.token}` })
  console.log(formatRatio('GET /auth/user (JWT verify + D1 user lookup)', ours, 'empty Hono route', baseline, 'req/s'))
} finally {
  worker.stop()
}
