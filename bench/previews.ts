// bench/previews: a preview's time per kind (drawn and encoded in workerd, as GET /files/:id/preview makes it)
// against a native baseline in the same run: sharp's thumbnail (libvips, resize to fit 256 + WebP) for images,
// `pdftoppm -scale-to 256 -png` (poppler) for a PDF's first page; the text preview alone (no native baseline
// draws text files); PDFium's text extraction (pdf-to-text) against pdftotext on the same 24-page PDF; and a new
// preview's first answer through the real API (queued for the consumer Worker, waited for) against the same
// preview drawn in place by the bench route, in the same run.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import sharp from 'sharp'
import { median, run, scratch, startConvertWorker, timeCommand, timeConverter } from './convert-harness.ts'
import { API_ENTRY, benchLogin, formatRatio, startDevWorker, type DevWorker } from './wrangler-dev.ts'

const SIDE = 256
const PAGES = 24

async function timePreview(worker: DevWorker, kind: string, name: string, bytes: Uint8Array, format: string) {
  const start = performance.now()
  const response = await fetch(
    `${worker.url}/__bench/preview/${kind}?name=${encodeURIComponent(name)}&w=${SIDE}&format=${format}`,
    { method: 'POST', body: bytes },
  )
  const result = (await response.json()) as { width: number; height: number; bytes: number; message?: string }
  if (!response.ok) throw new Error(`preview ${kind}: ${response.status} ${result.message}`)
  return { ms: performance.now() - start, ...result }
}

const images = [
  { name: 'photo-12mp.jpg', make: ['-f', 'lavfi', '-i', 'mandelbrot=size=4000x3000', '-frames:v', '1', '-q:v', '3'] },
  { name: 'photo-2mp.jpg', make: ['-f', 'lavfi', '-i', 'mandelbrot=size=1600x1200', '-frames:v', '1', '-q:v', '3'] },
  { name: 'screenshot-1mp.png', make: ['-f', 'lavfi', '-i', 'testsrc2=size=1280x800', '-frames:v', '1'] },
]

const text = Array.from({ length: PAGES }, (_, page) =>
  Array.from(
    { length: 45 },
    (_, line) => `Page ${page + 1}, line ${line + 1}: the quick brown fox jumps over the lazy dog, 0123456789.`,
  ).join('\n'),
).join('\f')
const textPath = join(scratch, 'bench.txt')
writeFileSync(textPath, text)
run('soffice', ['--headless', '--convert-to', 'pdf', '--outdir', scratch, textPath])
const pdfPath = join(scratch, 'bench.pdf')
const pdf = new Uint8Array(readFileSync(pdfPath))

const worker = await startConvertWorker()
try {
  console.log(`Previews, ${SIDE} px on the longer side`)
  for (const image of images) {
    const path = join(scratch, image.name)
    run('ffmpeg', ['-loglevel', 'error', '-y', ...image.make, path])
    const bytes = new Uint8Array(readFileSync(path))
    const first = await timePreview(worker, 'image', image.name, bytes, 'webp') // warm-up
    const ours = await median(3, async () => (await timePreview(worker, 'image', image.name, bytes, 'webp')).ms)
    let sharpBytes = 0
    const baseline = await median(3, async () => {
      const start = performance.now()
      sharpBytes = (await sharp(bytes).resize(SIDE, SIDE, { fit: 'inside' }).webp({ quality: 80 }).toBuffer())
        .byteLength
      return performance.now() - start
    })
    console.log(`image ${image.name} (${bytes.byteLength} bytes) → WebP ${first.width}×${first.height}`)
    console.log(`  ${formatRatio('time', ours, 'sharp thumbnail', baseline, 'ms')}`)
    console.log(`  ${formatRatio('WebP size', first.bytes / 1024, 'sharp', sharpBytes / 1024, 'KiB')}`)
  }

  const first = await timePreview(worker, 'pdf', 'bench.pdf', pdf, 'png')
  const ours = await median(3, async () => (await timePreview(worker, 'pdf', 'bench.pdf', pdf, 'png')).ms)
  const baseline = await median(3, () =>
    timeCommand('pdftoppm', [
      '-f',
      '1',
      '-l',
      '1',
      '-scale-to',
      String(SIDE),
      '-png',
      pdfPath,
      join(scratch, 'preview'),
    ]),
  )
  console.log(`PDF page 1 of ${PAGES} (${pdf.byteLength} bytes) → PNG ${first.width}×${first.height}`)
  console.log(`  ${formatRatio('time', ours, 'pdftoppm -scale-to', baseline, 'ms')}`)
  const webp = await median(3, async () => (await timePreview(worker, 'pdf', 'bench.pdf', pdf, 'webp')).ms)
  console.log(`  as WebP: ${webp.toFixed(2)} ms`)

  const textBytes = new TextEncoder().encode(text)
  await timePreview(worker, 'text', 'bench.txt', textBytes, 'webp')
  const textMs = await median(3, async () => (await timePreview(worker, 'text', 'bench.txt', textBytes, 'webp')).ms)
  console.log(`text file, first page → WebP: ${textMs.toFixed(2)} ms (no native baseline draws text files)`)

  const extraction = await timeConverter(worker, 'pdf-to-text', 'bench.pdf', pdf)
  const extractionMs = await median(3, async () => (await timeConverter(worker, 'pdf-to-text', 'bench.pdf', pdf)).ms)
  const pdftotext = await median(3, () =>
    timeCommand('pdftotext', ['-enc', 'UTF-8', pdfPath, join(scratch, 'bench-out.txt')]),
  )
  const popplerBytes = readFileSync(join(scratch, 'bench-out.txt')).byteLength
  console.log(`Text extraction, ${PAGES} pages`)
  console.log(`  ${formatRatio('time', extractionMs, 'pdftotext', pdftotext, 'ms')}`)
  console.log(`  ${formatRatio('text size', extraction.bytes / 1024, 'pdftotext', popplerBytes / 1024, 'KiB')}`)

  await timeFirstPreviews(worker, [
    {
      kind: 'image',
      name: 'photo-2mp.jpg',
      type: 'image/jpeg',
      bytes: new Uint8Array(readFileSync(join(scratch, 'photo-2mp.jpg'))),
    },
    { kind: 'pdf', name: 'bench.pdf', type: 'application/pdf', bytes: pdf },
    { kind: 'text', name: 'bench.txt', type: 'text/plain', bytes: textBytes },
  ])
} finally {
  worker.stop()
}

/**
 * A new preview through the real API Worker (GET /files/:id/preview on a file uploaded just before: its drawing is
 * queued for the consumer Worker and the request waits for it) against the bench route drawing the same preview in
 * place, alternating, 5 of each. The ratio is what drawing outside the API isolate costs the first request: the
 * queue's delivery, D1 writes and polling, and reading the file from R2.
 */
async function timeFirstPreviews(
  bench: DevWorker,
  files: ReadonlyArray<{ kind: string; name: string; type: string; bytes: Uint8Array }>,
) {
  const api = await startDevWorker(API_ENTRY)
  try {
    const auth = await benchLogin(api)
    console.log(
      `A new preview's first answer (${SIDE} px WebP) through the API and the consumer Worker, against drawn in place`,
    )
    for (const file of files) {
      const queued: number[] = []
      const inPlace: number[] = []
      for (let round = 0; round < 6; round++) {
        const form = new FormData()
        form.append('file', new Blob([file.bytes], { type: file.type }), file.name)
        const upload = (await (
          await fetch(`${api.url}/files`, { method: 'POST', headers: auth, body: form })
        ).json()) as { _id: string }
        const start = performance.now()
        const answer = await fetch(`${api.url}/files/${upload._id}/preview?w=${SIDE}&format=webp`, { headers: auth })
        await answer.arrayBuffer()
        if (answer.status !== 200) throw new Error(`preview of ${file.name} through the API: ${answer.status}`)
        const ms = performance.now() - start
        const drawn = (await timePreview(bench, file.kind, file.name, file.bytes, 'webp')).ms
        // The first round warms both (WASM compiled, fonts loaded).
        if (round > 0) {
          queued.push(ms)
          inPlace.push(drawn)
        }
      }
      const mid = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!
      console.log(
        `  ${file.kind} ${file.name}: ${formatRatio('first answer', mid(queued), 'drawn in place', mid(inPlace), 'ms')}`,
      )
    }
  } finally {
    api.stop()
  }
}
