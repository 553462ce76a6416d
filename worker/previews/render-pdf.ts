// A PDF page's preview pixels, through the entry point the PDF converters read PDFs by (readPdfInput: PDF_MAX_BYTES,
// PDF_MAX_PAGES, PDF_MAX_IMAGE_PIXELS), drawn at the box's size, never larger; a cover crop draws only the box.
import type { Config } from '../config'
import { ConversionError } from '../conversion-error'
import type { ConversionInput } from '../converters/converter'
import { checkPageCount, type PdfReadSettings, readPdfInput } from '../engines/pdf-input'
import type { RawImage } from '../engines/png/encode'
import type { PreviewParams } from './params'

export async function pdfPixels(
  input: ConversionInput,
  params: PreviewParams,
  config: PdfReadSettings & Pick<Config, 'PDF_MAX_PAGES'>,
): Promise<RawImage> {
  // The box bounds what is drawn (2048 × 2048 at most, 16 MiB of RGBA): every documented size works on ordinary
  // pages, whatever PDF_MAX_PAGE_PIXELS says for conversions (an A4 page 2048 high is 2.97 MP). The streams keep at
  // least the conversions' budget, so a small preview decodes what a conversion does.
  const settings = {
    ...config,
    PDF_MAX_PAGE_PIXELS: Math.max(config.PDF_MAX_PAGE_PIXELS, params.width * params.height),
  }
  let pixels: RawImage | undefined
  for await (const image of readPdfInput(input, settings, undefined, async function* (pdf) {
    checkPageCount(pdf.pageCount, config.PDF_MAX_PAGES)
    if (params.page > pdf.pageCount)
      throw new ConversionError(`the PDF has ${pdf.pageCount} pages; page ${params.page} does not exist`)
    const size = pdf.pageSize(params.page - 1)
    const points = { width: Math.max(1, Math.floor(size.width)), height: Math.max(1, Math.floor(size.height)) }
    const ratios = [params.width / points.width, params.height / points.height]
    const scale = params.fit === 'cover' ? Math.max(...ratios) : Math.min(...ratios)
    const full = {
      width: Math.max(1, Math.round(points.width * scale)),
      height: Math.max(1, Math.round(points.height * scale)),
    }
    const width = Math.min(full.width, params.width)
    const height = Math.min(full.height, params.height)
    const window = {
      left: Math.floor((full.width - width) / 2),
      top: Math.floor((full.height - height) / 2),
      width,
      height,
    }
    const render = pdf.renderPage(params.page - 1, scale, window)
    // At most 2048 × 2048 × 4 bytes (16 MiB): the box bounds the page, whatever its size in points.
    const data = new Uint8Array(render.width * render.height * 4)
    let y = 0
    for (const strip of render.strips)
      for (let r = 0; r < strip.rows; r++) data.set(strip.row(r), y++ * render.width * 4)
    yield { width: render.width, height: render.height, channels: 4 as const, data }
  }))
    pixels = image
  if (!pixels) throw new Error('unreachable: the PDF reader yields the page')
  return pixels
}
