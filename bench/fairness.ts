// bench/fairness: one user floods the queue, another converts and previews; the second user's latency under the
// flood against the same requests on an idle service, in the same run (issue 31's goal: within 2×). Through the real
// API Worker and consumer Worker under `wrangler dev`: the flooder asks for 40 conversions of 3-page PDFs at once
// (20 are taken, STEPS_MAX_QUEUED_PER_USER; the rest answer 429), then the other user's first preview of a 1-page
// PDF (its own queue) and their conversion of it to PNG (the conversions queue, behind the flood's steps). The
// baseline asks for the same two at once on the idle service, as the flood's round does (they share the machine);
// each alone is printed too, the baseline of the first figures in docs/tenancy.md.
import { buildPdf } from '../test/support/pdf.ts'
import { API_ENTRY, benchLogin, formatRatio, startDevWorker, type DevWorker } from './wrangler-dev.ts'

const FLOOD = 40
const ROUNDS = 3

function pdfOf(pages: number, label: string): Uint8Array {
  const page = (n: number) => ({
    width: 595,
    height: 842,
    helvetica: true,
    content: `0 0 0.6 rg 40 40 515 762 re f 1 1 1 rg BT /F1 36 Tf 72 700 Td (${label} page ${n}) Tj ET ${Array.from({ length: 30 }, (_, i) => `0.${i % 10} 0.5 0.2 rg ${60 + i * 15} ${100 + i * 18} 120 40 re f`).join(' ')}`,
  })
  return buildPdf(Array.from({ length: pages }, (_, n) => page(n + 1)))
}

async function upload(
  worker: DevWorker,
  auth: Record<string, string>,
  name: string,
  bytes: Uint8Array,
): Promise<string> {
  const form = new FormData()
  form.append('file', new Blob([bytes], { type: 'application/pdf' }), name)
  const res = await fetch(`${worker.url}/files`, { method: 'POST', headers: auth, body: form })
  if (res.status !== 201) throw new Error(`upload ${name}: ${res.status} ${await res.text()}`)
  return ((await res.json()) as { _id: string })._id
}

/** A new file's first preview answer, asked again while 202 (as a client following Retry-After, without its wait). */
async function timePreview(worker: DevWorker, auth: Record<string, string>, round: string): Promise<number> {
  const id = await upload(worker, auth, `preview-${round}.pdf`, pdfOf(1, `preview ${round}`))
  const start = performance.now()
  for (;;) {
    const res = await fetch(`${worker.url}/files/${id}/preview?w=256&format=webp`, { headers: auth })
    await res.arrayBuffer()
    if (res.status === 200) return performance.now() - start
    if (res.status !== 202) throw new Error(`preview: ${res.status}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** A 1-page PDF converted to PNG: POST /convert waits for the job (CONVERT_WAIT_MS), then the job is polled. */
async function timeConversion(worker: DevWorker, auth: Record<string, string>, round: string): Promise<number> {
  const id = await upload(worker, auth, `convert-${round}.pdf`, pdfOf(1, `convert ${round}`))
  const start = performance.now()
  const res = await fetch(`${worker.url}/files/${id}/convert`, { method: 'POST', headers: auth })
  const body = (await res.json()) as { _id?: string }
  if (res.status === 200) return performance.now() - start
  if (res.status !== 202) throw new Error(`convert: ${res.status} ${JSON.stringify(body)}`)
  for (;;) {
    const job = (await (await fetch(`${worker.url}/jobs/${body._id}`, { headers: auth })).json()) as { status: string }
    if (job.status === 'done') return performance.now() - start
    if (job.status === 'failed') throw new Error('the conversion failed')
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** Starts the flood: FLOOD conversions of 3-page PDFs asked at once; answers how many were taken and refused. */
async function flood(worker: DevWorker, auth: Record<string, string>, round: number) {
  const ids = await Promise.all(
    Array.from({ length: FLOOD }, (_, i) => upload(worker, auth, `flood-${round}-${i}.pdf`, pdfOf(3, `flood ${i}`))),
  )
  const statuses = await Promise.all(
    ids.map(
      async (id) =>
        (
          await fetch(`${worker.url}/files/${id}/convert`, {
            method: 'POST',
            headers: { ...auth, prefer: 'respond-async' },
          })
        ).status,
    ),
  )
  return {
    ids,
    taken: statuses.filter((status) => status === 202).length,
    refused: statuses.filter((status) => status === 429).length,
  }
}

/** Waits until the flood's jobs have ended (the next round starts from an idle queue). */
async function drained(worker: DevWorker, auth: Record<string, string>, ids: readonly string[]) {
  for (const id of ids) {
    for (;;) {
      const jobs = (await (await fetch(`${worker.url}/files/${id}/jobs`, { headers: auth })).json()) as Array<{
        status: string
      }>
      if (jobs.every((job) => job.status === 'done' || job.status === 'failed')) break
      await new Promise((resolve) => setTimeout(resolve, 500))
    }
  }
}

const mid = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

const worker = await startDevWorker(API_ENTRY)
try {
  const flooder = await benchLogin(worker)
  const other = await benchLogin(worker)
  // Warm-up: WASM compiled, PDFium loaded.
  await timePreview(worker, other, 'warm')
  await timeConversion(worker, other, 'warm')
  const idle = { preview: [] as number[], conversion: [] as number[] }
  const alone = { preview: [] as number[], conversion: [] as number[] }
  const busy = { preview: [] as number[], conversion: [] as number[] }
  let shares = ''
  for (let round = 0; round < ROUNDS; round++) {
    alone.preview.push(await timePreview(worker, other, `alone-${round}`))
    alone.conversion.push(await timeConversion(worker, other, `alone-${round}`))
    const [idlePreview, idleConversion] = await Promise.all([
      timePreview(worker, other, `idle-${round}`),
      timeConversion(worker, other, `idle-${round}`),
    ])
    idle.preview.push(idlePreview)
    idle.conversion.push(idleConversion)
    const { ids, taken, refused } = await flood(worker, flooder, round)
    shares = `${taken} taken, ${refused} answered 429`
    const [preview, conversion] = await Promise.all([
      timePreview(worker, other, `busy-${round}`),
      timeConversion(worker, other, `busy-${round}`),
    ])
    busy.preview.push(preview)
    busy.conversion.push(conversion)
    await drained(worker, flooder, ids)
  }
  console.log(
    `Fairness: one user asks for ${FLOOD} conversions of 3-page PDFs at once (${shares}); another user's requests, median of ${ROUNDS}`,
  )
  console.log(
    `  ${formatRatio('first preview (1-page PDF, 256 px WebP)', mid(busy.preview) / 1000, 'idle', mid(idle.preview) / 1000, 's')}`,
  )
  console.log(
    `  ${formatRatio('conversion (1-page PDF → PNG)', mid(busy.conversion) / 1000, 'idle', mid(idle.conversion) / 1000, 's')}`,
  )
  console.log(
    `  each alone on the idle service: first preview ${(mid(alone.preview) / 1000).toFixed(2)} s (ratio ${(mid(busy.preview) / mid(alone.preview)).toFixed(2)}), conversion ${(mid(alone.conversion) / 1000).toFixed(2)} s (ratio ${(mid(busy.conversion) / mid(alone.conversion)).toFixed(2)})`,
  )
} finally {
  await worker.stop()
}
