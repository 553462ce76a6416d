// PDF → plain text with PDFium's text extraction, asked for with `to: ".txt"` (never in the default chain):
// page by page in PDFium's reading order, pages separated by form feeds as pdftotext separates them. The text
// is streamed to storage a page at a time, so a long document never sits whole in memory.
import { pdfToTextInfo } from './catalog/pdf'
import { checkPageCount } from '../engines/pdf-input'
import { fromInput } from './pdf-to-png'
import { ConversionError, defineConverter, type ConversionOutput } from './converter'

/** A page with more characters than this is cut there: no real page has a million characters. */
export const PAGE_MAX_CHARS = 1_000_000
const FORM_FEED = '\f'

export const pdfToText = defineConverter({
  ...pdfToTextInfo,
  async *convert(input, ctx) {
    yield* fromInput(input, ctx, async function* (pdf): AsyncGenerator<ConversionOutput> {
      checkPageCount(pdf.pageCount, ctx.settings.PDF_MAX_PAGES)
      const encoder = new TextEncoder()
      let index = 0
      // Pulled by the store: PDFium reads the next page only when the previous one has been written.
      const body = new ReadableStream<Uint8Array>(
        {
          pull(controller) {
            if (index >= pdf.pageCount) return controller.close()
            let text: string
            try {
              text = pdf.pageText(index, PAGE_MAX_CHARS).replace(/\r\n?/g, '\n').replace(/\f/g, '')
            } catch (error) {
              throw new ConversionError(`the text of page ${index + 1} cannot be read: ${(error as Error).message}`, {
                cause: error,
              })
            }
            controller.enqueue(encoder.encode(index > 0 ? `${FORM_FEED}${text}` : text))
            index++
          },
        },
        { highWaterMark: 0 },
      )
      yield {
        index: 0,
        total: 1,
        extension: '.txt',
        contentType: 'text/plain',
        body,
        metadata: { page_count: pdf.pageCount },
      }
    })
  },
})
