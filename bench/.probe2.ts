import { readFileSync } from 'node:fs'
import { deflateSync } from 'node:zlib'
import { register } from 'node:module'
import { loadavg } from 'node:os'
import { fileURLToPath } from 'node:url'
import type { PdfiumModule } from '../worker/engines/pdfium.ts'

// The tests' extensionless imports given their .ts.
register(
  `data:text/javascript,${encodeURIComponent(`
export async function resolve(specifier, context, next) {
  return specifier.startsWith('.') && !/\\.[a-z]+$/.test(specifier) ? next(specifier + '.ts', context) : next(specifier, context)
}`)}`,
)

const { PDFiumLibrary } = await import('@hyzyla/pdfium')

// pdf-to-png's defaults (worker/config.ts: PDF_DPI, PDF_MAX_PAGE_PIXELS) and how worker/engines/pdfium.ts draws a
// page: strips of STRIP_BYTES, BGRA reversed to RGBA, annotations drawn.
const DPI = 150
const PDF_MAX_PAGE_PIXELS = 2_200_000
const STRIP_BYTES = 2 * 2 ** 20
const FPDF_ANNOT = 0x01
const FPDF_REVERSE_BYTE_ORDER = 0x10
const FPDFBITMAP_BGRA = 4
/** The walk's weight of an object however small (PAINT_WEIGHTS.object, worker/engines/pdf-paint.ts). */
const OBJECT_PIXELS = 3000
/**
 * The rule PAINT_WEIGHTS were set by (docs/platform-limits.md): a weighted area of PDF_MAX_PAGE_PIXELS costs at most
 * what filled curves cost, 3.6 ms; a walk's pixel is worth 1.64 ns of drawing, and its 3,000 an object 4.9 µs.
 */
const WEIGHTED_AREA_MS = 3.6

type Pdfium = PdfiumModule & {
  _FPDF_RenderPageBitmapWithMatrix(bitmap: number, page: number, matrix: number, clip: number, flags: number): void
}
// Node compiles WebAssembly from bytes (the Worker's types, which this project's tsconfig has, say workerd does not).
const { compile } = WebAssembly as unknown as { compile(bytes: Uint8Array): Promise<WebAssembly.Module> }
const wasm = await compile(readFileSync(fileURLToPath(import.meta.resolve('@hyzyla/pdfium/pdfium.wasm'))))

/** A fresh PDFium for each page, so that no page draws with a cache or a heap another page grew. */
async function freshPdfium(): Promise<Pdfium> {
  const library = await PDFiumLibrary.init({
    instantiateWasm: (imports: WebAssembly.Imports, done: (instance: WebAssembly.Instance) => void) => {
      const instance = new WebAssembly.Instance(wasm, imports)
      done(instance)
      return instance.exports
    },
  } as never)
  return (library as unknown as { module: Pdfium }).module
}

const cpuMs = () => {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1000
}

interface Drawn {
  readonly pixels: number
  /** The walk's count in areas of PDF_MAX_PAGE_PIXELS, and whether it refused the page (it stops counting there). */
  readonly areas: number
  readonly isRefused: boolean
  readonly loadMs: number
  readonly drawMs: number
}

/**
 * The first page loaded and drawn as pdf-to-png draws it, in strips of STRIP_BYTES (or with `isWhole`, in one
 * bitmap); CPU ms of each.
 */
async function drawFirstPage(bytes: Uint8Array, isWhole = false): Promise<Drawn> {
  const pdfium = await freshPdfium()
  const data = pdfium.wasmExports.malloc(bytes.length)
  pdfium.HEAPU8.set(bytes, data)
  const document = pdfium._FPDF_LoadMemDocument(data, bytes.length, 0)
  if (!document) throw new Error(`PDFium did not open the page (error ${pdfium._FPDF_GetLastError()})`)
  let start = cpuMs()
  const page = pdfium._FPDF_LoadPage(document, 0)
  const loadMs = cpuMs() - start
  const [points, pointsHigh] = [pdfium._FPDF_GetPageWidth(page), pdfium._FPDF_GetPageHeight(page)]
  const scale = Math.min(DPI / 72, Math.sqrt(PDF_MAX_PAGE_PIXELS / (points * pointsHigh)))
  const [width, height] = [Math.floor(Math.floor(points) * scale), Math.floor(Math.floor(pointsHigh) * scale)]
  const counted = { areas: 0, isRefused: false }
  const stride = width * 4
  const stripRows = isWhole ? height : Math.min(height, Math.floor(STRIP_BYTES / stride))
  const pixels = pdfium.wasmExports.malloc(stride * stripRows)
  const matrix = pdfium.wasmExports.malloc(6 * 4 + 4 * 4)
  const bitmap = pdfium._FPDFBitmap_CreateEx(width, stripRows, FPDFBITMAP_BGRA, pixels, stride)
  start = cpuMs()
  for (let top = 0; top < height; top += stripRows) {
    const rows = Math.min(stripRows, height - top)
    pdfium._FPDFBitmap_FillRect(bitmap, 0, 0, width, stripRows, 0xffffffff)
    pdfium.HEAPF32.set([scale, 0, 0, scale, 0, -top, 0, 0, width, rows], matrix / 4)
    pdfium._FPDF_RenderPageBitmapWithMatrix(bitmap, page, matrix, matrix + 6 * 4, FPDF_ANNOT | FPDF_REVERSE_BYTE_ORDER)
  }
  const drawMs = cpuMs() - start
  pdfium._FPDFBitmap_Destroy(bitmap)
  pdfium._FPDF_ClosePage(page)
  pdfium._FPDF_CloseDocument(document)
  return { pixels: width * height, ...counted, loadMs, drawMs }
}


const enc = (t: string) => new TextEncoder().encode(t)
function pdf(objects: (string | Uint8Array)[]): Uint8Array {
  const parts: Uint8Array[] = [enc('%PDF-1.7\n')]
  let off = parts[0]!.length
  const offs: number[] = []
  objects.forEach((o, i) => {
    offs.push(off)
    for (const p of [enc(`${i + 1} 0 obj\n`), typeof o === 'string' ? enc(o) : o, enc('\nendobj\n')]) { parts.push(p); off += p.length }
  })
  const xref = `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offs.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`
  parts.push(enc(`${xref}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${off}\n%%EOF\n`))
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0)); let at = 0; for (const p of parts) { out.set(p, at); at += p.length }
  return out
}
const stream = (dict: string, data: Uint8Array) => { const z = deflateSync(data); const head = enc(`<< ${dict} /Filter /FlateDecode /Length ${z.length} >>\nstream\n`); const tail = enc('\nendstream'); const o = new Uint8Array(head.length + z.length + tail.length); o.set(head); o.set(z, head.length); o.set(tail, head.length + z.length); return o }
const page = (res: string) => ['<< /Type /Catalog /Pages 2 0 R >>', '<< /Type /Pages /Kids [3 0 R] /Count 1 >>', `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources ${res} >>`]
const psfn = (ops: number) => enc(`{ ${'dup 0.5 mul pop '.repeat(ops)} }`)
async function run(name: string, bytes: Uint8Array) {
  const d = await drawFirstPage(bytes)
  console.log(name, (bytes.length / 1024).toFixed(1), 'KB load', d.loadMs.toFixed(0), 'ms draw', d.drawMs.toFixed(0), 'ms')
}
for (const f of process.argv.slice(2)) await run(f, new Uint8Array(readFileSync(f)))
