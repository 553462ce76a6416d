// bench/hostile: every case of the hostile-input corpus (test/hostile/corpus.ts) through its converter in a
// wrangler dev Worker: the CPU time the workerd process spent on it (/proc utime + stime), its extra resident
// memory (peak while it ran − before), and the latency of `GET /` asked over and over meanwhile, against the
// idle latency of `GET /` in the same run (the baseline). Goals (issue 17): < 2 s CPU, < 64 MiB, latency ≤ 2× idle.
// Before the first case of each kind (converter, and image format), a benign file of that kind is measured the
// same way and printed as its baseline row: it also instantiates the engine (WASM heaps, fonts), whose one-time
// memory would otherwise be charged to the first hostile case. Cases refused before a job are not run: they never
// reach a converter.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { HOSTILE_CASES, pdfPage } from '../test/hostile/corpus.ts'
import { run, scratch, startConvertWorker } from './convert-harness.ts'
import { memoryDuring, workerdPids } from './wrangler-dev.ts'

const CONVERTERS: Record<string, string> = { '.pdf': 'pdf-to-png', '.txt': 'text-to-png', '.csv': 'office-to-pdf', '.mp3': 'audio-to-text', '.wav': 'audio-to-text' }
const converterOf = (name: string) => CONVERTERS[name.slice(name.lastIndexOf('.'))] ?? 'image-to-png'

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

const kindOf = (name: string) => {
  const extension = name.slice(name.lastIndexOf('.'))
  return converterOf(name) === 'image-to-png' ? extension.replace('.jpeg', '.jpg').replace('.tiff', '.tif') : converterOf(name)
}

/** A benign file of each kind: made by ffmpeg (images, audio) or the corpus's own writers (PDF), or plain text. */
function benignFile(kind: string): { name: string; bytes: Uint8Array } {
  if (kind === 'pdf-to-png') return { name: 'benign.pdf', bytes: pdfPage(595, 842) }
  if (kind === 'text-to-png') return { name: 'benign.txt', bytes: new TextEncoder().encode('A page of plain text, résumé and naïve included.\n'.repeat(60)) }
  const name = kind === 'audio-to-text' ? 'benign.wav' : kind === 'office-to-pdf' ? 'benign.csv' : `benign${kind}`
  const path = join(scratch, name)
  if (kind === 'office-to-pdf') return { name, bytes: new TextEncoder().encode('a,b\n1,2\n') }
  const source = kind === 'audio-to-text' ? ['-f', 'lavfi', '-i', 'sine=frequency=440:duration=1', '-ar', '16000'] : ['-f', 'lavfi', '-i', 'testsrc2=size=320x240', '-frames:v', '1']
  run('ffmpeg', ['-loglevel', 'error', '-y', ...source, ...(kind === '.avif' ? ['-c:v', 'libaom-av1', '-still-picture', '1'] : []), path])
  return { name, bytes: new Uint8Array(readFileSync(path)) }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0

const worker = await startConvertWorker()
try {
  const pids = workerdPids(worker.pid)
  for (let i = 0; i < 5; i++) await latencyMs(worker.url) // warm
  const idle: number[] = []
  for (let i = 0; i < 30; i++) idle.push(await latencyMs(worker.url))
  const idleMs = median(idle)
  console.log(`GET / idle: median ${idleMs.toFixed(1)} ms (baseline for the ratios)`)
  console.log('case | converter | outcome | CPU s | extra MiB | GET / median ms (ratio) | GET / max ms (ratio)')
  const measure = async (name: string, bytes: Uint8Array, label = name) => {
    const converter = converterOf(name)
    const cpuBefore = cpuSeconds(pids)
    const during: number[] = []
    let done = false
    const { result, startMiB, peakMiB } = await memoryDuring(pids, async () => {
      const conversion = fetch(`${worker.url}/__bench/convert/${converter}?name=${encodeURIComponent(name)}`, { method: 'POST', body: bytes }).then(async (res) => {
        done = true
        return { status: res.status, body: (await res.json().catch(() => ({}))) as { outputs?: number; message?: string } }
      })
      while (!done) during.push(await latencyMs(worker.url))
      return conversion
    })
    const cpu = cpuSeconds(pids) - cpuBefore
    // The bench route maps no errors: a converter's ConversionError (422 through the API) answers 500 here.
    const outcome = result.status === 200 ? `done, ${result.body.outputs} outputs` : 'failed'
    const med = median(during)
    const max = Math.max(0, ...during)
    console.log(`${label} | ${converter} | ${outcome} | ${cpu.toFixed(2)} | ${(peakMiB - startMiB).toFixed(1)} | ${med.toFixed(1)} (${(med / idleMs).toFixed(1)}×) | ${max.toFixed(0)} (${(max / idleMs).toFixed(1)}×)`)
  }
  const warmed = new Set<string>()
  const only = process.argv[2] ? new RegExp(process.argv[2]) : undefined // a pattern of case names, to measure a few
  for (const hostile of HOSTILE_CASES.filter((c) => c.expect !== 'refused' && (!only || only.test(c.name)))) {
    const kind = kindOf(hostile.name)
    if (!warmed.has(kind)) {
      warmed.add(kind)
      const benign = benignFile(kind)
      await measure(benign.name, benign.bytes, `${benign.name} (baseline)`)
    }
    await measure(hostile.name, await hostile.bytes())
  }
} finally {
  worker.stop()
}
