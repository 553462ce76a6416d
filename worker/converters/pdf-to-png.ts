// PDF → one PNG per page, rendered by PDFium in WASM. plan() counts the pages (recorded as page_count on the
// PDF) and splits them into ranges of CONVERT_PAGES_PER_STEP, one queue message each, so a long PDF never
// renders more than one range in one invocation; each page is encoded to PNG, strip by strip, and handed to the
// pipeline (which stores it) before the next is rendered.
import {
  eachFromPdf,
  PdfImageTooLargeError,
  PdfJpegScansError,
  PdfOpenError,
  PdfPageTooLargeError,
  PdfStreamSyntaxError,
  PdfStreamTooLargeError,
  type OpenPdf,
} from '../engines/pdfium'
import { encodePngRows, PngChannelsError, pngBytes } from '../engines/png/encode'
import { type PDF_SETTINGS, pdfToPngInfo } from './catalog/pdf'
import {
  ConversionError,
  defineConverter,
  type ConversionContext,
  type ConversionInput,
  type ConversionOutput,
} from './converter'

const POINTS_PER_INCH = 72
/** A page's streams may decode to its largest RGBA bitmap: 4 bytes for each pixel of PDF_MAX_PAGE_PIXELS. */
const STREAM_BYTES_PER_PIXEL = 4

export type PdfContext = ConversionContext<(typeof PDF_SETTINGS)[number]>

function passwordOf(ctx: PdfContext): string | undefined {
  // A PDF this job's office step encrypted opens with its userPassword; any other with options.password.
  const password = ctx.options.userPassword || ctx.options.password
  return typeof password === 'string' && password ? password : undefined
}

/**
 * The pages' results, one at a time, with the document open in PDFium; its faults become ConversionErrors. Every
 * reader of PDFs (pages, text, previews) opens them here, so the size and embedded-image limits apply to all.
 */
export async function* fromInput<T>(
  input: ConversionInput,
  ctx: PdfContext,
  use: (pdf: OpenPdf) => AsyncIterable<T>,
): AsyncGenerator<T> {
  // PDFium reads from memory: the file is streamed into its heap, and PDF_MAX_BYTES bounds that one copy.
  const maxBytes = ctx.settings.PDF_MAX_BYTES
  if (input.size > maxBytes)
    throw new ConversionError(
      `"${input.name}" is ${input.size} bytes; PDF pages are rendered from PDFs of at most ${maxBytes} bytes`,
      { code: 'FILE_TOO_LARGE' },
    )
  try {
    const { PDF_MAX_IMAGE_PIXELS, PDF_MAX_PAGE_PIXELS, IMAGE_MAX_SIDE } = ctx.settings
    // A stream decodes to at most as many bytes as the largest PDF taken; all of them to a page's RGBA bitmap a page.
    const limits = {
      maxImagePixels: PDF_MAX_IMAGE_PIXELS,
      maxPagePixels: PDF_MAX_PAGE_PIXELS,
      maxSide: IMAGE_MAX_SIDE,
      maxStreamBytes: maxBytes,
      streamBytesPerPage: PDF_MAX_PAGE_PIXELS * STREAM_BYTES_PER_PIXEL,
    }
    yield* eachFromPdf({ size: input.size, stream: () => input.stream() }, passwordOf(ctx), use, limits)
  } catch (error) {
    if (error instanceof PdfPageTooLargeError) {
      const { PDF_MAX_PAGE_PIXELS, IMAGE_MAX_SIDE } = ctx.settings
      const limit =
        error.limit === 'side'
          ? `${IMAGE_MAX_SIDE} pixels a side (IMAGE_MAX_SIDE)`
          : `${PDF_MAX_PAGE_PIXELS} pixels (PDF_MAX_PAGE_PIXELS)`
      throw new ConversionError(`${error.message} at its lowest scale; pages are rendered at most ${limit}`)
    }
    if (error instanceof PdfStreamTooLargeError) {
      const limit =
        error.limit === 'stream'
          ? `a PDF's stream may decode to at most ${error.maxBytes} bytes (PDF_MAX_BYTES)`
          : `a PDF's streams may decode to at most ${STREAM_BYTES_PER_PIXEL} bytes for each pixel of PDF_MAX_PAGE_PIXELS and each page (${error.maxBytes} bytes for this one)`
      throw new ConversionError(`${error.message}; ${limit}`)
    }
    if (error instanceof PdfStreamSyntaxError) throw new ConversionError(`the PDF cannot be read: ${error.message}`)
    if (error instanceof PdfJpegScansError) throw new ConversionError(error.message)
    if (error instanceof PdfImageTooLargeError) {
      if (error.heapBytes) throw new ConversionError(error.message)
      const limit = ctx.settings.PDF_MAX_IMAGE_PIXELS
      throw new ConversionError(
        `${error.message} (${error.width * error.height} pixels); pages are drawn with images of at most ${limit} pixels`,
      )
    }
    if (error instanceof PdfOpenError) {
      if (error.needsPassword) {
        throw new ConversionError(
          passwordOf(ctx)
            ? 'password-protected PDF: the password is wrong'
            : 'password-protected PDF: give its password as options.password',
        )
      }
      throw new ConversionError(`the PDF cannot be read: ${error.message}`)
    }
    throw error
  }
}

export function checkPageCount(count: number, maxPages: number): void {
  if (count === 0) throw new ConversionError('the PDF has no pages')
  if (count > maxPages) throw new ConversionError(`the PDF has ${count} pages; the limit is ${maxPages}`)
}

/**
 * Pixels per point: PDF_DPI, lowered for pages so large that they would pass PDF_MAX_PAGE_PIXELS or IMAGE_MAX_SIDE.
 * The engine checks the page again once rounded to whole pixels (a very thin page still takes one pixel).
 */
export function pageScale(
  size: { width: number; height: number },
  dpi: number,
  maxPixels: number,
  maxSide = Number.POSITIVE_INFINITY,
): number {
  const scale = dpi / POINTS_PER_INCH
  const pixels = size.width * scale * size.height * scale
  const byPixels = pixels <= maxPixels ? scale : Math.sqrt(maxPixels / (size.width * size.height))
  return Math.min(byPixels, maxSide / Math.max(size.width, size.height, 1))
}

/**
 * The page as a PNG. Grayscale is tried first (most pages are text): the first strip with colour stops that
 * encoding and the page is encoded again in RGB. Never alpha: pages are drawn on opaque white.
 */
async function renderPagePng(pdf: OpenPdf, index: number, scale: number) {
  for (const outputChannels of [1, 3] as const) {
    const { width, height, strips } = pdf.renderPage(index, scale)
    try {
      const png = encodePngRows({ width, height, channels: 4, outputChannels }, strips)
      return { width, height, body: await pngBytes(png) }
    } catch (error) {
      if (!(error instanceof PngChannelsError && error.needs === 'colour' && outputChannels === 1)) throw error
    }
  }
  throw new Error('unreachable: RGB holds every opaque page')
}

export const pdfToPng = defineConverter({
  ...pdfToPngInfo,
  async plan(input, ctx) {
    let pageCount = 0
    for await (const count of fromInput(input, ctx, async function* (pdf) {
      yield pdf.pageCount
    }))
      pageCount = count
    checkPageCount(pageCount, ctx.settings.PDF_MAX_PAGES)
    const perStep = ctx.settings.CONVERT_PAGES_PER_STEP
    const parts = []
    for (let start = 0; start < pageCount; start += perStep)
      parts.push({ start, end: Math.min(pageCount, start + perStep) })
    return { total: pageCount, parts, sourceMetadata: { page_count: pageCount } }
  },
  async *convert(input, ctx) {
    // One page at a time: the next page is rendered only once the pipeline has stored this one's PNG.
    yield* fromInput(input, ctx, async function* (pdf): AsyncGenerator<ConversionOutput> {
      checkPageCount(pdf.pageCount, ctx.settings.PDF_MAX_PAGES)
      const { start, end } = ctx.part ?? { start: 0, end: pdf.pageCount }
      for (let index = start; index < Math.min(end, pdf.pageCount); index++) {
        const scale = pageScale(
          pdf.pageSize(index),
          ctx.settings.PDF_DPI,
          ctx.settings.PDF_MAX_PAGE_PIXELS,
          ctx.settings.IMAGE_MAX_SIDE,
        )
        const { width, height, body } = await renderPagePng(pdf, index, scale)
        yield {
          index,
          total: pdf.pageCount,
          extension: '.png',
          contentType: 'image/png',
          body,
          metadata: { page: index + 1, width, height, dpi: Math.round(scale * POINTS_PER_INCH) },
        }
      }
    })
  },
})
