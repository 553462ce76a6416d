// Plain text → PNG pages: A4-proportioned pages at PDF_DPI with 10-point monospace text, laid out here and
// drawn by resvg in WASM with the bundled DejaVu Sans Mono. Each page is encoded before the next is drawn.
import { encodePngBytes } from '../engines/png/encode'
import { decodeText } from '../engines/text/decode'
import { layoutPages, type PageGeometry } from '../engines/text/layout'
import { ADVANCE_EM, lineHeightPx, renderPage, type PageStyle } from '../engines/text/render'
import { ConversionError, type ConversionOutput, type Converter } from './converter'

const A4_INCHES = { width: 8.27, height: 11.69 }
const MARGIN_INCHES = 0.6
const FONT_POINTS = 10
const TAB_SIZE = 8

export function pageStyle(dpi: number): { style: PageStyle; geometry: PageGeometry } {
  const style: PageStyle = {
    widthPx: Math.round(A4_INCHES.width * dpi),
    heightPx: Math.round(A4_INCHES.height * dpi),
    marginPx: Math.round(MARGIN_INCHES * dpi),
    fontPx: (FONT_POINTS / 72) * dpi,
  }
  const columns = Math.floor((style.widthPx - 2 * style.marginPx) / (style.fontPx * ADVANCE_EM))
  const rows = Math.floor((style.heightPx - 2 * style.marginPx - style.fontPx * 0.3) / lineHeightPx(style))
  return { style, geometry: { columns, rows, tabSize: TAB_SIZE } }
}

export const textToPng: Converter = {
  name: 'text-to-png',
  from: ['.txt'],
  to: '.png',
  async convert(input, ctx) {
    // The layout needs the whole text: TEXT_MAX_BYTES bounds it.
    const text = decodeText(await input.bytes(ctx.config.TEXT_MAX_BYTES))
    const { style, geometry } = pageStyle(ctx.config.PDF_DPI)
    const pages = layoutPages(text, geometry)
    if (pages.length > ctx.config.TEXT_MAX_PAGES) {
      throw new ConversionError(`the text needs ${pages.length} pages; the limit is ${ctx.config.TEXT_MAX_PAGES} (TEXT_MAX_PAGES)`)
    }
    const outputs: ConversionOutput[] = []
    for (const [index, lines] of pages.entries()) {
      const image = await renderPage(lines, style)
      outputs.push({
        index,
        total: pages.length,
        extension: '.png',
        contentType: 'image/png',
        body: await encodePngBytes(image),
        metadata: { page: index + 1, width: image.width, height: image.height, dpi: ctx.config.PDF_DPI },
      })
    }
    return outputs
  },
}
