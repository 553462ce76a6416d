// bench/pdf-draw-cost: what PDFium's drawing costs for the work the paint walk cannot see (worker/engines/pdf-paint.ts
// sees PDFium's page objects: a text object's box, a path's box, not what each glyph, a pattern's cell or a soft
// mask's group draws each time it is used). Hostile pages of test/hostile/corpus.ts, each at two to five sizes of its
// counts, drawn as pdf-to-png draws a page (150 dpi, at most PDF_MAX_PAGE_PIXELS, in strips of STRIP_BYTES, with
// annotations) by the same @hyzyla/pdfium WASM binary in Node, and again in one bitmap:
// - Helvetica glyphs piled on one spot (pdfGlyphPile), at 12 and 600 pt: a unit is a byte shown;
// - Type 3 glyphs whose procedure fills its box (pdfType3Glyphs), at 12, 600 and 2000 pt, d0 and d1:
//   glyphs × (procFills + 1);
// - fills with a tiling pattern whose one cell is the page (pdfPatternCells): objects × (cellFills + 1);
// - fills under a luminosity soft mask (pdfSoftMaskRedraw): objects × (groupFills + 1);
// the last two with objects the page's size and 1 × 1 pt;
// - a function shading whose PostScript function runs for each pixel (pdfFunctionShading), a 1 MP image in DeviceN
//   inks whose tint transform runs for each pixel (pdfTintImage): a unit is an operator; page-sized triangles of a
//   mesh shading (pdfMeshShading): a triangle.
// Each is set against two baselines measured in the same run:
// an opaque fill of the whole page (pdfWholePageFills) and a 1 × 1 pt fill (an object the walk counts 3,000 pixels).
// CPU is the process's (process.cpuUsage), for loading the page (PDFium parses its content and builds its objects)
// and drawing it, each page in a fresh PDFium. A unit's cost is the slope from the first size of its class to the
// largest, so what a page costs whatever its count (the document, the bitmap) is left out; doubling the count must
// double the cost for the work to be linear in it. Beside each page, what the walk counts for it (countPagePaint, as
// pdfium.ts calls it before drawing) and the CPU of each area it counts: the bound assumes at most 3.6 ms.
// Run: npm run bench:pdf-draw-cost (about 2 minutes).
import { readFileSync } from 'node:fs'
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

const corpus = await import('../test/hostile/corpus.ts')
const { buildPdf } = await import('../test/support/pdf.ts')
const { PDFiumLibrary } = await import('@hyzyla/pdfium')
const { countPagePaint, PdfPaintTooLargeError } = await import('../worker/engines/pdf-paint.ts')

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
  const counted = countedAreas(pdfium, page, scale, width, height)
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

/** What the walk counts for the page, as pdfium.ts asks it to before drawing. */
function countedAreas(pdfium: Pdfium, page: number, scale: number, width: number, height: number) {
  try {
    const window = { left: 0, top: 0, width, height }
    const { paintedPixels } = countPagePaint(pdfium, page, 1, scale, window, PDF_MAX_PAGE_PIXELS)
    return { areas: paintedPixels / PDF_MAX_PAGE_PIXELS, isRefused: false }
  } catch (error) {
    if (!(error instanceof PdfPaintTooLargeError)) throw error
    return { areas: error.paintedPixels / PDF_MAX_PAGE_PIXELS, isRefused: true }
  }
}

/** One size of a class: its label, the units it draws, and its page. */
interface Size {
  readonly label: string
  readonly units: number
  bytes(): Promise<Uint8Array> | Uint8Array
}
interface Class {
  readonly name: string
  readonly unit: string
  readonly sizes: readonly Size[]
}

/** 1 × 1 pt fills spread over the page, none on another. */
const tinyFills = (count: number) =>
  buildPdf([
    {
      width: 612,
      height: 792,
      content: Array.from({ length: count }, (_, i) => `${i % 600} ${Math.floor(i / 600) % 780} 1 1 re f`).join('\n'),
    },
  ])

/** A class whose page draws `count` things, a unit each. */
const counted = (
  name: string,
  unit: string,
  counts: readonly number[],
  page: (count: number) => Promise<Uint8Array> | Uint8Array,
): Class => ({
  name,
  unit,
  sizes: counts.map((count) => ({ label: `${count} ${unit}s`, units: count, bytes: () => page(count) })),
})

const WHOLE_PAGE_FILL = counted('baseline: opaque fills of the whole page', 'fill', [200, 400, 800], (fills) =>
  corpus.pdfWholePageFills(fills),
)
const TINY_FILL = counted('baseline: 1 × 1 pt fills', 'object', [50_000, 100_000, 200_000], tinyFills)
/** A class whose page draws `count` things, each drawing `fills` fills where the walk does not look. */
const multiplied = (
  name: string,
  unit: string,
  label: (count: number, fills: number) => string,
  sizes: readonly (readonly [number, number])[],
  page: (count: number, fills: number) => Promise<Uint8Array> | Uint8Array,
): Class => ({
  name,
  unit,
  sizes: sizes.map(([count, fills]) => ({
    label: label(count, fills),
    units: count * (fills + 1),
    bytes: () => page(count, fills),
  })),
})

/** A multiplied class twice: its objects the page's size, and 1 × 1 pt. */
const bySize = (
  name: string,
  unit: string,
  label: (count: number, fills: number) => string,
  sizes: { page: readonly (readonly [number, number])[]; tiny: readonly (readonly [number, number])[] },
  page: (count: number, fills: number, rectangle?: string) => Uint8Array,
): Class[] => [
  multiplied(`page-sized ${name}`, unit, label, sizes.page, (count, fills) => page(count, fills)),
  multiplied(`1 × 1 pt ${name}`, unit, label, sizes.tiny, (count, fills) => page(count, fills, '300 400 1 1')),
]

const HIDDEN: readonly Class[] = [
  counted('Helvetica glyphs of 12 pt on one spot (pdfGlyphPile)', 'glyph', [100_000, 200_000, 400_000], (glyphs) =>
    corpus.pdfGlyphPile(glyphs),
  ),
  counted('Helvetica glyphs of 600 pt on one spot (pdfGlyphPile)', 'glyph', [500, 1000, 2000], (glyphs) =>
    corpus.pdfGlyphPile(glyphs, 600),
  ),
  multiplied(
    'Type 3 glyphs of 600 pt, each a procedure of fills (pdfType3Glyphs)',
    'glyph × (procFills + 1)',
    (glyphs, fills) => `${glyphs} glyphs × ${fills} fills`,
    [
      [100, 10],
      [200, 10],
      [400, 10],
      [200, 20],
    ],
    (glyphs, fills) => corpus.pdfType3Glyphs(glyphs, fills),
  ),
  multiplied(
    'Type 3 glyphs of 2000 pt, past the page (pdfType3Glyphs)',
    'glyph × (procFills + 1)',
    (glyphs, fills) => `${glyphs} glyphs × ${fills} fills`,
    [
      [50, 10],
      [100, 10],
    ],
    (glyphs, fills) => corpus.pdfType3Glyphs(glyphs, fills, { points: 2000 }),
  ),
  multiplied(
    'Type 3 glyphs of 600 pt declared with d1 (pdfType3Glyphs)',
    'glyph × (procFills + 1)',
    (glyphs, fills) => `${glyphs} glyphs × ${fills} fills`,
    [
      [50, 10],
      [100, 10],
    ],
    (glyphs, fills) => corpus.pdfType3Glyphs(glyphs, fills, { declaration: 'd1' }),
  ),
  multiplied(
    'Type 3 glyphs of 12 pt (pdfType3Glyphs)',
    'glyph × (procFills + 1)',
    (glyphs, fills) => `${glyphs} glyphs × ${fills} fills`,
    [
      [2000, 10],
      [4000, 10],
      [4000, 40],
    ],
    (glyphs, fills) => corpus.pdfType3Glyphs(glyphs, fills, { points: 12 }),
  ),
  ...bySize(
    'fills with a page-sized tiling pattern (pdfPatternCells)',
    'object × (cellFills + 1)',
    (objects, fills) => `${objects} objects × ${fills} cell fills`,
    {
      page: [
        [20, 10],
        [40, 10],
        [80, 10],
        [40, 20],
      ],
      tiny: [
        [2000, 10],
        [4000, 10],
        [4000, 40],
      ],
    },
    corpus.pdfPatternCells,
  ),
  ...bySize(
    'fills under a soft mask (pdfSoftMaskRedraw)',
    'object × (groupFills + 1)',
    (objects, fills) => `${objects} objects × ${fills} group fills`,
    {
      page: [
        [5, 50],
        [10, 50],
        [20, 50],
        [10, 100],
        [20, 0],
      ],
      tiny: [
        [2000, 50],
        [4000, 50],
        [4000, 200],
      ],
    },
    corpus.pdfSoftMaskRedraw,
  ),
  counted(
    'a function shading over the page, each pixel running its PostScript function (pdfFunctionShading)',
    'operator',
    [30, 300, 1200],
    (operators) => corpus.pdfFunctionShading(operators),
  ),
  counted(
    'a 1 MP image in two DeviceN inks, each pixel running its tint transform (pdfTintImage)',
    'operator',
    [3, 30, 300],
    (operators) => corpus.pdfTintImage(1000, operators),
  ),
  counted('page-sized triangles of a mesh shading (pdfMeshShading)', 'triangle', [10, 100, 400], (triangles) =>
    corpus.pdfMeshShading(triangles),
  ),
]

/** A unit's CPU ms: the slope from the first size to the largest. */
function slope(rows: readonly { units: number; ms: number }[]): number {
  const first = rows[0]!
  const last = rows.reduce((largest, row) => (row.units > largest.units ? row : largest))
  return (last.ms - first.ms) / (last.units - first.units)
}

/** Every size of a class drawn; a unit's CPU ms drawn in strips (as deployed) and in one bitmap. */
async function measure(drawn: Class): Promise<{ unitMs: number; wholeUnitMs: number }> {
  console.log(`\n${drawn.name}, a unit is a ${drawn.unit}`)
  console.log(
    "size | KB | units | load ms | draw ms | CPU ms | µs a unit | × the first size | CPU ms in one bitmap | walk's areas | CPU ms an area counted",
  )
  const rows: { units: number; ms: number }[] = []
  const wholeRows: { units: number; ms: number }[] = []
  for (const size of drawn.sizes) {
    const bytes = await size.bytes()
    const { loadMs, drawMs, pixels, areas, isRefused } = await drawFirstPage(bytes)
    const ms = loadMs + drawMs
    rows.push({ units: size.units, ms })
    const whole = await drawFirstPage(bytes, true)
    wholeRows.push({ units: size.units, ms: whole.loadMs + whole.drawMs })
    const cells = [
      size.label,
      (bytes.length / 1024).toFixed(1),
      size.units,
      loadMs.toFixed(0),
      drawMs.toFixed(0),
      ms.toFixed(0),
      ((ms / size.units) * 1000).toFixed(2),
      `${(size.units / rows[0]!.units).toFixed(1)} units: ${(ms / rows[0]!.ms).toFixed(2)} CPU`,
      (whole.loadMs + whole.drawMs).toFixed(0),
      isRefused ? `${areas.toFixed(1)}: refused` : areas.toFixed(1),
      (ms / areas).toFixed(1),
    ]
    console.log(`${cells.join(' | ')}${rows.length === 1 ? ` (${(pixels / 1e6).toFixed(2)} MP)` : ''}`)
  }
  return { unitMs: slope(rows), wholeUnitMs: slope(wholeRows) }
}

const pageWidth = Math.floor(612 * (DPI / 72))
const pageHeight = Math.floor(792 * (DPI / 72))
const pagePixels = pageWidth * pageHeight
const strips = Math.ceil(pageHeight / Math.floor(STRIP_BYTES / (pageWidth * 4)))
console.log(
  `load average ${loadavg()[0]!.toFixed(1)}; US Letter at ${DPI} dpi (${pageWidth} × ${pageHeight}), drawn as pdf-to-png draws it in ${strips} strips, and in one bitmap`,
)
const fill = await measure(WHOLE_PAGE_FILL)
const object = await measure(TINY_FILL)
const fillMs = fill.unitMs
const objectMs = object.unitMs
console.log(
  `\nbaselines: a whole-page fill ${fillMs.toFixed(3)} ms (${((fillMs / pagePixels) * 1e6).toFixed(3)} ns a pixel; ${fill.wholeUnitMs.toFixed(3)} in one bitmap); a 1 × 1 pt fill ${(objectMs * 1000).toFixed(2)} µs (${((objectMs / fillMs) * pagePixels).toFixed(0)} pixels of fill; the walk counts ${OBJECT_PIXELS})`,
)
const summary: string[] = []
for (const hidden of HIDDEN) {
  const { unitMs, wholeUnitMs } = await measure(hidden)
  summary.push(
    [
      hidden.name,
      hidden.unit,
      (unitMs * 1000).toFixed(2),
      (unitMs / fillMs).toFixed(3),
      (unitMs / objectMs).toFixed(1),
      ((unitMs / fillMs) * pagePixels).toFixed(0),
      ((unitMs / WEIGHTED_AREA_MS) * PDF_MAX_PAGE_PIXELS).toFixed(0),
      (wholeUnitMs / fill.wholeUnitMs).toFixed(3),
    ].join(' | '),
  )
}
console.log(
  `\nclass | unit | µs a unit | × a whole-page fill | × a 1 × 1 pt fill | pixels of fill a unit | walk pixels a unit (3.6 ms an area) | × a whole-page fill, both in one bitmap`,
)
for (const row of summary) console.log(row)
