// bench/hostile: every case of the hostile-input corpus (test/hostile/corpus.ts) through its converter in a
// wrangler dev Worker: the CPU time the workerd process spent on it (/proc utime + stime), its extra resident
// memory (peak while it ran − before), and the latency of `GET /` asked over and over meanwhile, against the
// idle latency of `GET /` in the same run (the baseline). Goals (issue 17): < 2 s CPU, < 64 MiB, latency ≤ 2× idle.
// Cases refused before a job are not run: they never reach a converter.
// Then, for each converter, its worst case (the most CPU above) again and again: `GET /` latency while it runs
// against idle latency, in alternating rounds (idle, converting, idle, …), as median and p95 over all rounds: once
// with `GET /` on the Worker that converts (one isolate, one thread: what `wrangler dev` does with the API and
// consumer Workers), and once as deployed, with `GET /` on the real API Worker in a workerd process of its own
// while the bench Worker converts in another (on Cloudflare the consumer Worker's isolates are not the API's).
import { readFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { HOSTILE_CASES, type HostileCase } from '../test/hostile/corpus.ts'
import { encryptWithQpdf } from '../test/support/qpdf.ts'
import { startConvertWorker } from './convert-harness.ts'
import { API_ENTRY, type DevWorker, memoryDuring, startDevWorker, workerdPids } from './wrangler-dev.ts'

const CONVERTERS: Record<string, string> = {
  '.pdf': 'pdf-to-png',
  '.txt': 'text-to-png',
  '.csv': 'office-to-pdf',
  '.mp3': 'audio-to-text',
  '.wav': 'audio-to-text',
}
const converterOf = (name: string) => CONVERTERS[name.slice(name.lastIndexOf('.'))] ?? 'image-to-png'
/** Rounds of the responsiveness part, and `GET /` samples taken while converting in each. */
const ROUNDS = 5
const SAMPLES_PER_ROUND = 12

/** CPU seconds (user + system) the processes have used so far. */
function cpuSeconds(pids: readonly number[]): number {
  let ticks = 0
  for (const pid of pids) {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
    ticks += Number(fields[11]) + Number(fields[12]) // utime, stime (fields 14 and 15 of stat)
  }
  return ticks / 100
}

async function latencyMs(url: string): Promise<number> {
  const start = performance.now()
  await (await fetch(`${url}/`)).arrayBuffer()
  return performance.now() - start
}

function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0
}
const median = (values: readonly number[]) => quantile(values, 0.5)
const load = () => loadavg()[0]!.toFixed(1)
/** The case's file (an encrypted case encrypted by qpdf, as the tests have it). */
const caseBytes = async (hostile: HostileCase) =>
  hostile.encryption ? encryptWithQpdf(await hostile.bytes(), hostile.encryption) : hostile.bytes()

function convert(url: string, hostile: HostileCase, bytes: Uint8Array) {
  return fetch(`${url}/__bench/convert/${converterOf(hostile.name)}?name=${encodeURIComponent(hostile.name)}`, {
    method: 'POST',
    body: bytes,
  }).then(async (res) => ({
    status: res.status,
    body: (await res.json().catch(() => ({}))) as { outputs?: number; message?: string },
  }))
}

/**
 * `GET /` latencies asked one after another while the case converts, again and again until `samples` were taken:
 * only requests sent while a conversion was in flight count (the gap between two conversions is idle).
 */
async function latenciesWhileConverting(
  url: string,
  hostile: HostileCase,
  bytes: Uint8Array,
  samples: number,
  askedUrl = url,
): Promise<number[]> {
  const during: number[] = []
  let converting = true
  let stop = false
  const loop = (async () => {
    while (!stop) {
      converting = true
      await convert(url, hostile, bytes)
      converting = false
    }
  })()
  // Let the first conversion start before the first request.
  await new Promise((resolve) => setTimeout(resolve, 5))
  while (during.length < samples) {
    const wasConverting = converting
    const ms = await latencyMs(askedUrl)
    if (wasConverting && converting) during.push(ms)
  }
  stop = true
  await loop
  return during
}

/** Per converter: `GET /` on `asked`, idle and while `converting` runs the worst case, in alternating rounds. */
async function compareLatencies(
  converting: DevWorker,
  worst: ReadonlyMap<string, { hostile: HostileCase }>,
  asked: DevWorker,
): Promise<void> {
  console.log('converter | worst case | idle median / p95 ms | converting median / p95 ms | ratio median | ratio p95')
  for (const [converter, { hostile }] of worst) {
    const bytes = await caseBytes(hostile)
    const idleRounds: number[] = []
    const duringRounds: number[] = []
    for (let round = 0; round < ROUNDS; round++) {
      for (let i = 0; i < SAMPLES_PER_ROUND; i++) idleRounds.push(await latencyMs(asked.url))
      duringRounds.push(
        ...(await latenciesWhileConverting(converting.url, hostile, bytes, SAMPLES_PER_ROUND, asked.url)),
      )
    }
    const [idleMedian, idleP95, duringMedian, duringP95] = [
      median(idleRounds),
      quantile(idleRounds, 0.95),
      median(duringRounds),
      quantile(duringRounds, 0.95),
    ]
    console.log(
      `${converter} | ${hostile.name} | ${idleMedian.toFixed(1)} / ${idleP95.toFixed(1)} | ${duringMedian.toFixed(1)} / ${duringP95.toFixed(1)} | ${(duringMedian / idleMedian).toFixed(2)}× | ${(duringP95 / idleP95).toFixed(2)}×`,
    )
  }
}

const worker = await startConvertWorker()
try {
  const pids = workerdPids(worker.pid)
  for (let i = 0; i < 5; i++) await latencyMs(worker.url) // warm
  const idle: number[] = []
  for (let i = 0; i < 30; i++) idle.push(await latencyMs(worker.url))
  const idleMs = median(idle)
  console.log(`load average ${load()} at the start`)
  console.log(`GET / idle: median ${idleMs.toFixed(1)} ms (baseline for the ratios)`)
  console.log('case | converter | outcome | CPU s | extra MiB | GET / median ms (ratio) | GET / max ms (ratio)')
  const worst = new Map<string, { hostile: HostileCase; cpu: number }>()
  // BENCH_CASES=a.pdf,b.txt runs only those cases.
  const only = process.env.BENCH_CASES?.split(',')
  for (const hostile of HOSTILE_CASES.filter((c) => c.expect !== 'refused' && (!only || only.includes(c.name)))) {
    const converter = converterOf(hostile.name)
    const bytes = await caseBytes(hostile)
    const cpuBefore = cpuSeconds(pids)
    const during: number[] = []
    let done = false
    const { result, startMiB, peakMiB } = await memoryDuring(pids, async () => {
      const conversion = convert(worker.url, hostile, bytes).finally(() => {
        done = true
      })
      while (!done) during.push(await latencyMs(worker.url))
      return conversion
    })
    const cpu = cpuSeconds(pids) - cpuBefore
    if (cpu > (worst.get(converter)?.cpu ?? -1)) worst.set(converter, { hostile, cpu })
    const outcome = result.status === 200 ? `done, ${result.body.outputs} outputs` : `failed (${result.status})`
    const med = median(during)
    const max = Math.max(0, ...during)
    console.log(
      `${hostile.name} | ${converter} | ${outcome} | ${cpu.toFixed(2)} | ${(peakMiB - startMiB).toFixed(1)} | ${med.toFixed(1)} (${(med / idleMs).toFixed(1)}×) | ${max.toFixed(0)} (${(max / idleMs).toFixed(1)}×)`,
    )
  }

  console.log(
    `\nGET / while each converter's worst case runs in the same isolate, against idle, ${ROUNDS} alternating rounds (load average ${load()})`,
  )
  await compareLatencies(worker, worst, worker)
  const api = await startDevWorker(API_ENTRY)
  try {
    for (let i = 0; i < 5; i++) await latencyMs(api.url) // warm
    console.log(
      `\nAs deployed: GET / on the API Worker (its own workerd) while the consumer's worst cases run in another (load average ${load()})`,
    )
    await compareLatencies(worker, worst, api)
  } finally {
    api.stop()
  }
  console.log(`load average ${load()} at the end`)
} finally {
  worker.stop()
}
