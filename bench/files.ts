// bench/files: 100 MiB through the Files API (streamed multipart upload with hashing and sniffing; ranged-capable
// download) against raw env.BUCKET.put / get of the same bytes in the same workerd, measured in the same run,
// with workerd's resident memory sampled while each runs.
import { median, startConvertWorker } from './convert-harness.ts'
import { formatRatio, memoryDuring, workerdPids } from './wrangler-dev.ts'

const SIZE = 100 * 1024 * 1024
const RUNS = 3
const bytes = new Uint8Array(SIZE).map((_, i) => (i * 31) & 0xff)
const mib = SIZE / 2 ** 20

const worker = await startConvertWorker()
try {
  const pids = workerdPids(worker.pid)
  const json = { 'content-type': 'application/json' }
  const email = `bench-${Date.now()}@example.com`
  await fetch(`${worker.url}/auth/register`, { method: 'POST', headers: json, body: JSON.stringify({ email, password: 'a benchmark password' }) })
  const { token } = (await (await fetch(`${worker.url}/auth/login`, { method: 'POST', headers: json, body: JSON.stringify({ email, password: 'a benchmark password' }) })).json()) as { token: string }
  const auth = { authorization: `Bearer ${token}` }

  /** Median time of RUNS runs and workerd's memory over all of them: resident at the start, peak, and the growth. */
  const measure = async (run: () => Promise<void>) => {
    const timed = async () => {
      const start = performance.now()
      await run()
      return performance.now() - start
    }
    const memory = await memoryDuring(pids, () => median(RUNS, timed))
    return { ms: memory.result, startMiB: memory.startMiB, peakMiB: memory.peakMiB }
  }

  // Baselines first: whatever the first run of a kind costs workerd (warm-up, heap growth) lands on them.
  const raw = await measure(async () => {
    const response = await fetch(`${worker.url}/__bench/raw/big`, { method: 'PUT', body: bytes })
    if (response.status !== 204) throw new Error(`raw put: ${response.status}`)
  })
  let fileId = ''
  const ours = await measure(async () => {
    const form = new FormData()
    form.append('file', new Blob([bytes]), 'big.bin')
    const response = await fetch(`${worker.url}/files`, { method: 'POST', headers: { ...auth, 'x-edgefloor-size': String(SIZE) }, body: form })
    const record = (await response.json()) as { _id: string }
    if (response.status !== 201) throw new Error(`upload: ${response.status}`)
    fileId = record._id
  })
  const rawGet = await measure(async () => {
    await (await fetch(`${worker.url}/__bench/raw/big`)).arrayBuffer()
  })
  const download = await measure(async () => {
    const body = await (await fetch(`${worker.url}/files/${fileId}/download`, { headers: auth })).arrayBuffer()
    if (body.byteLength !== SIZE) throw new Error('short download')
  })
  const memory = (label: string, m: { startMiB: number; peakMiB: number }) => `${label} peak ${m.peakMiB.toFixed(0)} MiB (+${(m.peakMiB - m.startMiB).toFixed(0)})`
  console.log(`100 MiB through the Worker (loopback, wrangler dev --local), median of ${RUNS}`)
  console.log(formatRatio('upload throughput', mib / (ours.ms / 1000), 'raw BUCKET.put', mib / (raw.ms / 1000), 'MiB/s'))
  console.log(formatRatio('download throughput', mib / (download.ms / 1000), 'raw BUCKET.get', mib / (rawGet.ms / 1000), 'MiB/s'))
  console.log(`workerd resident memory (whole process), in run order: upload ${memory('raw put', raw)} · ${memory('ours', ours)}`)
  console.log(`  download ${memory('raw get', rawGet)} · ${memory('ours', download)}`)
} finally {
  worker.stop()
}
