// PDFium compiled to WASM (@hyzyla/pdfium, MIT/Apache-2.0), driven through its C API so that a page never exists
// whole. The module is imported statically: workerd compiles no WebAssembly from bytes.
// The PDF is streamed into the WASM heap (no second copy in JavaScript). Each page is rendered in strips of at most
// STRIP_BYTES that the PNG encoder reads straight from the heap, with a turn of the event loop between strips.
// One instance per isolate, reused while its heap stays under REUSE_MAX_HEAP_BYTES, else dropped and made anew.
// WASM memory never shrinks, so a heap grown by a huge page would stay for every later document. Discarded
// instances live until the garbage collector runs, so one instance per document piles up heaps. An engine error
// drops the instance too: a corrupted heap is never reused.
// Before PDFium decodes anything, pdf-streams.ts measures what each stream decodes to against the caller's byte
// budget (PDFium inflates a stream whole). An encrypted document's streams are decrypted first with the key
// pdf-crypt.ts finds, as PDFium will.
import { PDFiumLibrary } from '@hyzyla/pdfium'
import pdfiumWasm from '@hyzyla/pdfium/pdfium.wasm'
import { inTurns, yieldToEventLoop } from './event-loop'
import { MAX_JPEG_SCANS, readJpegStructure } from './image/jpeg-end'
import { coefficientBytes, readJpegFrame } from './image/jpeg-memory'
import { ContentScan, PdfDrawingTooLargeError } from './pdf-content'
import { findPdfDecryptions, type PdfDecryption, PdfPasswordError, PdfSecurityHandlerError } from './pdf-crypt'
import {
  countPagePaint,
  FPDF_PAGEOBJ_FORM,
  FPDF_PAGEOBJ_IMAGE,
  type PdfiumPaintApi,
  PdfPaintTooLargeError,
} from './pdf-paint'
import {
  type FileSlices,
  findPdfStreamsInSlices,
  measurePdfStreams,
  PdfStreamSyntaxError,
  PdfStreamTooLargeError,
} from './pdf-streams'
import type { PixelRows } from './png/encode'

export { PdfDrawingTooLargeError, PdfPaintTooLargeError, PdfStreamSyntaxError, PdfStreamTooLargeError }

/** Largest bitmap rendered at once: a strip of the page, as wide as the page. */
export const STRIP_BYTES = 2 * 2 ** 20
/** An instance whose heap grew past this is dropped after its document. */
export const REUSE_MAX_HEAP_BYTES = 32 * 2 ** 20

const BYTES_PER_PIXEL = 4
const FPDFBITMAP_BGRA = 4
const FPDF_ANNOT = 0x01
/** With BGRA bitmaps: write R, G, B, A in that order. */
const FPDF_REVERSE_BYTE_ORDER = 0x10
const FPDF_ERRORS: Record<number, string> = {
  1: 'unknown error',
  2: 'file not found or could not be opened',
  3: 'file not in PDF format or corrupted',
  4: 'password required or incorrect password',
  5: 'unsupported security scheme',
  6: 'page not found or content error',
}
const FPDF_ERR_PASSWORD = 4

/** The part of PDFium's C API (as the emscripten module exports it) this engine uses. */
export interface PdfiumModule extends PdfiumPaintApi {
  HEAPU8: Uint8Array
  _FPDF_LoadMemDocument(data: number, size: number, password: number): number
  _FPDF_GetLastError(): number
  _FPDF_CloseDocument(document: number): void
  _FPDF_GetPageCount(document: number): number
  _FPDF_LoadPage(document: number, index: number): number
  _FPDF_ClosePage(page: number): void
  _FPDFBitmap_CreateEx(width: number, height: number, format: number, buffer: number, stride: number): number
  _FPDFBitmap_FillRect(bitmap: number, left: number, top: number, width: number, height: number, color: number): void
  _FPDFBitmap_Destroy(bitmap: number): void
  _FPDF_RenderPageBitmapWithMatrix(bitmap: number, page: number, matrix: number, clipping: number, flags: number): void
  _FPDFImageObj_GetImagePixelSize(image: number, width: number, height: number): number
  _FPDFImageObj_GetImageFilterCount(image: number): number
  _FPDFImageObj_GetImageFilter(image: number, index: number, buffer: number, length: number): number
  _FPDFImageObj_GetImageDataRaw(image: number, buffer: number, length: number): number
  _FPDFText_LoadPage(page: number): number
  _FPDFText_ClosePage(textPage: number): void
  _FPDFText_CountChars(textPage: number): number
  _FPDFText_GetText(textPage: number, start: number, count: number, result: number): number
}

export class PdfOpenError extends Error {
  override readonly name = 'PdfOpenError'
  constructor(
    message: string,
    readonly needsPassword: boolean,
  ) {
    super(message)
  }
}

/**
 * A page holds an image larger than the caller's limit: PDFium would decode it whole, whatever the DPI. With
 * `heapBytes`, the image is within the pixel limit but its decode would not fit an isolate (IMAGE_HEAP_MAX_BYTES).
 */
export class PdfImageTooLargeError extends Error {
  override readonly name = 'PdfImageTooLargeError'
  constructor(
    readonly page: number,
    readonly width: number,
    readonly height: number,
    readonly heapBytes?: number,
  ) {
    super(
      heapBytes
        ? `page ${page} holds a ${width} × ${height} image that needs about ${Math.ceil(heapBytes / 2 ** 20)} MiB to decode; PDF images are decoded in at most ${IMAGE_HEAP_MAX_BYTES / 2 ** 20} MiB (a Worker has 128 MB)`
        : `page ${page} holds a ${width} × ${height} image`,
    )
  }
}

/**
 * A page draws a JPEG of more scans than MAX_JPEG_SCANS: each is a pass of PDFium's libjpeg over the whole image, and
 * nothing in the format bounds their count (the image engine refuses the same file, jpeg-end.ts).
 */
export class PdfJpegScansError extends Error {
  override readonly name = 'PdfJpegScansError'
  constructor(
    readonly page: number,
    readonly scans: number,
  ) {
    super(
      `page ${page} holds a JPEG image of ${scans} scans; at most ${MAX_JPEG_SCANS} are decoded (each is a pass over the whole image)`,
    )
  }
}

/** Drawing the document needed more heap than PDFIUM_HEAP_MAX_BYTES: the heap would have grown to `grownBytes`. */
export class PdfHeapLimitError extends Error {
  override readonly name = 'PdfHeapLimitError'
  constructor(
    readonly grownBytes: number,
    options?: ErrorOptions,
  ) {
    super(
      `reading this PDF needs more memory than PDFium may take: its heap would grow to ${Math.ceil(grownBytes / 2 ** 20)} MiB, past the ${PDFIUM_HEAP_MAX_BYTES / 2 ** 20} MiB it may take (a Worker has 128 MB)`,
      options,
    )
  }
}

/** A page rendered at the asked scale would pass a limit, once its size is rounded to whole pixels. */
export class PdfPageTooLargeError extends Error {
  override readonly name = 'PdfPageTooLargeError'
  constructor(
    readonly page: number,
    readonly width: number,
    readonly height: number,
    readonly limit: 'pixels' | 'side',
  ) {
    super(`page ${page} would be ${width} × ${height} pixels`)
  }
}

export interface PdfLimits {
  /** Largest width × height of one image embedded in a page (checked from the image's dictionary). */
  readonly maxImagePixels: number
  /** Largest width × height of a rendered page, after rounding to whole pixels. */
  readonly maxPagePixels: number
  /** Largest width or height of a rendered page. */
  readonly maxSide: number
  /** Largest output of one filter of one stream (PDFium decodes a stream whole), and of object streams together. */
  readonly maxStreamBytes: number
  /** Bytes all streams may decode to, for each page (at least maxStreamBytes for the document). */
  readonly streamBytesPerPage: number
}

export interface PdfPageSize {
  /** Points (1/72 inch), after the page's rotation. */
  readonly width: number
  readonly height: number
}

export interface PageRender {
  readonly width: number
  readonly height: number
  /** RGBA rows (opaque: the page is drawn on white), strip after strip; each strip is valid until the next. */
  readonly strips: Iterable<PixelRows>
}

/** A rectangle of the rendered page, in pixels at the render's scale. */
export interface PixelWindow {
  readonly left: number
  readonly top: number
  readonly width: number
  readonly height: number
}

export interface OpenPdf {
  readonly pageCount: number
  pageSize(index: number): PdfPageSize
  /**
   * Renders a page at `scale` pixels per point, lazily, one strip each time the next is asked for; with `window`,
   * only that rectangle of it (a preview's cover crop), so nothing outside it is ever drawn.
   */
  renderPage(index: number, scale: number, window?: PixelWindow): PageRender
  /**
   * The page's text as PDFium's text page orders it (its reading order: lines top to bottom, words joined with
   * spaces, line breaks as \r\n). At most `maxChars` characters are read.
   */
  pageText(index: number, maxChars: number): string
}

/** The PDF as a stream of known length (the length is checked against the limit before anything is read). */
export interface PdfSource {
  readonly size: number
  stream(): ReadableStream<Uint8Array>
}

let shared: Promise<CappedModule> | undefined

/**
 * Removes the accessors the emscripten glue defines on globalThis while a module is made (hookGlobalSymbolAccess:
 * a warning for each symbol emscripten does not define, only where none exists yet). Their closures hold the
 * module's scope, and with it its WASM memory: the instance would never be collected (docs/platform-limits.md,
 * "What the engines do").
 */
function forgetGlobalHooks(before: ReadonlySet<PropertyKey>): void {
  for (const key of Reflect.ownKeys(globalThis)) {
    if (before.has(key)) continue
    const descriptor = Object.getOwnPropertyDescriptor(globalThis, key)
    if (descriptor?.get && descriptor.configurable) Reflect.deleteProperty(globalThis, key)
  }
}

/**
 * PDFium's heap at most: the isolate's budget (docs/platform-limits.md, "Memory per isolate"). A growth that would
 * pass it is refused, PDFium's allocation fails and it aborts: the document is refused with that reason, and the
 * instance dropped, where an isolate past 128 MB would be killed with every request it serves. No allowed input comes
 * near (a page with a 12 MP image: 70.6 MiB); a page whose forms draw one another thousands of times does.
 */
export const PDFIUM_HEAP_MAX_BYTES = 100 * 2 ** 20
/**
 * How much more than asked the emscripten glue grows a heap: up to a fifth of its size (`_emscripten_resize_heap`
 * in @hyzyla/pdfium's glue). A growth is refused when what the glue would grow to passes the cap.
 */
const GLUE_OVERGROWTH = 1.2

/** What the cap refused in an instance: the size the heap would have grown to, 0 until then. */
interface HeapCap {
  refusedBytes: number
}

/** The module and its cap. */
type CappedModule = PdfiumModule & { readonly heapCap: HeapCap }

function instantiate(): Promise<CappedModule> {
  const globals = new Set(Reflect.ownKeys(globalThis))
  const heapCap: HeapCap = { refusedBytes: 0 }
  shared ??= PDFiumLibrary.init({
    instantiateWasm: (imports, done) => {
      const env = (imports as { env: Record<string, unknown> }).env
      const grow = env.emscripten_resize_heap as (bytes: number) => boolean
      let memory: WebAssembly.Memory | undefined
      env.emscripten_resize_heap = (bytes: number) => {
        const asked = bytes >>> 0
        const grown = Math.max(asked, (memory?.buffer.byteLength ?? 0) * GLUE_OVERGROWTH)
        if (grown <= PDFIUM_HEAP_MAX_BYTES) return grow(bytes)
        heapCap.refusedBytes = grown
        return false
      }
      const instance = new WebAssembly.Instance(pdfiumWasm as WebAssembly.Module, imports)
      memory = instance.exports.memory as WebAssembly.Memory
      ;(done as unknown as (instance: WebAssembly.Instance) => void)(instance)
      return instance.exports
    },
  }).then((library) => {
    forgetGlobalHooks(globals)
    return Object.assign(library['module'] as unknown as PdfiumModule, { heapCap })
  })
  return shared
}

/** Bytes of the instance's linear memory (it only grows). */
export async function pdfiumHeapBytes(): Promise<number> {
  return shared ? (await shared).HEAPU8.byteLength : 0
}

async function copyIntoHeap(module: PdfiumModule, source: PdfSource, pointer: number): Promise<void> {
  let offset = 0
  for await (const chunk of source.stream()) {
    if (offset + chunk.byteLength > source.size)
      throw new PdfOpenError('the file is longer than its recorded size', false)
    module.HEAPU8.set(chunk, pointer + offset) // HEAPU8 is read each time: a growing heap replaces the view
    offset += chunk.byteLength
  }
  if (offset !== source.size) throw new PdfOpenError('the file is shorter than its recorded size', false)
}

function cString(module: PdfiumModule, text: string): number {
  const bytes = new TextEncoder().encode(text)
  const pointer = module.wasmExports.malloc(bytes.length + 1)
  module.HEAPU8.set(bytes, pointer)
  module.HEAPU8[pointer + bytes.length] = 0
  return pointer
}

/**
 * What PDFium's heap holds to draw an image, besides the document: its decoded bitmap (4 bytes a pixel at most) and,
 * for a progressive JPEG (DCTDecode), libjpeg's coefficients for the whole frame (jpeg-memory.ts). A DCT stream behind
 * another filter cannot be read here and counts as the worst JPEG of its size (three full components, buffered).
 * The bound's reason is measured in docs/platform-limits.md, "What is refused, and why".
 */
export const IMAGE_HEAP_MAX_BYTES = 64 * 2 ** 20

/** imageHeapBytes' answer, with the scans of a JPEG it could read (0 for any other image). */
interface ImageCost {
  readonly heapBytes: number
  readonly jpegScans: number
}

function imageHeapBytes(module: PdfiumModule, image: number, width: number, height: number): ImageCost {
  const bitmap = width * height * BYTES_PER_PIXEL
  const filters: string[] = []
  const name = module.wasmExports.malloc(64)
  try {
    for (let i = 0; i < module._FPDFImageObj_GetImageFilterCount(image); i++) {
      const length = module._FPDFImageObj_GetImageFilter(image, i, name, 64)
      filters.push(
        length > 0 && length <= 64 ? new TextDecoder().decode(module.HEAPU8.subarray(name, name + length - 1)) : '',
      )
    }
  } finally {
    module.wasmExports.free(name)
  }
  if (!filters.includes('DCTDecode') && !filters.includes('DCT')) return { heapBytes: bitmap, jpegScans: 0 }
  const worst = { heapBytes: bitmap + width * height * 3 * 2, jpegScans: 0 }
  if (filters.length !== 1) return worst
  const length = module._FPDFImageObj_GetImageDataRaw(image, 0, 0)
  const raw = length > 0 ? module.wasmExports.malloc(length) : 0
  if (!raw) return worst
  try {
    module._FPDFImageObj_GetImageDataRaw(image, raw, length)
    const jpeg = module.HEAPU8.subarray(raw, raw + length)
    const frame = readJpegFrame(jpeg)
    const { scans } = readJpegStructure(jpeg)
    return { heapBytes: frame ? bitmap + coefficientBytes(frame) : worst.heapBytes, jpegScans: scans }
  } finally {
    module.wasmExports.free(raw)
  }
}

/**
 * The largest image a page draws, its form XObjects included (PDFium decodes an image at full size), the most
 * heap one of them needs to decode (imageHeapBytes), and the most scans of one of its JPEGs.
 */
function largestImage(module: PdfiumModule, page: number): LargestImage {
  const largest = { width: 0, height: 0, heapBytes: 0, heapWidth: 0, heapHeight: 0, jpegScans: 0 }
  const size = module.wasmExports.malloc(8)
  try {
    measureImages(module, page, false, size, largest)
  } finally {
    module.wasmExports.free(size)
  }
  return largest
}

interface LargestImage {
  width: number
  height: number
  heapBytes: number
  heapWidth: number
  heapHeight: number
  jpegScans: number
}

/**
 * Measures the images among a page's (or a form XObject's) objects into `largest`, form XObjects walked into. No
 * closure over the module: optimized code may keep a closure it inlined, and its scope (PixelRows, png/encode.ts).
 */
function measureImages(module: PdfiumModule, parent: number, isForm: boolean, size: number, largest: LargestImage) {
  const count = isForm ? module._FPDFFormObj_CountObjects(parent) : module._FPDFPage_CountObjects(parent)
  for (let i = 0; i < count; i++) {
    const object = isForm ? module._FPDFFormObj_GetObject(parent, i) : module._FPDFPage_GetObject(parent, i)
    const type = module._FPDFPageObj_GetType(object)
    if (type === FPDF_PAGEOBJ_FORM) measureImages(module, object, true, size, largest)
    else if (type === FPDF_PAGEOBJ_IMAGE && module._FPDFImageObj_GetImagePixelSize(object, size, size + 4)) {
      const width = module.HEAPU32[size / 4]!
      const height = module.HEAPU32[size / 4 + 1]!
      if (width * height > largest.width * largest.height) Object.assign(largest, { width, height })
      const { heapBytes, jpegScans } = imageHeapBytes(module, object, width, height)
      if (heapBytes > largest.heapBytes) Object.assign(largest, { heapBytes, heapWidth: width, heapHeight: height })
      largest.jpegScans = Math.max(largest.jpegScans, jpegScans)
    }
  }
}

function* renderStrips(module: PdfiumModule, page: number, window: PixelWindow, scale: number): Generator<PixelRows> {
  const { width, height } = window
  const stride = width * BYTES_PER_PIXEL
  const stripRows = Math.max(1, Math.min(height, Math.floor(STRIP_BYTES / stride)))
  const pixels = module.wasmExports.malloc(stride * stripRows)
  const matrix = module.wasmExports.malloc(6 * 4 + 4 * 4) // FS_MATRIX then FS_RECTF, both floats
  const clip = matrix + 6 * 4
  const bitmap = pixels && matrix ? module._FPDFBitmap_CreateEx(width, stripRows, FPDFBITMAP_BGRA, pixels, stride) : 0
  // The rows' closure holds the module through this variable alone, emptied once the page is drawn: optimized code
  // that inlined it may keep it, and its scope, past the step (PixelRows, engines/png/encode.ts).
  let rendering: PdfiumModule | undefined = module
  const heap = () => {
    if (!rendering) throw new Error('the strip was read after its page was drawn')
    return rendering
  }
  try {
    if (!bitmap) throw new Error(`PDFium could not allocate a ${width} × ${stripRows} strip`)
    for (let top = 0; top < height; top += stripRows) {
      const rows = Math.min(stripRows, height - top)
      module._FPDFBitmap_FillRect(bitmap, 0, 0, width, stripRows, 0xffffffff)
      // The page's display matrix (rotation, y down) is followed by ours: scale, then shift the strip to the top.
      module.HEAPF32.set([scale, 0, 0, scale, -window.left, -window.top - top, 0, 0, width, rows], matrix / 4)
      module._FPDF_RenderPageBitmapWithMatrix(bitmap, page, matrix, clip, FPDF_ANNOT | FPDF_REVERSE_BYTE_ORDER)
      yield { rows, row: (r) => heap().HEAPU8.subarray(pixels + r * stride, pixels + (r + 1) * stride) }
    }
  } finally {
    rendering = undefined
    if (bitmap) module._FPDFBitmap_Destroy(bitmap)
    module.wasmExports.free(matrix)
    module.wasmExports.free(pixels)
  }
}

/**
 * Streams the document into the engine, hands it to `use`, and frees it whatever happens. `use` yields its
 * results one at a time (pages): the document stays open while the caller handles each, and is freed when `use`
 * is done, fails, or the caller stops asking. `source.size` must already be within the caller's limit: it is the
 * one copy of the PDF in memory.
 */
export async function* eachFromPdf<T>(
  source: PdfSource,
  password: string | undefined,
  use: (pdf: OpenPdf) => AsyncIterable<T>,
  limits: PdfLimits,
): AsyncGenerator<T> {
  const instance = instantiate()
  const module = await instance
  // The closures below (handed to the scans and to `use`) reach the module through this variable alone, emptied
  // once the document is done: optimized code that inlined one of them may keep it, and its scope, past the step
  // (PixelRows, engines/png/encode.ts).
  let held: PdfiumModule | undefined = module
  const live = () => {
    if (!held) throw new Error('the PDF was read after it was closed')
    return held
  }
  const data = module.wasmExports.malloc(Math.max(1, source.size))
  let document = 0
  try {
    if (!data) throw new Error(`PDFium could not allocate ${source.size} bytes`)
    await copyIntoHeap(module, source, data)
    // What every stream decodes to is measured first, in slices with a turn of the event loop between them (the
    // heap's view is asked for again after each): object and cross-reference streams before PDFium loads them, the
    // others once the page count sets their budget.
    // An encrypted document's streams are measured decrypted, with the key PDFium will find with this password.
    // The scans are handed views of the heap, never a closure over it (FileSlices, pdf-streams.ts).
    const file = { module, data, size: source.size }
    const streams = await scanInTurns(findPdfStreamsInSlices(fileView(file)), file)
    // Content is lexed as it is decoded, and object streams kept, for the count of what each page draws.
    const content = new ContentScan()
    const decryptions = await readDecryptions(fileView(file), password)
    const structureBytes = await scanInTurns(
      measurePdfStreams(
        fileView(file),
        streams.filter((stream) => stream.isStructure),
        { maxStreamBytes: limits.maxStreamBytes, maxTotalBytes: limits.maxStreamBytes },
        0,
        decryptions,
        undefined,
        content,
      ),
      file,
    )
    const passwordPointer = password ? cString(module, password) : 0
    document = module._FPDF_LoadMemDocument(data, source.size, passwordPointer)
    if (passwordPointer) module.wasmExports.free(passwordPointer)
    if (!document) {
      const code = module._FPDF_GetLastError()
      throw new PdfOpenError(FPDF_ERRORS[code] ?? `PDFium error ${code}`, code === FPDF_ERR_PASSWORD)
    }
    const loaded = document
    const pageCount = module._FPDF_GetPageCount(loaded)
    const maxTotalBytes = Math.max(limits.maxStreamBytes, pageCount * limits.streamBytesPerPage)
    await scanInTurns(
      measurePdfStreams(
        fileView(file),
        streams.filter((stream) => !stream.isStructure),
        { maxStreamBytes: limits.maxStreamBytes, maxTotalBytes },
        structureBytes,
        decryptions,
        undefined,
        content,
      ),
      file,
    )
    content.check(fileView(file), streams, limits.maxPagePixels)
    const withPage = <R>(index: number, read: (page: number) => R): R => {
      const page = live()._FPDF_LoadPage(loaded, index)
      if (!page) throw new PdfOpenError(`page ${index + 1} cannot be loaded`, false)
      try {
        return read(page)
      } finally {
        live()._FPDF_ClosePage(page)
      }
    }
    yield* use({
      pageCount,
      pageSize: (index) =>
        withPage(index, (page) => ({
          width: live()._FPDF_GetPageWidth(page),
          height: live()._FPDF_GetPageHeight(page),
        })),
      renderPage(index, scale, window) {
        const { width: points, height: pointsHigh } = this.pageSize(index)
        // Whole points first, as PDFium's own page.render() does (an A4 page at 150 dpi is 1239 × 1752).
        const full = {
          left: 0,
          top: 0,
          width: Math.max(1, Math.floor(Math.floor(points) * scale)),
          height: Math.max(1, Math.floor(Math.floor(pointsHigh) * scale)),
        }
        // A window (a preview's cover crop) is all that is drawn: the limits apply to it.
        const area = window ?? full
        const { width, height } = area
        // Checked after rounding: a 2,000,000,000 × 1 pt page scaled to fit its pixels is still one pixel high.
        if (Math.max(width, height) > limits.maxSide) throw new PdfPageTooLargeError(index + 1, width, height, 'side')
        if (width * height > limits.maxPagePixels) throw new PdfPageTooLargeError(index + 1, width, height, 'pixels')
        return {
          width,
          height,
          strips: {
            *[Symbol.iterator]() {
              const page = live()._FPDF_LoadPage(loaded, index)
              if (!page) throw new PdfOpenError(`page ${index + 1} cannot be loaded`, false)
              try {
                const image = largestImage(live(), page)
                if (image.width * image.height > limits.maxImagePixels)
                  throw new PdfImageTooLargeError(index + 1, image.width, image.height)
                if (image.heapBytes > IMAGE_HEAP_MAX_BYTES)
                  throw new PdfImageTooLargeError(index + 1, image.heapWidth, image.heapHeight, image.heapBytes)
                if (image.jpegScans > MAX_JPEG_SCANS) throw new PdfJpegScansError(index + 1, image.jpegScans)
                // Its bytes bound a page's objects, not their work: what they paint is counted before it is drawn.
                countPagePaint(live(), page, index + 1, scale, area, limits.maxPagePixels)
                yield* renderStrips(live(), page, area, scale)
              } finally {
                live()._FPDF_ClosePage(page)
              }
            },
          },
        }
      },
      pageText: (index, maxChars) => withPage(index, (page) => readPageText(live(), page, maxChars)),
    })
  } catch (error) {
    // PDFium asked for more heap than the cap: it aborted, or failed the allocation and answered an error of its own.
    // Either way the instance is not used again, and the reason is the document's.
    if (module.heapCap.refusedBytes) {
      dropInstance(instance)
      throw new PdfHeapLimitError(module.heapCap.refusedBytes, { cause: error })
    }
    // A password, format or size problem is the document's; anything else may have left the engine broken.
    const isDocumentFault = [
      PdfOpenError,
      PdfImageTooLargeError,
      PdfJpegScansError,
      PdfPageTooLargeError,
      PdfPaintTooLargeError,
      PdfDrawingTooLargeError,
      PdfStreamTooLargeError,
      PdfStreamSyntaxError,
    ].some((fault) => error instanceof fault)
    if (!isDocumentFault) dropInstance(instance)
    throw error
  } finally {
    // An instance that aborted is not called again: it is dropped, with the document in its heap.
    if (!module.heapCap.refusedBytes) {
      if (document) module._FPDF_CloseDocument(document)
      if (data) module.wasmExports.free(data)
    }
    if (module.HEAPU8.byteLength > REUSE_MAX_HEAP_BYTES) dropInstance(instance)
    held = undefined
  }
}

/** The PDF's bytes in PDFium's heap. */
interface HeapFile {
  readonly module: PdfiumModule
  readonly data: number
  readonly size: number
}

/** A view of the file in the heap as it is now (HEAPU8 is read each time: a growing heap replaces the view). */
const fileView = ({ module, data, size }: HeapFile) => module.HEAPU8.subarray(data, data + size)

/**
 * Runs a scan of the file, a turn of the event loop at each pause, handing it a new view of the file after each. No
 * closure: the module is an argument here, and the scan's frame is dropped with it.
 */
async function scanInTurns<T>(slices: FileSlices<T>, file: HeapFile): Promise<T> {
  for (let step = slices.next(undefined); ; step = slices.next(fileView(file))) {
    if (step.done) return step.value
    await yieldToEventLoop()
  }
}

/** The keys an encrypted document opens with; a wrong password or another security handler is PDFium's error. */
async function readDecryptions(bytes: Uint8Array, password: string | undefined): Promise<PdfDecryption[]> {
  try {
    return await inTurns(findPdfDecryptions(bytes, password))
  } catch (error) {
    if (error instanceof PdfPasswordError) throw new PdfOpenError(FPDF_ERRORS[FPDF_ERR_PASSWORD]!, true)
    if (error instanceof PdfSecurityHandlerError) throw new PdfOpenError(`${FPDF_ERRORS[5]}: ${error.message}`, false)
    throw error
  }
}

/** UTF-16 text of a loaded page through PDFium's text page (FPDFText_GetText writes count + 1 code units). */
function readPageText(module: PdfiumModule, page: number, maxChars: number): string {
  const textPage = module._FPDFText_LoadPage(page)
  if (!textPage) throw new PdfOpenError("the page's text cannot be read", false)
  try {
    const count = Math.min(module._FPDFText_CountChars(textPage), maxChars)
    if (count <= 0) return ''
    const buffer = module.wasmExports.malloc((count + 1) * 2)
    if (!buffer) throw new Error(`PDFium could not allocate ${count} characters`)
    try {
      const written = module._FPDFText_GetText(textPage, 0, count, buffer)
      const units = new Uint16Array(module.HEAPU8.buffer, buffer, Math.max(0, written - 1))
      return new TextDecoder('utf-16le').decode(units.slice())
    } finally {
      module.wasmExports.free(buffer)
    }
  } finally {
    module._FPDFText_ClosePage(textPage)
  }
}

function dropInstance(instance: Promise<PdfiumModule>): void {
  // Only this instance: a newer one made meanwhile for a concurrent document stays.
  if (shared === instance) shared = undefined
}
