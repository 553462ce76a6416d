// `npm run bench:cpu`: the CPU time of the worst allowed step of every converter and preview, and of the API Worker's
// longest request work, as deployed: each Worker built with `wrangler deploy --dry-run` and run by workerd from the
// bundle (bench/check-deploy.ts builds and starts them; its memory entry, bench/workers/deploy-memory.ts, runs one
// converter or preview on the POSTed bytes). A step's CPU is the workerd process's, every thread's, from just before
// its request to its answer (each thread's schedstat under /proc): an upper bound of what Cloudflare counts (the
// isolate's thread only), with the request's receiving in it. The baseline is an empty request's, printed first.
// Each figure is set against the Worker's `[limits] cpu_ms` (wrangler.consumer.toml, wrangler.toml).
// BENCH_CPU_STEPS=word runs only the steps whose label has it; BENCH_CPU_ONLY=api or consumer one Worker's.
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { join } from 'node:path'
import bcrypt from 'bcryptjs'
import sharp from 'sharp'
import { unstable_readConfig } from 'wrangler'
import { HOSTILE_CASES, type HostileCase } from '../test/hostile/corpus.ts'
import { buildPdf } from '../test/support/pdf.ts'
import { encryptWithQpdf } from '../test/support/qpdf.ts'
import {
  build,
  denseText,
  photoPixels,
  post,
  type Running,
  scratch,
  type Step,
  startTranscriber,
  startWorkerd,
  steps,
} from './check-deploy.ts'
import { MAX_PAINTED_AREAS } from '../worker/engines/pdf-paint.ts'
import { freePort, root } from './wrangler-dev.ts'

const MiB = 1024 * 1024
const GiB = 1024 * MiB

/**
 * The most of denseDrawing a page at PDF_MAX_PAGE_PIXELS takes beside its page-sized image (12 areas): the paint bound
 * (MAX_PAINTED_AREAS, engines/pdf-paint.ts) counts about 255 areas a MB of it, so 1.05 MB is about 280 of the 300.
 */
const DRAWING_MAX_BYTES = 1_050_000

/** Whole-page fills of the fill bomb (issue 29: 0.4 ms each at 2.2 MP), refused by the paint bound. */
const BOMB_FILLS = 20_000

/** The converter a hostile case's extension goes to (the registry's choice for each extension of the corpus). */
function hostileConverter(name: string): string {
  const extension = name.slice(name.lastIndexOf('.')).toLowerCase()
  if (extension === '.pdf') return 'pdf-to-png'
  if (extension === '.txt') return 'text-to-png'
  if (['.docx', '.odt', '.doc', '.csv'].includes(extension)) return 'office-to-pdf'
  if (['.mp3', '.wav'].includes(extension)) return 'audio-to-text'
  return 'image-to-png'
}

/**
 * Closed cubic curves, filled and stroked, each in a random box up to a fifth of the page's side, in random colours:
 * a dense drawing (a map, a CAD plot) of `bytes` of content-stream operators.
 */
function denseDrawing(width: number, height: number, bytes: number, seed: number): string {
  let state = seed
  const next = (below: number) => {
    state = (state * 1103515245 + 12345) >>> 0
    return (state >>> 8) % below
  }
  const paths: string[] = ['0.5 w']
  let length = 0
  while (length < bytes) {
    const boxW = 1 + next(Math.floor(width / 5))
    const boxH = 1 + next(Math.floor(height / 5))
    const x = next(width - boxW)
    const y = next(height - boxH)
    const point = () => `${x + next(boxW)} ${y + next(boxH)}`
    const colour = `${next(100) / 100} ${next(100) / 100} ${next(100) / 100}`
    const path = `${colour} rg ${point()} m ${point()} ${point()} ${point()} c ${point()} ${point()} ${point()} c h B`
    paths.push(path)
    length += path.length + 1
  }
  return paths.join('\n')
}

/**
 * CONVERT_PAGES_PER_STEP pages, each at PDF_MAX_PAGE_PIXELS at PDF_DPI, each drawing a baseline 4:4:4 JPEG of
 * PDF_MAX_IMAGE_PIXELS (a progressive one that large is refused: its coefficients pass the 64 MiB PDFium may decode
 * in) under a dense drawing, the whole inside PDF_MAX_BYTES (the JPEG's quality is lowered until it fits: decoding
 * costs by pixels, not by bytes). Each page has its image object of its own: PDFium decodes it for each page.
 */
async function pdfStep(vars: Readonly<Record<string, string>>): Promise<Uint8Array> {
  const setting = (name: string) => Number(vars[name])
  const pages = setting('CONVERT_PAGES_PER_STEP')
  const imagePixels = setting('PDF_MAX_IMAGE_PIXELS')
  const imageWidth = Math.floor(Math.sqrt((imagePixels * 4) / 3))
  const imageHeight = Math.floor(imagePixels / imageWidth)
  const pixelsWide = Math.floor(Math.sqrt((setting('PDF_MAX_PAGE_PIXELS') * 4) / 3))
  const width = Math.floor((pixelsWide * 72) / setting('PDF_DPI'))
  const height = Math.floor((width * 3) / 4)
  const rgb = sharp(photoPixels(imageWidth, imageHeight), {
    raw: { width: imageWidth, height: imageHeight, channels: 4 },
  }).removeAlpha()
  // As much of the drawing as fits half the file's share of a page, and as the paint bound takes beside the image.
  const drawingBytes = Math.min(Math.floor(setting('PDF_MAX_BYTES') / pages / 2), DRAWING_MAX_BYTES)
  for (let quality = 90; quality >= 10; quality -= 10) {
    const jpeg = await rgb.clone().jpeg({ quality, chromaSubsampling: '4:4:4' }).toBuffer()
    if (pages * (jpeg.byteLength + drawingBytes) > setting('PDF_MAX_BYTES') * 0.98) continue
    return buildPdf(
      Array.from({ length: pages }, (_, page) => ({
        width,
        height,
        content: `q ${width} 0 0 ${height} 0 0 cm /Im0 Do Q\n${denseDrawing(width, height, drawingBytes, page + 1)}`,
        jpeg: { bytes: jpeg, width: imageWidth, height: imageHeight },
      })),
    )
  }
  throw new Error('no JPEG quality fits the step inside PDF_MAX_BYTES')
}

/**
 * One page at PDF_MAX_PAGE_PIXELS painted over `count` times by opaque fills of the whole page, each 20 bytes of
 * content (every fill touches every pixel), or by filled circles larger than the page: the costliest paint for its
 * counted area measured (engines/pdf-paint.ts), 3.2 ms an area against 0.4 ms for a fill.
 */
function pdfOfPaint(vars: Readonly<Record<string, string>>, count: number, shape: 'fills' | 'circles'): Uint8Array {
  const pixelsWide = Math.floor(Math.sqrt((Number(vars.PDF_MAX_PAGE_PIXELS) * 4) / 3))
  const width = Math.floor((pixelsWide * 72) / Number(vars.PDF_DPI))
  const height = Math.floor((width * 3) / 4)
  const [x, y, r] = [width / 2, height / 2, width]
  const k = 0.5523 * r
  const circle = `${x + r} ${y} m ${x + r} ${y + k} ${x + k} ${y + r} ${x} ${y + r} c ${x - k} ${y + r} ${x - r} ${y + k} ${x - r} ${y} c ${x - r} ${y - k} ${x - k} ${y - r} ${x} ${y - r} c ${x + k} ${y - r} ${x + r} ${y - k} ${x + r} ${y} c h f`
  const paint = shape === 'fills' ? `0 0 ${width} ${height} re f` : circle
  const content = Array.from({ length: count }, (_, i) => `${(i % 10) / 10} g ${paint}`).join('\n')
  return buildPdf([{ width, height, content }])
}

/** PDF_MAX_PAGES pages of Helvetica text, the whole PDF_MAX_BYTES: PDF → text is one step for the whole file. */
function pdfOfText(vars: Readonly<Record<string, string>>): Uint8Array {
  const pages = Number(vars.PDF_MAX_PAGES)
  const perPage = Math.floor((Number(vars.PDF_MAX_BYTES) * 0.95) / pages)
  const line = 'BT /F1 6 Tf 20 0 Td (The quick brown fox jumps over the lazy dog, again and again.) Tj ET\n'
  const content = `1 0 0 1 0 780 cm\n${`0 -7 Td ${line}`.repeat(Math.floor(perPage / (line.length + 8)))}`
  return buildPdf(Array.from({ length: pages }, () => ({ width: 612, height: 792, helvetica: true, content })))
}

/**
 * An OFFICE_MAX_BYTES zip-shaped document: the converter checks its signature and its end record, and the stand-in
 * only reads it.
 */
function officeDocument(bytes: number): Uint8Array {
  const document = Buffer.alloc(bytes)
  for (let i = 0; i < bytes; i += 4096) document[i] = i & 255
  document.write('PK\x03\x04', 0, 'latin1')
  document.write('PK\x05\x06', bytes - 22, 'latin1')
  return document
}

/** A Gotenberg stand-in on loopback: reads the form whole, answers `pdf` (LibreOffice's time is not the Worker's). */
async function startGotenberg(pdf: Uint8Array): Promise<{ url: string; server: Server }> {
  const server = createServer((request, response) => {
    request.resume()
    request.on('end', () => response.writeHead(200, { 'content-type': 'application/pdf' }).end(pdf))
  })
  const port = await freePort()
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${port}`, server }
}

/** A photo-like RGB image of `pixels` at 4:3, for the inputs refused at IMAGE_MAX_PIXELS by a memory bound. */
function photoOf(pixels: number) {
  const width = Math.floor(Math.sqrt((pixels * 4) / 3))
  const height = Math.floor(pixels / width)
  return sharp(photoPixels(width, height), { raw: { width, height, channels: 4 } }).removeAlpha()
}

async function consumerSteps(vars: Readonly<Record<string, string>>): Promise<Step[]> {
  const setting = (name: string) => Number(vars[name])
  const cached = (make: () => Promise<Uint8Array>) => {
    let made: Promise<Uint8Array> | undefined
    return () => (made ??= make())
  }
  const perStep = setting('CONVERT_PAGES_PER_STEP')
  const pdf = cached(() => pdfStep(vars))
  const text = cached(async () => denseText(setting('TEXT_MAX_BYTES')))
  // The memory check's steps, but text → PNG as a whole step (the memory check draws 3 pages).
  const memorySteps = (await steps(vars)).filter((step) => !step.path.startsWith('/convert/text-to-png'))
  const hostile: Step[] = HOSTILE_CASES.filter((hostile) => hostile.expect !== 'refused').map((hostile) => ({
    worker: 'consumer',
    label: `hostile: ${hostile.name}`,
    // A PDF's step: its pages up to CONVERT_PAGES_PER_STEP, after the plan that counts them.
    path: `/convert/${hostileConverter(hostile.name)}?name=${encodeURIComponent(hostile.name)}&outputs=${perStep}`,
    input: cached(() => hostileBytes(hostile)),
  }))
  return [
    {
      worker: 'PDF engine',
      label: `PDF step: ${perStep} pages at PDF_MAX_PAGE_PIXELS, each a 12 MP JPEG under a dense drawing → PNG`,
      path: `/convert/pdf-to-png?name=step.pdf&outputs=${perStep}`,
      input: pdf,
    },
    {
      worker: 'PDF engine',
      label: 'its first page, 1024 px AVIF preview',
      path: '/preview/pdf?name=step.pdf&format=avif&w=1024',
      input: pdf,
    },
    // A page's bytes bound its objects, not their work: the paint bound (MAX_PAINTED_AREAS) does. The most it takes,
    // of the cheapest and of the costliest paint for its counted area, and the fill bomb it refuses.
    ...(['fills', 'circles'] as const).map(
      (shape): Step => ({
        worker: 'PDF engine',
        label: `PDF page at the paint bound: ${MAX_PAINTED_AREAS} ${shape === 'fills' ? 'opaque fills of the whole page' : 'filled circles larger than the page'}`,
        path: `/convert/pdf-to-png?name=${shape}.pdf`,
        input: cached(async () => pdfOfPaint(vars, MAX_PAINTED_AREAS, shape)),
      }),
    ),
    {
      worker: 'PDF engine',
      label: `PDF page of ${BOMB_FILLS} whole-page fills (the fill bomb, refused by the paint bound)`,
      path: '/convert/pdf-to-png?name=fill-bomb.pdf',
      input: cached(async () => pdfOfPaint(vars, BOMB_FILLS, 'fills')),
    },
    {
      worker: 'PDF engine',
      label: `PDF → text: ${setting('PDF_MAX_PAGES')} pages of text, PDF_MAX_BYTES (one step)`,
      path: '/convert/pdf-to-text?name=text.pdf',
      input: cached(async () => pdfOfText(vars)),
    },
    {
      worker: 'text engine',
      // The plan lays the whole text out, and a text of one part goes on to draw it in the same step.
      label: `text → PNG: ${setting('TEXT_MAX_BYTES')} bytes of dense text, its plan and its first ${perStep} pages`,
      path: `/convert/text-to-png?name=text.txt&outputs=${perStep}`,
      input: text,
    },
    ...memorySteps,
    // What a memory bound refuses at IMAGE_MAX_PIXELS (the answers above), just inside that bound.
    {
      worker: 'image engine',
      label: 'AVIF of 4.0 MP (at its most allowed: about 4.1 MP) → PNG',
      path: '/convert/image-to-png?name=photo.avif',
      input: cached(async () => photoOf(4_000_000).avif({ quality: 50, effort: 0 }).toBuffer()),
    },
    {
      worker: 'image engine',
      label: 'JPEG progressive 4:4:4 of 8.5 MP (at its most allowed: 80 MiB of coefficients) → PNG',
      path: '/convert/image-to-png?name=photo.jpg',
      input: cached(async () =>
        photoOf(8_500_000).jpeg({ quality: 90, progressive: true, chromaSubsampling: '4:4:4' }).toBuffer(),
      ),
    },
    {
      worker: 'consumer',
      label: `Office → PDF: ${setting('OFFICE_MAX_BYTES')} bytes to the sidecar, a ${(setting('PDF_MAX_BYTES') / MiB).toFixed(0)} MiB PDF back`,
      path: '/convert/office-to-pdf?name=document.docx',
      input: cached(async () => officeDocument(setting('OFFICE_MAX_BYTES'))),
    },
    ...hostile,
  ]
}

const hostileBytes = async (hostile: HostileCase) =>
  hostile.encryption ? encryptWithQpdf(await hostile.bytes(), hostile.encryption) : hostile.bytes()

/**
 * The CPU ms the process's threads have had so far (each task's schedstat under /proc/<pid>/task, in nanoseconds). A
 * step starts and ends no thread of workerd's, so the difference of two readings is its work; check-deploy's
 * cpuSeconds adds clock ticks of threads gone since spawn, whose 10 ms granularity would blur a hash's 15 ms.
 */
function threadsCpuMs(pid: number): number {
  let nanoseconds = 0
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      nanoseconds += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0])
    } catch {}
  }
  return nanoseconds / 1e6
}

/** CPU ms of one request to the running Worker, and its answer. */
async function cpuOf(running: Running, path: string, input: Uint8Array) {
  const before = threadsCpuMs(running.pid)
  const response = await post(`${running.url}${path}`, input)
  const ms = threadsCpuMs(running.pid) - before
  let body: { status?: number; outputs?: number; message?: string } = {}
  try {
    body = JSON.parse(response.text)
  } catch {}
  return { ms, status: body.status ?? response.status, outputs: body.outputs, message: body.message }
}

/** A line of the tables: the step, its answer (outputs or status), its CPU ms and their ratio to the limit. */
const row = (label: string, answer: string, ms: number, limitMs: number) =>
  `${label.slice(0, 96).padEnd(97)}${answer.padStart(7)}${ms.toFixed(0).padStart(9)}${(ms / limitMs).toFixed(3).padStart(9)}`

async function measureConsumer(secrets: Record<string, string>): Promise<void> {
  const config = unstable_readConfig({ config: join(root, 'wrangler.consumer.toml') })
  const limitMs = config.limits?.cpu_ms ?? 30_000
  const bundle = build('consumer-cpu', 'wrangler.consumer.toml', 'bench/workers/deploy-memory.ts')
  const chosen = (await consumerSteps(bundle.vars)).filter((step) =>
    step.label.includes(process.env.BENCH_CPU_STEPS ?? ''),
  )
  const transcriber = await startTranscriber()
  const gotenberg = await startGotenberg(await pdfStep(bundle.vars))
  try {
    console.log(`\nThe consumer's steps (its [limits] cpu_ms: ${limitMs}); each Worker's steps in a workerd of its own`)
    console.log(`${'step'.padEnd(97)}${'answer'.padStart(7)}${'CPU ms'.padStart(9)}${'× limit'.padStart(9)}`)
    for (const worker of new Set(chosen.map((step) => step.worker))) {
      const running = await startWorkerd(bundle, {
        ...secrets,
        TRANSCRIBE_PROVIDER: 'openai',
        TRANSCRIBE_URL: transcriber.url,
        GOTENBERG_URL: gotenberg.url,
      })
      try {
        const empty = await cpuOf(running, '/convert/none', new Uint8Array(0))
        console.log(row(`(the ${worker} Worker's isolate; an empty request, the baseline)`, '', empty.ms, limitMs))
        for (const step of chosen.filter((step) => step.worker === worker)) {
          const input = await step.input()
          const { ms, status, outputs, message } = await cpuOf(running, step.path, input)
          const answer = status === 200 ? `${outputs ?? ''} out` : String(status)
          console.log(row(step.label, answer, ms, limitMs))
          if (status !== 200 && message) console.log(`  ${message.slice(0, 160)}`)
        }
      } finally {
        await running.stop()
      }
    }
  } finally {
    transcriber.server.close()
    gotenberg.server.close()
  }
}

/** The API Worker: one argon2id hash, and SHA-256 per GiB scaled to FILES_MAX_RESUMABLE_BYTES. */
async function measureApi(secrets: Record<string, string>): Promise<void> {
  const config = unstable_readConfig({ config: join(root, 'wrangler.toml') })
  const limitMs = config.limits?.cpu_ms ?? 30_000
  const bundle = build('api-cpu', 'wrangler.toml', 'bench/workers/cpu-api.ts')
  const running = await startWorkerd(bundle, secrets)
  const get = async (path: string) => {
    const before = threadsCpuMs(running.pid)
    const response = await fetch(`${running.url}${path}`)
    await response.arrayBuffer()
    if (!response.ok) throw new Error(`${path} answered ${response.status}`)
    return threadsCpuMs(running.pid) - before
  }
  try {
    console.log(`\nThe API Worker's longest request work (its [limits] cpu_ms: ${limitMs})`)
    console.log(`${'work'.padEnd(97)}${''.padStart(7)}${'CPU ms'.padStart(9)}${'× limit'.padStart(9)}`)
    const empties = []
    for (let i = 0; i < 5; i++) empties.push(await get('/__bench/empty'))
    const empty = Math.min(...empties)
    console.log(row('an empty request (the baseline)', '', empty, limitMs))
    await get('/__bench/hash') // the WASM instance, once an isolate
    const hashes = []
    for (let i = 0; i < 5; i++) hashes.push(await get('/__bench/hash'))
    console.log(row('argon2id hash (m=19 MiB, t=2), the least of 5', '', Math.min(...hashes), limitMs))
    // Imported users keep their bcrypt hash until their first login; its cost is the importer's (10–12 is usual).
    for (const cost of [10, 12, 14]) {
      const hash = encodeURIComponent(bcrypt.hashSync('a benchmark password', cost))
      const ms = await get(`/__bench/bcrypt?hash=${hash}`)
      console.log(row(`a login's check of an imported bcrypt hash of cost ${cost}`, '', ms, limitMs))
    }
    const mib = Number(process.env.BENCH_CPU_DIGEST_MIB ?? 1024)
    const digest = await get(`/__bench/digest?mib=${mib}`)
    console.log(row(`SHA-256 of ${mib} MiB through a DigestStream`, '', digest, limitMs))
    const resumable = Number(bundle.vars.FILES_MAX_RESUMABLE_BYTES)
    const scaled = ((digest - empty) * resumable) / (mib * MiB)
    console.log(
      row(
        `complete: a FILES_MAX_RESUMABLE_BYTES (${(resumable / GiB).toFixed(1)} GiB) upload hashed back, scaled`,
        '',
        scaled,
        limitMs,
      ),
    )
  } finally {
    await running.stop()
  }
}

mkdirSync(scratch, { recursive: true })
try {
  const secrets = { JWT_SECRET: 'bench-cpu-secret-at-least-32-characters-long' }
  const only = process.env.BENCH_CPU_ONLY
  if (only !== 'consumer') await measureApi(secrets)
  if (only !== 'api') await measureConsumer(secrets)
} finally {
  rmSync(scratch, { recursive: true, force: true })
}
