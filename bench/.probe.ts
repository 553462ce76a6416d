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
for (const n of [100, 400]) {
  await run(`function shading type1, ${n}x4 ops`, pdf([...page('<< /Shading << /S1 5 0 R >> >>'), stream('', enc('/S1 sh')), `<< /ShadingType 1 /ColorSpace /DeviceGray /Domain [0 612 0 792] /Function 6 0 R >>`, stream('/FunctionType 4 /Domain [0 612 0 792] /Range [0 1]', psfn(n))]))
}
for (const n of [1000, 4000]) {
  await run(`axial shading, ${n}x4 ops`, pdf([...page('<< /Shading << /S1 5 0 R >> >>'), stream('', enc('/S1 sh')), `<< /ShadingType 2 /ColorSpace /DeviceGray /Coords [0 0 612 0] /Function 6 0 R >>`, stream('/FunctionType 4 /Domain [0 1] /Range [0 1]', psfn(n))]))
}
for (const k of [100, 400]) {
  // free-form triangle mesh: flag(8) x(16) y(16) gray(8)
  const tri = new Uint8Array(k * 3 * 6)
  for (let t = 0; t < k; t++) {
    const pts = [[0, 0], [65535, 0], [0, 65535]]
    pts.forEach(([x, y], j) => { const o = (t * 3 + j) * 6; tri[o] = 0; tri[o + 1] = x >> 8; tri[o + 2] = x & 255; tri[o + 3] = y >> 8; tri[o + 4] = y & 255; tri[o + 5] = (t * 37 + j * 80) & 255 })
  }
  await run(`mesh shading, ${k} page-sized triangles`, pdf([...page('<< /Shading << /S1 5 0 R >> >>'), stream('', enc('/S1 sh')), stream('/ShadingType 4 /ColorSpace /DeviceGray /BitsPerCoordinate 16 /BitsPerComponent 8 /BitsPerFlag 8 /Decode [0 1224 0 1584 0 1]', tri)]))
}
for (const n of [50, 200]) {
  const w = 1000
  const img = new Uint8Array(w * w * 2).map((_, i) => (i * 7) & 255)
  await run(`DeviceN image 1000x1000, tint ${n}x4 ops`, pdf([...page('<< /XObject << /Im 5 0 R >> >>'), stream('', enc('612 0 0 792 0 0 cm /Im Do')), stream(`/Type /XObject /Subtype /Image /Width ${w} /Height ${w} /BitsPerComponent 8 /ColorSpace [/DeviceN [/A /B] /DeviceGray 6 0 R]`, img), stream('/FunctionType 4 /Domain [0 1 0 1] /Range [0 1]', enc(`{ ${'dup 0.5 mul pop '.repeat(n)} pop }`))]))
}
