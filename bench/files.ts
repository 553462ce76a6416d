// bench/files: 100 MiB through the Files API against raw env.BUCKET.put / get of the same bytes in the same
// workerd. Uploads: POST /files with the raw body (the fast path), POST /files multipart (the body encoded by
// Node's FormData before the clock starts: our side alone), the same with FormData encoding as fetch sends it
// (the client's cost included, as a browser on the same two cores would pay it), tus (tus-js-client, PATCHes of
// TUS_CHUNK bytes) and the baseline, a raw put of a FixedLengthStream in the same isolate. Speed: the four alternate, round after round, in one workerd (medians of ROUNDS). Memory:
// workerd's resident set (the whole process: the local R2 store lives in it too) grows on the first big request
// of a kind and keeps the pages, so each upload kind gets its own fresh workerd: a 1 MiB warm-up of the same kind,
// then one 100 MiB upload, and the growth (peak − before) is reported next to the raw put's.
import { availableParallelism, loadavg } from 'node:os'
import { Upload } from 'tus-js-client'
import { startConvertWorker } from './convert-harness.ts'
import type { DevWorker } from './wrangler-dev.ts'
import { benchLogin, formatRatio, memoryDuring, workerdPids } from './wrangler-dev.ts'

const MiB = 2 ** 20
const SIZE = 100 * MiB
const ROUNDS = Number(process.env.ROUNDS ?? 5)
const TUS_CHUNK = 25 * MiB
const bytes = new Uint8Array(SIZE).map((_, i) => (i * 31) & 0xff)

type Kind = 'raw put' | 'ours, raw body' | 'ours, multipart' | 'ours, multipart + client FormData' | 'tus'
const KINDS: Kind[] = ['raw put', 'ours, raw body', 'ours, multipart', 'ours, multipart + client FormData', 'tus']

const formOf = (body: Uint8Array) => {
  const form = new FormData()
  form.append('file', new Blob([body]), 'big.bin')
  return form
}

/** The multipart body as Node's FormData encodes it, made before the clock starts. */
async function encodedForm(body: Uint8Array): Promise<{ bytes: Uint8Array; contentType: string }> {
  const encoded = new Response(formOf(body))
  return { contentType: encoded.headers.get('content-type')!, bytes: new Uint8Array(await encoded.arrayBuffer()) }
}
const encodedForms = new Map<Uint8Array, { bytes: Uint8Array; contentType: string }>()

/** Uploads `body` one way; answers the stored file's id (our kinds) or '' (the raw put). */
async function upload(worker: DevWorker, auth: Record<string, string>, kind: Kind, body: Uint8Array): Promise<string> {
  const size = String(body.byteLength)
  const created = async (response: Response) => {
    const record = (await response.json()) as { _id: string; message?: string }
    if (response.status !== 201) throw new Error(`${kind}: ${response.status} ${record.message}`)
    return record._id
  }
  switch (kind) {
    case 'raw put': {
      const response = await fetch(`${worker.url}/__bench/raw/big`, { method: 'PUT', body })
      if (response.status !== 204) throw new Error(`raw put: ${response.status}`)
      return ''
    }
    case 'ours, raw body':
      return created(
        await fetch(`${worker.url}/files`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/octet-stream', 'x-edgefloor-name': 'big.bin' },
          body,
        }),
      )
    case 'ours, multipart': {
      const form = encodedForms.get(body)!
      return created(
        await fetch(`${worker.url}/files`, {
          method: 'POST',
          headers: { ...auth, 'x-edgefloor-size': size, 'content-type': form.contentType },
          body: form.bytes,
        }),
      )
    }
    case 'ours, multipart + client FormData':
      return created(
        await fetch(`${worker.url}/files`, {
          method: 'POST',
          headers: { ...auth, 'x-edgefloor-size': size },
          body: formOf(body),
        }),
      )
    case 'tus':
      return new Promise((resolve, reject) => {
        const tus = new Upload(Buffer.from(body.buffer, body.byteOffset, body.byteLength), {
          endpoint: `${worker.url}/files/tus`,
          chunkSize: TUS_CHUNK,
          retryDelays: [],
          headers: auth,
          metadata: { filename: 'big.bin', filetype: 'application/octet-stream' },
          onError: reject,
          onSuccess: ({ lastResponse }) => resolve(lastResponse.getHeader('x-edgefloor-file-id') ?? ''),
        })
        tus.start()
      })
  }
}

const timed = async (run: () => Promise<unknown>) => {
  const start = performance.now()
  await run()
  return performance.now() - start
}

const warmUp = bytes.subarray(0, MiB)
for (const body of [bytes, warmUp]) encodedForms.set(body, await encodedForm(body))
const load = () =>
  loadavg()
    .map((value) => value.toFixed(1))
    .join(' ')
console.log(
  `100 MiB through the Worker (loopback, wrangler dev --local), ${availableParallelism()} cores, load average at start ${load()}`,
)

// PARTS=memory (or speed) runs one half alone.
const PARTS = process.env.PARTS ?? 'speed,memory'
if (PARTS.includes('speed')) await measureSpeed()
if (PARTS.includes('memory')) await measureMemory()

async function measureSpeed() {
  // Speed: every kind once per round, in turn, in one workerd.
  const worker = await startConvertWorker()
  const ms = new Map<Kind, number[]>(KINDS.map((kind) => [kind, []]))
  const download = { ours: [] as number[], raw: [] as number[] }
  const clientEncoding: number[] = []
  try {
    const auth = await benchLogin(worker)
    let fileId = ''
    for (let round = 0; round < ROUNDS; round++) {
      for (const kind of KINDS) {
        ms.get(kind)!.push(
          await timed(async () => {
            const id = await upload(worker, auth, kind, bytes)
            if (kind === 'ours, raw body') fileId = id
          }),
        )
      }
      download.raw.push(await timed(async () => (await fetch(`${worker.url}/__bench/raw/big`)).arrayBuffer()))
      download.ours.push(
        await timed(async () => {
          const body = await (await fetch(`${worker.url}/files/${fileId}/download`, { headers: auth })).arrayBuffer()
          if (body.byteLength !== SIZE) throw new Error('short download')
        }),
      )
      clientEncoding.push(await timed(() => new Response(formOf(bytes)).arrayBuffer()))
      const times = KINDS.map((kind) => `${kind} ${(ms.get(kind)![round]! / 1000).toFixed(1)} s`).join(' · ')
      console.log(`  round ${round + 1}: ${times} (load average ${load()})`)
    }
  } finally {
    worker.stop()
  }
  const medianOf = (runs: number[]) => [...runs].sort((a, b) => a - b)[Math.floor(runs.length / 2)]!
  const mibPerS = (runs: number[]) => SIZE / MiB / (medianOf(runs) / 1000)
  const rawPut = mibPerS(ms.get('raw put')!)
  console.log(`upload throughput, median of ${ROUNDS} alternating rounds (load average now ${load()}):`)
  for (const kind of KINDS.slice(1))
    console.log(`  ${formatRatio(kind, mibPerS(ms.get(kind)!), 'raw BUCKET.put', rawPut, 'MiB/s')}`)
  console.log(
    `  Node's FormData encoding alone (no network): ${mibPerS(clientEncoding).toFixed(2)} MiB/s, median ${(medianOf(clientEncoding) / 1000).toFixed(2)} s`,
  )
  console.log(`  ${formatRatio('download', mibPerS(download.ours), 'raw BUCKET.get', mibPerS(download.raw), 'MiB/s')}`)
}

async function measureMemory() {
  // Memory: a fresh workerd per kind.
  const growth = new Map<Kind, number>()
  for (const kind of KINDS) {
    const fresh = await startConvertWorker()
    try {
      const auth = await benchLogin(fresh)
      await upload(fresh, auth, kind, warmUp)
      const memory = await memoryDuring(workerdPids(fresh.pid), () => upload(fresh, auth, kind, bytes))
      growth.set(kind, memory.peakMiB - memory.startMiB)
    } finally {
      fresh.stop()
    }
  }
  const raw = growth.get('raw put')!
  console.log(`workerd resident memory growth for one 100 MiB upload (fresh workerd each, load average now ${load()}):`)
  console.log(`  raw put +${raw.toFixed(0)} MiB (the local R2 store and workerd's own buffers)`)
  for (const kind of KINDS.slice(1)) {
    const ours = growth.get(kind)!
    console.log(
      `  ${kind} +${ours.toFixed(0)} MiB: ${ours - raw >= 0 ? '+' : ''}${(ours - raw).toFixed(0)} MiB over the raw put`,
    )
  }
}
