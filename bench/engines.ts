// bench/engines: what each slicing and each hand-written decoder in worker/engines still buys, now that
// conversions run in engine Workers of their own, against the simplest alternative: the same engine without turns
// of the event loop, one call instead of strips or bands, or the library decoder already bundled (one call).
// The Worker's own modules are imported as they are (the same WASM builds; the .ttf and .wasm imports given their
// bytes, the extensionless imports their .ts). A variant of a module is the same source with one constant changed,
// loaded under its own URL: `flat` gives no turns (yieldToEventLoop resolves at once) and draws a PDF page in one
// strip. Per case and variant:
// - time and CPU time (the process's, which is what Cloudflare counts: a turn's wait is time, not CPU): medians of
//   alternating rounds in this process (Node's clock advances during synchronous work);
// - longest stretch without a turn: how long another request in the same engine isolate can wait;
// - peak memory, in a fresh process for each variant so none inherits another's grown heaps: every WASM memory
//   alive when the step ends (bench/workers/wasm-memories.ts; they never shrink), and the resident set's growth
//   over the step (JS heap, WASM memories and buffers together; noisy within a few MiB).
// `npm run bench:engines`; `BENCH_CASES=gif,tiff` runs only the named cases.
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { register } from 'node:module'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'

register(
  `data:text/javascript,${encodeURIComponent(`
const variantOf = (url) => url && new URL(url).searchParams.get('variant')
export async function resolve(specifier, context, next) {
  if (specifier === '@cf-wasm/resvg/workerd') return next('@cf-wasm/resvg/node', context)
  const isRelative = specifier.startsWith('.')
  const resolved = await next(isRelative && !/\\.[a-z]+$/.test(specifier) ? specifier + '.ts' : specifier, context)
  const variant = variantOf(context.parentURL)
  if (!isRelative || !variant || resolved.url.includes('?')) return resolved
  return { ...resolved, url: resolved.url + '?variant=' + variant }
}
export async function load(url, context, next) {
  const path = url.split('?')[0]
  if (path.endsWith('.ttf')) return { format: 'module', shortCircuit: true, source: 'import { readFileSync } from "node:fs"; const b = readFileSync(new URL(' + JSON.stringify(path) + ')); export default b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength)' }
  if (path.endsWith('.wasm')) return { format: 'module', shortCircuit: true, source: 'import { readFileSync } from "node:fs"; export default new WebAssembly.Module(readFileSync(new URL(' + JSON.stringify(path) + ')))' }
  const loaded = await next(url, context)
  if (variantOf(url) !== 'flat' || !path.endsWith('.ts')) return loaded
  const source = String(loaded.source)
    .replace('return new Promise((resolve) => setTimeout(resolve, 0))', 'return Promise.resolve()')
    .replace('export const STRIP_BYTES = 2 * 2 ** 20', 'export const STRIP_BYTES = 2 ** 40')
  return { ...loaded, source }
}`)}`,
)

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7)
const scratch = join(tmpdir(), 'edgefloor-bench-files')
mkdirSync(scratch, { recursive: true })
const engines = new URL('../worker/engines/', import.meta.url).href
const ours = (path: string) => import(`${engines}${path}`)
const flat = (path: string) => import(`${engines}${path}?variant=flat`)

/** A 4000 × 3000 picture (12 MP, IMAGE_MAX_PIXELS) in a format ffmpeg writes, made once. */
function picture(name: string, args: string[]): Uint8Array {
  const path = join(scratch, name)
  execFileSync('ffmpeg', [
    '-loglevel',
    'error',
    '-y',
    '-f',
    'lavfi',
    '-i',
    'mandelbrot=size=4000x3000',
    '-frames:v',
    '1',
    ...args,
    path,
  ])
  return new Uint8Array(readFileSync(path))
}

type Step = () => Promise<unknown>
interface Case {
  readonly name: string
  /** What ours is, what the simplest alternative is. */
  readonly ours: string
  readonly simple: string
  /** The variants' steps, made once per process (inputs read, modules imported). */
  setup(): Promise<Record<'ours' | 'flat' | 'simple', Step | undefined>>
}

const { buildPdf } = await import('../test/support/pdf.ts')
const pdfSource = (bytes: Uint8Array) => ({
  size: bytes.byteLength,
  stream: () => new Blob([bytes]).stream() as ReadableStream<Uint8Array>,
})
const PDF_LIMITS = {
  maxImagePixels: 40_000_000,
  maxPagePixels: 2_200_000,
  maxSide: 16_384,
  maxStreamBytes: 256 * 2 ** 20,
  streamBytesPerPage: 64 * 2 ** 20,
}

/** Page 1 of `bytes` at 150 dpi, strip after strip, every row read (as the PNG encoder reads them). */
async function pdfPage(module: typeof import('../worker/engines/pdfium.ts'), bytes: Uint8Array) {
  for await (const _ of module.eachFromPdf(
    pdfSource(bytes),
    undefined,
    async function* (pdf) {
      const render = pdf.renderPage(0, 150 / 72)
      for (const strip of render.strips) for (let r = 0; r < strip.rows; r++) strip.row(r)
      yield 1
    },
    PDF_LIMITS,
  ));
}

function textPdf(): Uint8Array {
  const lines = Array.from(
    { length: 60 },
    (_, i) =>
      `BT /F1 10 Tf 50 ${800 - i * 12} Td (Line ${i + 1}: the quick brown fox jumps over the lazy dog, 0123456789.) Tj ET`,
  )
  return buildPdf([{ width: 595, height: 842, helvetica: true, content: lines.join('\n') }])
}

function photoPdf(): Uint8Array {
  const jpeg = join(scratch, 'page-photo.jpg')
  execFileSync('ffmpeg', [
    '-loglevel',
    'error',
    '-y',
    '-f',
    'lavfi',
    '-i',
    'mandelbrot=size=1600x1200',
    '-frames:v',
    '1',
    '-q:v',
    '3',
    jpeg,
  ])
  return buildPdf([
    {
      width: 595,
      height: 842,
      content: 'q 595 0 0 446 0 198 cm /Im0 Do Q',
      jpeg: { bytes: new Uint8Array(readFileSync(jpeg)), width: 1600, height: 1200 },
    },
  ])
}

const CASES: Case[] = [
  {
    name: 'text page',
    ours: 'drawn in bands of 4 lines, a turn between resvg calls (text/render.ts)',
    simple: 'one resvg call on the page',
    async setup() {
      const { Resvg } = await import('@cf-wasm/resvg/node')
      const render = await ours('text/render.ts')
      const flatRender = await flat('text/render.ts')
      const font = new Uint8Array((await ours('text/fonts/DejaVuSansMono.ttf')).default)
      const style = { widthPx: 1241, heightPx: 1754, marginPx: 90, fontPx: (10 / 72) * 150 }
      const columns = Math.floor((style.widthPx - 2 * style.marginPx) / (style.fontPx * render.ADVANCE_EM))
      const rows = Math.floor((style.heightPx - 2 * style.marginPx - style.fontPx * 0.3) / render.lineHeightPx(style))
      const lines: string[] = Array.from({ length: rows }, (_, i) =>
        `${i + 1}. The quick brown fox jumps over the lazy dog; `.repeat(4).slice(0, columns),
      )
      const options = {
        font: {
          fontBuffers: [font],
          loadSystemFonts: false,
          defaultFontFamily: render.FONT_FAMILY,
          monospaceFamily: render.FONT_FAMILY,
        },
      }
      const bands = (module: typeof render) => async () => {
        for await (const band of module.drawPageBands(lines, style)) for (let r = 0; r < band.rows; r++) band.row(r)
      }
      return {
        ours: bands(render),
        flat: bands(flatRender),
        simple: async () => {
          const resvg = new Resvg(render.pageSvg(lines, style), options)
          const rendered = resvg.render()
          void rendered.pixels
          rendered.free()
          resvg.free()
        },
      }
    },
  },
  ...(['text', 'photo'] as const).map(
    (kind): Case => ({
      name: `PDF ${kind} page`,
      ours: 'strips of 2 MiB, a turn between them (pdfium.ts)',
      simple: 'the page in one strip, no turns',
      async setup() {
        const bytes = kind === 'text' ? textPdf() : photoPdf()
        const module = await ours('pdfium.ts')
        const whole = await flat('pdfium.ts')
        return { ours: () => pdfPage(module, bytes), flat: undefined, simple: () => pdfPage(whole, bytes) }
      },
    }),
  ),
  {
    name: 'GIF 12 MP',
    ours: 'own LZW decoder in slices (image/gif.ts)',
    simple: "omggif's decodeAndBlitFrameRGBA, one call",
    async setup() {
      const bytes = picture('photo-12mp.gif', [])
      const { GifReader } = await import('omggif')
      const gif = await ours('image/gif.ts')
      const flatGif = await flat('image/gif.ts')
      return {
        ours: () => gif.decodeGifFirstFrame(bytes),
        flat: () => flatGif.decodeGifFirstFrame(bytes),
        simple: async () => {
          const reader = new GifReader(bytes)
          const pixels = new Uint8Array(reader.width * reader.height * 4)
          reader.decodeAndBlitFrameRGBA(0, pixels)
        },
      }
    },
  },
  {
    name: 'TIFF 12 MP, LZW',
    ours: 'strip by strip, RGBA in bands (image/tiff.ts)',
    simple: "UTIF's decodeImage and toRGBA8, one call each",
    async setup() {
      const bytes = picture('photo-12mp.tif', ['-compression_algo', 'lzw'])
      const { default: UTIF } = await import('utif2')
      const tiff = await ours('image/tiff.ts')
      const flatTiff = await flat('image/tiff.ts')
      return {
        ours: () => tiff.decodeTiffFirstPage(bytes),
        flat: () => flatTiff.decodeTiffFirstPage(bytes),
        simple: async () => {
          const buffer = bytes.buffer as ArrayBuffer
          const ifds = UTIF.decode(buffer)
          UTIF.decodeImage(buffer, ifds[0]!)
          UTIF.toRGBA8(ifds[0]!)
        },
      }
    },
  },
  {
    name: 'PNG row filter 12 MP RGB',
    ours: 'five filters and the choice among them in WASM SIMD (png/filter.c)',
    simple: 'the same filters in JavaScript (filter.ts, the reference the tests compare against)',
    async setup() {
      const path = join(scratch, 'photo-12mp.rgb')
      execFileSync('ffmpeg', [
        '-loglevel',
        'error',
        '-y',
        '-f',
        'lavfi',
        '-i',
        'mandelbrot=size=4000x3000',
        '-frames:v',
        '1',
        '-f',
        'rawvideo',
        '-pix_fmt',
        'rgb24',
        path,
      ])
      const pixels = new Uint8Array(readFileSync(path))
      const [stride, height] = [4000 * 3, 3000]
      const filter = await ours('png/filter.ts')
      return {
        ours: async () => {
          const rows = filter.rowFilter(stride, 3)
          for (let top = 0; top < height; top += rows.batchRows) {
            const count = Math.min(rows.batchRows, height - top)
            for (let r = 0; r < count; r++) rows.row(r).set(pixels.subarray((top + r) * stride, (top + r + 1) * stride))
            rows.filter(count)
          }
        },
        flat: undefined,
        simple: async () => {
          const candidates = Array.from({ length: 5 }, () => new Uint8Array(stride))
          const out = new Uint8Array(stride + 1)
          for (let y = 0; y < height; y++)
            filter.filterRow(
              pixels.subarray(y * stride, (y + 1) * stride),
              y ? pixels.subarray((y - 1) * stride, y * stride) : undefined,
              3,
              candidates,
              out,
            )
        },
      }
    },
  },
  {
    name: 'BMP 12 MP, 24-bit',
    ours: 'own decoder, a turn every MiB (image/bmp.ts)',
    simple: 'the same decoder without turns (no BMP library is bundled)',
    async setup() {
      const bytes = picture('photo-12mp.bmp', ['-pix_fmt', 'bgr24'])
      const bmp = await ours('image/bmp.ts')
      const flatBmp = await flat('image/bmp.ts')
      return { ours: () => bmp.decodeBmp(bytes), flat: () => flatBmp.decodeBmp(bytes), simple: undefined }
    },
  },
]

/** The step's time, the process's CPU time meanwhile, and its longest stretch without a turn (a 0 ms timer re-armed at each turn). */
async function timed(step: Step): Promise<{ ms: number; cpu: number; longest: number }> {
  let longest = 0
  let last = performance.now()
  let running = true
  const tick = () => {
    const now = performance.now()
    longest = Math.max(longest, now - last)
    last = now
    if (running) setTimeout(tick, 0)
  }
  setTimeout(tick, 0)
  const start = performance.now()
  const cpuStart = process.cpuUsage()
  await step()
  const ms = performance.now() - start
  const { user, system } = process.cpuUsage(cpuStart)
  running = false
  tick()
  return { ms, cpu: (user + system) / 1000, longest }
}

const VARIANTS = ['ours', 'flat', 'simple'] as const
const [, , child, childCase, childVariant] = process.argv
if (child === '--memory') {
  // Before any engine: every WASM memory made from here on is recorded.
  const { measureStep } = await import('./workers/wasm-memories.ts')
  const steps = await CASES.find((c) => c.name === childCase)!.setup()
  globalThis.gc?.()
  const before = process.memoryUsage().rss
  const { peakWasmBytes } = await measureStep(() => steps[childVariant as (typeof VARIANTS)[number]]!())
  console.log(
    JSON.stringify({
      rssMiB: (process.resourceUsage().maxRSS * 1024 - before) / 2 ** 20,
      wasmMiB: peakWasmBytes / 2 ** 20,
    }),
  )
  process.exit(0)
}

/** The step's memory in a fresh process: resident growth, and every WASM memory alive at its end (they never shrink). */
function peak(name: string, variant: string): { rssMiB: number; wasmMiB: number } {
  const run = spawnSync(
    process.execPath,
    [...process.execArgv, '--expose-gc', new URL(import.meta.url).pathname, '--memory', name, variant],
    { encoding: 'utf8' },
  )
  if (run.status !== 0) throw new Error(`${name} ${variant}: ${run.stderr}`)
  return JSON.parse(run.stdout.trim().split('\n').at(-1)!)
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const only = process.env.BENCH_CASES?.split(',').map((name) => name.trim().toLowerCase())
console.log(`load average ${loadavg()[0]!.toFixed(1)} at the start; ${ROUNDS} alternating rounds, medians`)
const table: string[] = []
for (const bench of CASES) {
  if (only && !only.some((name) => bench.name.toLowerCase().startsWith(name))) continue
  const steps = await bench.setup()
  const present = VARIANTS.filter((variant) => steps[variant])
  for (const variant of present) await steps[variant]!() // warm: WASM compiled, code optimised
  const runs = Object.fromEntries(
    present.map((variant) => [variant, [] as Array<{ ms: number; cpu: number; longest: number }>]),
  )
  for (let round = 0; round < ROUNDS; round++)
    for (const variant of present) runs[variant]!.push(await timed(steps[variant]!))
  const baseline = present.at(-1)!
  const ms = (variant: string) => median(runs[variant]!.map((run) => run.ms))
  const cpu = (variant: string) => median(runs[variant]!.map((run) => run.cpu))
  const longest = (variant: string) => median(runs[variant]!.map((run) => run.longest))
  console.log(`${bench.name}: ours = ${bench.ours}; baseline = ${bench.simple}`)
  for (const variant of present) {
    const memory = peak(bench.name, variant)
    const label = variant === 'flat' ? 'ours without turns' : variant === 'simple' ? 'baseline' : 'ours'
    console.log(
      `  ${label}: ${ms(variant).toFixed(1)} ms (${(ms(variant) / ms(baseline)).toFixed(2)}× the baseline), CPU ${cpu(variant).toFixed(1)} ms (${(cpu(variant) / cpu(baseline)).toFixed(2)}×), longest stretch without a turn ${longest(variant).toFixed(1)} ms, peak WASM ${memory.wasmMiB.toFixed(1)} MiB, resident +${memory.rssMiB.toFixed(1)} MiB`,
    )
  }
  table.push(`${bench.name} | ${(ms('ours') / ms(baseline)).toFixed(2)} | ${(cpu('ours') / cpu(baseline)).toFixed(2)}`)
}
console.log(`load average ${loadavg()[0]!.toFixed(1)} at the end`)
writeFileSync(join(scratch, 'engines.txt'), table.join('\n'))
