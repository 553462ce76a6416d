// bench/pdf-bomb-defence: issue 29's choice between two defences against PDF bombs, measured on every PDF case of
// the hostile corpus (test/hostile/corpus.ts, the cases of bench:hostile and issue 29's new ones), in Node:
// - the pre-scan (worker/engines/pdf-streams.ts and pdf-crypt.ts, imported as they are): every stream's filters run
//   and counted against the budget of pdf-to-png's defaults before PDFium decodes anything;
// - PDFium alone (the same @hyzyla/pdfium WASM binary) with its memory capped when instantiated: its
//   emscripten_resize_heap import refuses to grow the heap past the cap, and every page is rendered as pdf-to-png
//   would (150 dpi, at most PDF_MAX_PAGE_PIXELS), no pre-scan.
// For each: CPU time (process.cpuUsage, this process only), the longest stretch without a turn of the event loop
// (the pre-scan's longest slice between two pauses; PDFium's longest single call: it cannot pause), the outcome,
// and for PDFium the heap it grew to. The cases issue 29 found quadratic are run at two sizes: linear work doubles
// with the file, quadratic quadruples.
// Run: npm run bench:pdf-bombs (PDFIUM_CAP_MIB=64 by default).
import { readFileSync } from 'node:fs'
import { register } from 'node:module'
import { fileURLToPath } from 'node:url'
import type { PdfiumModule } from '../worker/engines/pdfium.ts'

// The Worker's extensionless imports given their .ts.
register(
  `data:text/javascript,${encodeURIComponent(`
export async function resolve(specifier, context, next) {
  return specifier.startsWith('.') && !/\\.[a-z]+$/.test(specifier) ? next(specifier + '.ts', context) : next(specifier, context)
}`)}`,
)

const { findPdfStreams, measurePdfStreams } = await import('../worker/engines/pdf-streams.ts')
const { findPdfDecryptions } = await import('../worker/engines/pdf-crypt.ts')
const corpus = await import('../test/hostile/corpus.ts')
const { encryptWithQpdf } = await import('../test/support/qpdf.ts')
const { PDFiumLibrary } = await import('@hyzyla/pdfium')

const MiB = 2 ** 20
const CAP_BYTES = Number(process.env.PDFIUM_CAP_MIB ?? 64) * MiB
// pdf-to-png's defaults (worker/config.ts): PDF_MAX_BYTES, PDF_MAX_PAGE_PIXELS, PDF_DPI; 4 bytes a page pixel.
const PDF_MAX_BYTES = 24 * MiB
const PDF_MAX_PAGE_PIXELS = 2_200_000
const DPI = 150
// Node compiles WebAssembly from bytes (the Worker's types, which this project's tsconfig has, say workerd does not).
const { compile } = WebAssembly as unknown as { compile(bytes: Uint8Array): Promise<WebAssembly.Module> }
const wasm = await compile(readFileSync(fileURLToPath(import.meta.resolve('@hyzyla/pdfium/pdfium.wasm'))))

const cpuMs = () => {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1000
}
/** The longest synchronous stretch so far, in CPU ms. */
let longestMs = 0
/** A generator that pauses between slices, run to its end, its longest slice kept. */
const finish = <T>(steps: Generator<void, T>): T => {
  for (;;) {
    const start = cpuMs()
    const step = steps.next()
    longestMs = Math.max(longestMs, cpuMs() - start)
    if (step.done) return step.value
  }
}
/** One synchronous call, its time kept. */
function timed<T>(call: () => T): T {
  const start = cpuMs()
  try {
    return call()
  } finally {
    longestMs = Math.max(longestMs, cpuMs() - start)
  }
}
const short = (error: unknown) =>
  (error instanceof Error ? `${error.name}: ${error.message}` : String(error)).slice(0, 90)

/** The pre-scan as eachFromPdf runs it (structure streams, then the rest with the page count's budget). */
function preScan(bytes: Uint8Array, pages: number): string {
  const streams = findPdfStreams(bytes)
  const decryptions = finish(findPdfDecryptions(bytes, undefined))
  const budget = { maxStreamBytes: PDF_MAX_BYTES, maxTotalBytes: PDF_MAX_BYTES }
  const structure = finish(
    measurePdfStreams(
      bytes,
      streams.filter((s) => s.isStructure),
      budget,
      0,
      decryptions,
    ),
  )
  const maxTotalBytes = Math.max(PDF_MAX_BYTES, pages * PDF_MAX_PAGE_PIXELS * 4)
  const total = finish(
    measurePdfStreams(
      bytes,
      streams.filter((s) => !s.isStructure),
      { maxStreamBytes: PDF_MAX_BYTES, maxTotalBytes },
      structure,
      decryptions,
    ),
  )
  return `measured ${streams.length} streams, ${(total / MiB).toFixed(1)} MiB`
}

/** PDFium's C API as pdfium.ts drives it, and the one-call render this bench uses. */
type Pdfium = PdfiumModule & {
  _FPDF_RenderPageBitmap(
    bitmap: number,
    page: number,
    x: number,
    y: number,
    width: number,
    height: number,
    rotate: number,
    flags: number,
  ): void
}

/** A fresh PDFium whose heap never grows past the cap (an abort leaves an instance unusable: one per case). */
async function cappedPdfium(): Promise<Pdfium> {
  const library = await PDFiumLibrary.init({
    instantiateWasm: (imports: WebAssembly.Imports, done: (instance: WebAssembly.Instance) => void) => {
      const env = imports.env as Record<string, (size: number) => number | boolean>
      const grow = env.emscripten_resize_heap!
      env.emscripten_resize_heap = (size) => (size >>> 0 > CAP_BYTES ? false : grow(size))
      const instance = new WebAssembly.Instance(wasm, imports)
      done(instance)
      return instance.exports
    },
  } as never)
  return (library as unknown as { module: Pdfium }).module
}

/** Every page rendered as pdf-to-png would, by PDFium alone; the page count. */
function renderAll(pdfium: Pdfium, bytes: Uint8Array): string {
  const data = pdfium.wasmExports.malloc(bytes.length)
  pdfium.HEAPU8.set(bytes, data)
  const document = timed(() => pdfium._FPDF_LoadMemDocument(data, bytes.length, 0))
  if (!document) return `not opened (error ${pdfium._FPDF_GetLastError()})`
  const count = pdfium._FPDF_GetPageCount(document)
  let rendered = 0
  for (let index = 0; index < Math.min(count, 1000); index++) {
    const page = timed(() => pdfium._FPDF_LoadPage(document, index))
    if (!page) continue
    const [points, pointsHigh] = [pdfium._FPDF_GetPageWidth(page), pdfium._FPDF_GetPageHeight(page)]
    const scale = Math.min(
      DPI / 72,
      Math.sqrt(PDF_MAX_PAGE_PIXELS / Math.max(1, points * pointsHigh)),
      20_000 / Math.max(1, points, pointsHigh),
    )
    const [width, height] = [Math.max(1, Math.floor(points * scale)), Math.max(1, Math.floor(pointsHigh * scale))]
    const bitmap = pdfium._FPDFBitmap_CreateEx(width, height, 4, 0, 0)
    if (bitmap) {
      timed(() => pdfium._FPDF_RenderPageBitmap(bitmap, page, 0, 0, width, height, 0, 0))
      pdfium._FPDFBitmap_Destroy(bitmap)
      rendered++
    }
    pdfium._FPDF_ClosePage(page)
  }
  pdfium._FPDF_CloseDocument(document)
  pdfium.wasmExports.free(data)
  return `${rendered} of ${count} pages rendered`
}

/** Pages as PDFium counts them (the pre-scan's budget depends on it), with an uncapped instance. */
async function pageCount(bytes: Uint8Array): Promise<number> {
  const pdfium = await cappedPdfium()
  const data = pdfium.wasmExports.malloc(bytes.length)
  pdfium.HEAPU8.set(bytes, data)
  const document = pdfium._FPDF_LoadMemDocument(data, bytes.length, 0)
  return document ? pdfium._FPDF_GetPageCount(document) : 1
}

/** A defence run on one case: its outcome (or what it threw, after `failed`), CPU ms and longest stretch. */
function measured(run: () => string, failed: string): { outcome: string; ms: number; longestMs: number } {
  const start = cpuMs()
  longestMs = 0
  let outcome: string
  try {
    outcome = run()
  } catch (error) {
    outcome = `${failed}: ${short(error)}`
  }
  return { outcome, ms: cpuMs() - start, longestMs }
}

type Case = { name: string; bytes: () => Promise<Uint8Array> }
const pdfCases: Case[] = corpus.HOSTILE_CASES.filter((c) => c.name.endsWith('.pdf') && c.expect !== 'refused').map(
  (c) => ({
    name: c.name,
    bytes: async () => (c.encryption ? encryptWithQpdf(await c.bytes(), c.encryption) : c.bytes()),
  }),
)
// Issue 29's cases again at half their size: the ratio of the two says linear (2×) or quadratic (4×).
const halves: Case[] = [
  { name: 'shared-params.pdf at half', bytes: async () => corpus.pdfSharedIndirectParams(3000, 175_000) },
  { name: 'ascii85-to-end.pdf at half', bytes: async () => corpus.pdfAscii85ToEnd(1000) },
  { name: 'runlength-to-end.pdf at half', bytes: async () => corpus.pdfRunLengthToEnd(500) },
]

console.log(
  `PDFium's heap capped at ${CAP_BYTES / MiB} MiB; pre-scan budget: PDF_MAX_BYTES ${PDF_MAX_BYTES / MiB} MiB a stream, ${(PDF_MAX_PAGE_PIXELS * 4) / MiB} MiB a page`,
)
console.log(
  'case | KB | pre-scan CPU ms | longest slice ms | pre-scan outcome | PDFium capped CPU ms | longest call ms | PDFium heap MiB | PDFium outcome',
)
for (const hostile of [...pdfCases, ...halves]) {
  const bytes = await hostile.bytes()
  const pages = await pageCount(bytes)
  const scan = measured(() => preScan(bytes, pages), 'refused')
  const pdfium = await cappedPdfium()
  const render = measured(() => renderAll(pdfium, bytes), 'aborted')
  const row = [
    hostile.name,
    (bytes.length / 1024).toFixed(0),
    scan.ms.toFixed(0),
    scan.longestMs.toFixed(1),
    scan.outcome,
    render.ms.toFixed(0),
    render.longestMs.toFixed(1),
    (pdfium.HEAPU8.length / MiB).toFixed(0),
    render.outcome,
  ]
  console.log(row.join(' | '))
}
