// The work of drawing a PDF page, counted before PDFium draws it. A page's bytes bound its objects, not their work:
// each one may paint the whole page (`0 0 612 792 re f`, 20 bytes). So each object's box on the drawn rectangle is
// summed, form XObjects walked into, weighted by what PDFium spends on a pixel of its kind (docs/platform-limits.md,
// "What bounds a PDF page's drawing"), and a page whose sum passes its bound is refused before it is drawn.

/** The part of PDFium's C API the count reads. */
export interface PdfiumPaintApi {
  HEAPF32: Float32Array
  HEAP32: Int32Array
  HEAPU32: Uint32Array
  wasmExports: { malloc(size: number): number; free(pointer: number): void }
  _FPDF_GetPageWidth(page: number): number
  _FPDF_GetPageHeight(page: number): number
  _FPDF_PageToDevice(
    page: number,
    startX: number,
    startY: number,
    sizeX: number,
    sizeY: number,
    rotate: number,
    pageX: number,
    pageY: number,
    deviceX: number,
    deviceY: number,
  ): number
  _FPDFPage_CountObjects(page: number): number
  _FPDFPage_GetObject(page: number, index: number): number
  _FPDFPageObj_GetType(object: number): number
  _FPDFFormObj_CountObjects(form: number): number
  _FPDFFormObj_GetObject(form: number, index: number): number
  _FPDFPageObj_GetBounds(object: number, left: number, bottom: number, right: number, top: number): number
  _FPDFPageObj_GetMatrix(object: number, matrix: number): number
  _FPDFPageObj_HasTransparency(object: number): number
  _FPDFPageObj_GetFillColor(object: number, r: number, g: number, b: number, a: number): number
  _FPDFPageObj_GetStrokeColor(object: number, r: number, g: number, b: number, a: number): number
  _FPDFPageObj_GetStrokeWidth(object: number, width: number): number
  _FPDFPath_GetDrawMode(path: number, fillMode: number, stroke: number): number
  _FPDFPath_CountSegments(path: number): number
  _FPDFPath_GetPathSegment(path: number, index: number): number
  _FPDFPathSegment_GetPoint(segment: number, x: number, y: number): number
  _FPDFPathSegment_GetType(segment: number): number
  _FPDFPathSegment_GetClose(segment: number): number
  _FPDFPage_GetAnnotCount(page: number): number
  _FPDFPage_GetAnnot(page: number, index: number): number
  _FPDFPage_CloseAnnot(annotation: number): void
  _FPDFAnnot_GetRect(annotation: number, rect: number): number
  _FPDFAnnot_GetObjectCount(annotation: number): number
  _FPDFAnnot_GetObject(annotation: number, index: number): number
}

/**
 * The most a page may paint, in pixels of opaque fills: this many times the largest page's pixels (the caller's
 * PDF_MAX_PAGE_PIXELS), whatever its scale or crop. The largest page's area costs PDFium at most 3.6 ms to paint
 * (filled curves larger than the page), so a page is at most about 1.1 s of drawing; with a 12 MP image decoded,
 * still under the 880 ms a megapixel config.ts counts a PDF page. Pages of text paint a few areas, a page-sized
 * image 12.
 */
export const MAX_PAINTED_AREAS = 300
/** Objects a page's count visits at most, form XObjects' included: PDFium has already built each one. */
export const MAX_PAINT_OBJECTS = 1_000_000

/**
 * What painting a pixel costs for each kind of object, in pixels of an opaque fill (0.3–3.6 ms for the area of a
 * 2.2 MP page), measured and rounded up: a page-sized image 10 ms, 24 ms with a soft mask (92 ms rotated or skewed,
 * where PDFium transforms each pixel), a shading 19 ms, a tiling pattern of small cells 26 ms; a blend mode, an alpha
 * or a soft mask of the graphics state adds up to 34 ms (docs/platform-limits.md, "What bounds a PDF page's drawing").
 */
export const PAINT_WEIGHTS = {
  path: 1,
  /** A pixel of a stroke's length, besides the pixels its width covers. */
  strokeLength: 50,
  text: 1,
  image: 12,
  skewedImage: 40,
  shading: 10,
  /** A path filled or stroked with a colour PDFium gives patterns: it may be a tiling pattern's or a shading's. */
  pattern: 12,
  transparency: 15,
  /** Pixels each object counts, however small (3–5 µs each to build, clip and draw). */
  object: 3000,
} as const

/** The page would paint more than its bound (MAX_PAINTED_AREAS), or has more than MAX_PAINT_OBJECTS objects. */
export class PdfPaintTooLargeError extends Error {
  override readonly name = 'PdfPaintTooLargeError'
  readonly page: number
  /** Pixels painted, weighted, as counted up to where the count stopped. */
  readonly paintedPixels: number
  /** The most the page could paint. */
  readonly maxPixels: number
  /** Objects visited up to there. */
  readonly objects: number

  // Fields, not parameter properties: bench/cpu-worst.ts imports this module under Node's type stripping.
  constructor(page: number, paintedPixels: number, maxPixels: number, objects: number) {
    const megapixels = (pixels: number) => (pixels / 1e6).toFixed(1)
    super(
      objects > MAX_PAINT_OBJECTS
        ? `page ${page} draws more than ${MAX_PAINT_OBJECTS} objects`
        : `page ${page} would paint ${megapixels(paintedPixels)} megapixels (each object's box, weighted by its kind); at most ${megapixels(maxPixels)} are painted`,
    )
    this.page = page
    this.paintedPixels = paintedPixels
    this.maxPixels = maxPixels
    this.objects = objects
  }
}

const FPDF_PAGEOBJ_TEXT = 1
const FPDF_PAGEOBJ_PATH = 2
export const FPDF_PAGEOBJ_IMAGE = 3
const FPDF_PAGEOBJ_SHADING = 4
export const FPDF_PAGEOBJ_FORM = 5
const FPDF_SEGMENT_MOVETO = 2
/** The colour PDFium gives a path painted with a coloured tiling pattern (BGR 0xBFBFBF), and with a shading one. */
const PATTERN_COLOURS = new Set([0xbfbfbf, 0xffffff])
/** How many times larger than the page's points the rectangle FPDF_PageToDevice maps it onto is (pageToDevice). */
const DEVICE_PRECISION = 1000

/** An affine matrix [a b c d e f]: (x, y) → (a x + c y + e, b x + d y + f). */
type Matrix = readonly [number, number, number, number, number, number]

/** `inner` then `outer`. */
const compose = (inner: Matrix, outer: Matrix): Matrix => [
  inner[0] * outer[0] + inner[1] * outer[2],
  inner[0] * outer[1] + inner[1] * outer[3],
  inner[2] * outer[0] + inner[3] * outer[2],
  inner[2] * outer[1] + inner[3] * outer[3],
  inner[4] * outer[0] + inner[5] * outer[2] + outer[4],
  inner[4] * outer[1] + inner[5] * outer[3] + outer[5],
]

/** What the count needs besides the module: the scratch memory it reads answers from, the drawn size, the tally. */
interface Tally {
  readonly scratch: number
  readonly width: number
  readonly height: number
  readonly page: number
  readonly maxPixels: number
  pixels: number
  objects: number
}

/**
 * Counts the pixels a page paints when drawn at `scale` pixels a point, shifted by `window` (its left and top), on a
 * `window.width` × `window.height` rectangle, as renderStrips draws it; throws PdfPaintTooLargeError past
 * MAX_PAINTED_AREAS × `maxPagePixels`.
 * Linear in the objects PDFium has built for the page, and stops at MAX_PAINT_OBJECTS. No closure over the module
 * (PixelRows, png/encode.ts).
 */
export function countPagePaint(
  module: PdfiumPaintApi,
  page: number,
  pageNumber: number,
  scale: number,
  window: { left: number; top: number; width: number; height: number },
  maxPagePixels: number,
): { paintedPixels: number; objects: number } {
  const scratch = module.wasmExports.malloc(32)
  if (!scratch) throw new Error('PDFium could not allocate 32 bytes')
  try {
    const toDevice = compose(displayMatrix(module, page, scratch), [scale, 0, 0, scale, -window.left, -window.top])
    const tally: Tally = {
      scratch,
      width: window.width,
      height: window.height,
      page: pageNumber,
      maxPixels: MAX_PAINTED_AREAS * maxPagePixels,
      pixels: 0,
      objects: 0,
    }
    countObjects(module, page, 'page', toDevice, tally)
    countAnnotations(module, page, toDevice, tally)
    if (tally.pixels > tally.maxPixels)
      throw new PdfPaintTooLargeError(pageNumber, tally.pixels, tally.maxPixels, tally.objects)
    return { paintedPixels: tally.pixels, objects: tally.objects }
  } finally {
    module.wasmExports.free(scratch)
  }
}

/** The page's display matrix (its rotation, y down) onto its whole points, as FPDF_RenderPageBitmapWithMatrix uses. */
function displayMatrix(module: PdfiumPaintApi, page: number, scratch: number): Matrix {
  const unit = DEVICE_PRECISION
  const [e, f] = pageToDevice(module, page, 0, 0, scratch)
  const [ax, ay] = pageToDevice(module, page, unit, 0, scratch)
  const [cx, cy] = pageToDevice(module, page, 0, unit, scratch)
  return [(ax - e) / unit, (ay - f) / unit, (cx - e) / unit, (cy - f) / unit, e, f]
}

/**
 * Where a point of the page falls on its whole points: FPDF_PageToDevice answers whole pixels, so it is asked on a
 * rectangle DEVICE_PRECISION times larger.
 */
function pageToDevice(module: PdfiumPaintApi, page: number, x: number, y: number, scratch: number): [number, number] {
  const width = Math.floor(module._FPDF_GetPageWidth(page)) * DEVICE_PRECISION
  const height = Math.floor(module._FPDF_GetPageHeight(page)) * DEVICE_PRECISION
  module._FPDF_PageToDevice(page, 0, 0, width, height, 0, x, y, scratch, scratch + 4)
  return [module.HEAP32[scratch / 4]! / DEVICE_PRECISION, module.HEAP32[scratch / 4 + 1]! / DEVICE_PRECISION]
}

function readMatrix(module: PdfiumPaintApi, object: number, scratch: number): Matrix | undefined {
  if (!module._FPDFPageObj_GetMatrix(object, scratch)) return undefined
  const [a, b, c, d, e, f] = module.HEAPF32.subarray(scratch / 4, scratch / 4 + 6)
  return [a!, b!, c!, d!, e!, f!]
}

/** What holds objects: a page, a form XObject, an annotation's appearance. */
type Parent = 'page' | 'form' | 'annotation'

function countOf(module: PdfiumPaintApi, parent: number, kind: Parent): number {
  if (kind === 'page') return module._FPDFPage_CountObjects(parent)
  return kind === 'form' ? module._FPDFFormObj_CountObjects(parent) : module._FPDFAnnot_GetObjectCount(parent)
}

function objectOf(module: PdfiumPaintApi, parent: number, kind: Parent, index: number): number {
  if (kind === 'page') return module._FPDFPage_GetObject(parent, index)
  return kind === 'form' ? module._FPDFFormObj_GetObject(parent, index) : module._FPDFAnnot_GetObject(parent, index)
}

/** One more object visited, or PdfPaintTooLargeError past MAX_PAINT_OBJECTS. */
function visit(tally: Tally): void {
  if (++tally.objects > MAX_PAINT_OBJECTS)
    throw new PdfPaintTooLargeError(tally.page, tally.pixels, tally.maxPixels, tally.objects)
}

/** Adds the objects of a page, a form XObject or an appearance, whose space `toDevice` maps onto the drawn area. */
function countObjects(module: PdfiumPaintApi, parent: number, kind: Parent, toDevice: Matrix, tally: Tally): void {
  const count = countOf(module, parent, kind)
  for (let i = 0; i < count; i++) {
    visit(tally)
    tally.pixels += PAINT_WEIGHTS.object
    const object = objectOf(module, parent, kind, i)
    const type = module._FPDFPageObj_GetType(object)
    if (type === FPDF_PAGEOBJ_FORM) {
      // A form's objects are in its own space; its matrix maps that onto its parent's.
      const matrix = readMatrix(module, object, tally.scratch)
      if (matrix) countObjects(module, object, 'form', compose(matrix, toDevice), tally)
      continue
    }
    const box = deviceBox(module, object, toDevice, tally)
    if (box <= 0) continue
    const transparency = module._FPDFPageObj_HasTransparency(object) ? PAINT_WEIGHTS.transparency : 0
    if (type === FPDF_PAGEOBJ_PATH) tally.pixels += pathPaint(module, object, toDevice, tally, box, transparency)
    else tally.pixels += box * (otherWeight(module, object, type, toDevice, tally.scratch) + transparency)
  }
}

/**
 * Adds what the page's annotations paint (PDFium draws their appearances over the page). An appearance's objects
 * are in its own space, which PDF maps from its bounding box onto the annotation's rectangle; the count maps the box
 * of the objects instead (no larger than the bounding box they are drawn in), so an object counts at least its
 * share of the rectangle.
 */
function countAnnotations(module: PdfiumPaintApi, page: number, toDevice: Matrix, tally: Tally): void {
  const count = module._FPDFPage_GetAnnotCount(page)
  for (let i = 0; i < count; i++) {
    visit(tally)
    const annotation = module._FPDFPage_GetAnnot(page, i)
    if (!annotation) continue
    try {
      const toPage = appearanceToPage(module, annotation, tally)
      if (toPage) countObjects(module, annotation, 'annotation', compose(toPage, toDevice), tally)
    } finally {
      module._FPDFPage_CloseAnnot(annotation)
    }
  }
}

/** The matrix from the box of an appearance's objects onto its annotation's rectangle, if it has both. */
function appearanceToPage(module: PdfiumPaintApi, annotation: number, tally: Tally): Matrix | undefined {
  const { scratch } = tally
  const count = module._FPDFAnnot_GetObjectCount(annotation)
  if (count <= 0 || !module._FPDFAnnot_GetRect(annotation, scratch)) return undefined
  const [left, top, right, bottom] = module.HEAPF32.subarray(scratch / 4, scratch / 4 + 4) as unknown as number[]
  let x0 = Number.POSITIVE_INFINITY
  let y0 = Number.POSITIVE_INFINITY
  let x1 = Number.NEGATIVE_INFINITY
  let y1 = Number.NEGATIVE_INFINITY
  for (let i = 0; i < count; i++) {
    visit(tally)
    const object = module._FPDFAnnot_GetObject(annotation, i)
    if (!module._FPDFPageObj_GetBounds(object, scratch, scratch + 4, scratch + 8, scratch + 12)) continue
    const bounds = module.HEAPF32.subarray(scratch / 4, scratch / 4 + 4)
    x0 = Math.min(x0, bounds[0]!)
    y0 = Math.min(y0, bounds[1]!)
    x1 = Math.max(x1, bounds[2]!)
    y1 = Math.max(y1, bounds[3]!)
  }
  if (!(x1 > x0 && y1 > y0)) return undefined
  const scaleX = (right! - left!) / (x1 - x0)
  const scaleY = (top! - bottom!) / (y1 - y0)
  return [scaleX, 0, 0, scaleY, left! - x0 * scaleX, bottom! - y0 * scaleY]
}

/** The pixels of the drawn rectangle under the object's box (its stroke included). */
function deviceBox(module: PdfiumPaintApi, object: number, toDevice: Matrix, tally: Tally): number {
  const { scratch } = tally
  if (!module._FPDFPageObj_GetBounds(object, scratch, scratch + 4, scratch + 8, scratch + 12)) return 0
  const bounds = module.HEAPF32.subarray(scratch / 4, scratch / 4 + 4)
  let x0 = Number.POSITIVE_INFINITY
  let y0 = Number.POSITIVE_INFINITY
  let x1 = Number.NEGATIVE_INFINITY
  let y1 = Number.NEGATIVE_INFINITY
  for (const [x, y] of [
    [bounds[0]!, bounds[1]!],
    [bounds[2]!, bounds[1]!],
    [bounds[0]!, bounds[3]!],
    [bounds[2]!, bounds[3]!],
  ]) {
    const deviceX = x! * toDevice[0] + y! * toDevice[2] + toDevice[4]
    const deviceY = x! * toDevice[1] + y! * toDevice[3] + toDevice[5]
    x0 = Math.min(x0, deviceX)
    x1 = Math.max(x1, deviceX)
    y0 = Math.min(y0, deviceY)
    y1 = Math.max(y1, deviceY)
  }
  const width = Math.min(x1, tally.width) - Math.max(x0, 0)
  const height = Math.min(y1, tally.height) - Math.max(y0, 0)
  return width > 0 && height > 0 ? width * height : 0
}

/**
 * A path's paint: its `box` (deviceBox) filled, weighted as a pattern's when its colour is the one PDFium gives
 * patterns, plus `transparency`; its lines stroked (strokePaint).
 */
function pathPaint(
  module: PdfiumPaintApi,
  path: number,
  toDevice: Matrix,
  tally: Tally,
  box: number,
  transparency: number,
) {
  const { scratch } = tally
  if (!module._FPDFPath_GetDrawMode(path, scratch, scratch + 4)) return box * (PAINT_WEIGHTS.pattern + transparency)
  const isFilled = module.HEAP32[scratch / 4] !== 0
  const isStroked = module.HEAP32[scratch / 4 + 1] !== 0
  const isPattern =
    (isFilled &&
      module._FPDFPageObj_GetFillColor(path, scratch, scratch + 4, scratch + 8, scratch + 12) &&
      isPatternColour(module, scratch)) ||
    (isStroked &&
      module._FPDFPageObj_GetStrokeColor(path, scratch, scratch + 4, scratch + 8, scratch + 12) &&
      isPatternColour(module, scratch))
  const weight = (isPattern ? PAINT_WEIGHTS.pattern : PAINT_WEIGHTS.path) + transparency
  return ((isFilled ? box : 0) + (isStroked ? strokePaint(module, path, toDevice, tally, box) : 0)) * weight
}

/**
 * A stroke costs PDFium its lines' length, not its box (a diagonal across the page is a pixel a row), and a pixel of
 * line costs many of a fill (the curve flattened, the stroker, the antialiasing of both edges): its length in
 * pixels (of the polygon through its points, at least a Bézier curve's), times PAINT_WEIGHTS.strokeLength, plus
 * the area it covers, its box at most.
 */
function strokePaint(module: PdfiumPaintApi, path: number, toDevice: Matrix, tally: Tally, box: number): number {
  const { scratch } = tally
  const width = module._FPDFPageObj_GetStrokeWidth(path, scratch) ? module.HEAPF32[scratch / 4]! : 1
  const matrix = readMatrix(module, path, scratch)
  const toPixels = matrix ? compose(matrix, toDevice) : toDevice
  const lineWidth = width * Math.sqrt(Math.abs(toPixels[0] * toPixels[3] - toPixels[1] * toPixels[2]))
  let length = 0
  let [x, y, startX, startY] = [0, 0, 0, 0]
  const count = module._FPDFPath_CountSegments(path)
  for (let i = 0; i < count; i++) {
    const segment = module._FPDFPath_GetPathSegment(path, i)
    if (!segment || !module._FPDFPathSegment_GetPoint(segment, scratch, scratch + 4)) continue
    const pointX = module.HEAPF32[scratch / 4]!
    const pointY = module.HEAPF32[scratch / 4 + 1]!
    const deviceX = pointX * toPixels[0] + pointY * toPixels[2] + toPixels[4]
    const deviceY = pointX * toPixels[1] + pointY * toPixels[3] + toPixels[5]
    if (i > 0 && module._FPDFPathSegment_GetType(segment) !== FPDF_SEGMENT_MOVETO)
      length += Math.hypot(deviceX - x, deviceY - y)
    else [startX, startY] = [deviceX, deviceY]
    ;[x, y] = [deviceX, deviceY]
    if (module._FPDFPathSegment_GetClose(segment)) length += Math.hypot(startX - x, startY - y)
  }
  return length * PAINT_WEIGHTS.strokeLength + Math.min(box, length * Math.max(1, lineWidth))
}

/** What a pixel of a text, a shading or an image (or an unknown object) costs, in pixels of an opaque path. */
function otherWeight(module: PdfiumPaintApi, object: number, type: number, toDevice: Matrix, scratch: number) {
  if (type === FPDF_PAGEOBJ_TEXT) return PAINT_WEIGHTS.text
  if (type === FPDF_PAGEOBJ_SHADING) return PAINT_WEIGHTS.shading
  if (type !== FPDF_PAGEOBJ_IMAGE) return PAINT_WEIGHTS.skewedImage
  const matrix = readMatrix(module, object, scratch)
  const [a, b, c, d] = matrix ? compose(matrix, toDevice) : [1, 1, 1, 1]
  // PDFium stretches an image drawn upright or turned a quarter, and transforms every pixel of any other.
  const isUpright = Math.abs(b) < Math.abs(a) / 20 && Math.abs(c) < Math.abs(d) / 20
  const isQuarterTurned = Math.abs(a) < Math.abs(b) / 20 && Math.abs(d) < Math.abs(c) / 20
  return isUpright || isQuarterTurned ? PAINT_WEIGHTS.image : PAINT_WEIGHTS.skewedImage
}

const isPatternColour = (module: PdfiumPaintApi, scratch: number) =>
  PATTERN_COLOURS.has(
    (module.HEAPU32[scratch / 4]! << 16) | (module.HEAPU32[scratch / 4 + 1]! << 8) | module.HEAPU32[scratch / 4 + 2]!,
  )
