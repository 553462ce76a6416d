// bench/files: 100 MiB through the Files API (streamed multipart upload with hashing and sniffing; ranged-capable
// download) against raw env.BUCKET.put / get of the same bytes in the same workerd, measured in the same run.
import { median, startConvertWorker } from './convert-harness.ts'
import { formatRatio, workerdRssMiB } from './wrangler-dev.ts'

const SIZE = 100 * 1024 * 1024
const bytes = new Uint8Array(SIZE).map((_, i) => (i * 31) & 0xff)
const mib = SIZE / 2 ** 20

const worker = await startConvertWorker()
try {
  const json = { 'content-type': 'application/json' }
  const email = `bench-${Date.now()}@example.com`
  await fetch(`${worker.url}/auth/register`, { method: 'POST', headers: json, body: JSON.stringify({ email, password: 'a benchmark password' }) })
  const { token } = (await (await fetch(`${worker.url}/auth/login`, { method: 'POST', headers: json, body: JSON.stringify({ email, password: 'a benchmark password' }) })).json()) as { token: string }
  const auth = { authorization: `Bearer ${token}` }

  let fileId = ''
  const ours = await median(3, async () => {
    const form = new FormData()
    form.append('file', new Blob([bytes]), 'big.bin')
    const start = performance.now()
    const response = await fetch(`${worker.url}/files`, { method: 'POST', headers: { ...auth, 'x-edgefloor-size': String(SIZE) }, body: form })
    const record = (await response.json()) as { _id: string }
    if (response.status !== 201) throw new Error(`upload: ${response.status}`)
    fileId = record._id
    return performance.now() - start
  })
  const uploadRss = workerdRssMiB(worker.pid)
  const raw = await median(3, async () => {
    const start = performance.now()
    const response = await fetch(`${worker.url}/__bench/raw/big`, { method: 'PUT', body: bytes })
    if (response.status !== 204) throw new Error(`raw put: ${response.status}`)
    return performance.now() - start
  })
  const download = await median(3, async () => {
    const start = performance.now()
    const body = await (await fetch(`${worker.url}/files/${fileId}/download`, { headers: auth })).arrayBuffer()
    if (body.byteLength !== SIZE) throw new Error('short download')
    return performance.now() - start
  })
  const rawGet = await median(3, async () => {
    const start = performance.now()
    await (await fetch(`${worker.url}/__bench/raw/big`)).arrayBuffer()
    return performance.now() - start
  })
  console.log(`100 MiB through the Worker (loopback, wrangler dev --local)`)
  console.log(formatRatio('upload throughput', mib / (ours / 1000), 'raw BUCKET.put', mib / (raw / 1000), 'MiB/s'))
  console.log(formatRatio('download throughput', mib / (download / 1000), 'raw BUCKET.get', mib / (rawGet / 1000), 'MiB/s'))
  console.log(`workerd resident memory after the uploads (whole process): ${uploadRss.toFixed(0)} MiB`)
} finally {
  worker.stop()
}
