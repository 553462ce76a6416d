// A stored PDF opened in PDFium under the settings' limits, its faults as ConversionErrors naming the setting: the
// one entry point of every reader of PDFs (pages, text, previews), so the size and embedded-image limits apply to all.
import type { Config } from '../config'
import { ConversionError } from '../conversion-error'
import {
  eachFromPdf,
  PdfDrawingTooLargeError,
  PdfHeapLimitError,
  PdfImageTooLargeError,
  PdfJpegScansError,
  PdfOpenError,
  PdfPageTooLargeError,
  PdfPaintTooLargeError,
  PdfStreamSyntaxError,
  PdfStreamTooLargeError,
  type OpenPdf,
} from './pdfium'
import { MAX_PAINT_OBJECTS, MAX_PAINTED_AREAS } from './pdf-paint'

/** A page's streams may decode to its largest RGBA bitmap: 4 bytes for each pixel of PDF_MAX_PAGE_PIXELS. */
const STREAM_BYTES_PER_PIXEL = 4

/** The settings a PDF is read under. */
export type PdfReadSettings = Pick<
  Config,
  'PDF_MAX_BYTES' | 'PDF_MAX_IMAGE_PIXELS' | 'PDF_MAX_PAGE_PIXELS' | 'IMAGE_MAX_SIDE'
>

/** The PDF as stored: its name (for messages), its size, and a fresh stream of its bytes. */
export interface PdfInput {
  readonly name: string
  readonly size: number
  stream(): ReadableStream<Uint8Array>
}

/** The results `use` yields, one at a time, with the document open in PDFium (opened with `password` if given). */
export async function* readPdfInput<T>(
  input: PdfInput,
  settings: PdfReadSettings,
  password: string | undefined,
  use: (pdf: OpenPdf) => AsyncIterable<T>,
): AsyncGenerator<T> {
  // PDFium reads from memory: the file is streamed into its heap, and PDF_MAX_BYTES bounds that one copy.
  const maxBytes = settings.PDF_MAX_BYTES
  if (input.size > maxBytes)
    throw new ConversionError(
      `"${input.name}" is ${input.size} bytes; PDF pages are rendered from PDFs of at most ${maxBytes} bytes`,
      { code: 'FILE_TOO_LARGE' },
    )
  try {
    const { PDF_MAX_IMAGE_PIXELS, PDF_MAX_PAGE_PIXELS, IMAGE_MAX_SIDE } = settings
    // A stream decodes to at most as many bytes as the largest PDF taken; all of them to a page's RGBA bitmap a page.
    const limits = {
      maxImagePixels: PDF_MAX_IMAGE_PIXELS,
      maxPagePixels: PDF_MAX_PAGE_PIXELS,
      maxSide: IMAGE_MAX_SIDE,
      maxStreamBytes: maxBytes,
      streamBytesPerPage: PDF_MAX_PAGE_PIXELS * STREAM_BYTES_PER_PIXEL,
    }
    yield* eachFromPdf({ size: input.size, stream: () => input.stream() }, password, use, limits)
  } catch (error) {
    if (error instanceof PdfPageTooLargeError) {
      const { PDF_MAX_PAGE_PIXELS, IMAGE_MAX_SIDE } = settings
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
    if (error instanceof PdfJpegScansError || error instanceof PdfHeapLimitError)
      throw new ConversionError(error.message)
    if (error instanceof PdfDrawingTooLargeError)
      throw new ConversionError(`${error.message} (areas of PDF_MAX_PAGE_PIXELS)`)
    if (error instanceof PdfPaintTooLargeError) {
      if (error.objects > MAX_PAINT_OBJECTS) throw new ConversionError(error.message)
      throw new ConversionError(`${error.message} (${MAX_PAINTED_AREAS} times PDF_MAX_PAGE_PIXELS)`)
    }
    if (error instanceof PdfImageTooLargeError) {
      if (error.heapBytes) throw new ConversionError(error.message)
      const limit = settings.PDF_MAX_IMAGE_PIXELS
      throw new ConversionError(
        `${error.message} (${error.width * error.height} pixels); pages are drawn with images of at most ${limit} pixels`,
      )
    }
    if (error instanceof PdfOpenError) {
      if (error.needsPassword) {
        throw new ConversionError(
          password
            ? 'password-protected PDF: the password is wrong'
            : 'password-protected PDF: give its password as options.password',
        )
      }
      throw new ConversionError(`the PDF cannot be read: ${error.message}`)
    }
    throw error
  }
}

/** Refuses a PDF without pages, or with more than `maxPages` (PDF_MAX_PAGES). */
export function checkPageCount(count: number, maxPages: number): void {
  if (count === 0) throw new ConversionError('the PDF has no pages')
  if (count > maxPages) throw new ConversionError(`the PDF has ${count} pages; the limit is ${maxPages}`)
}
