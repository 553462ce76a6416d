// A text's preview pixels: its first page, laid out and drawn as text → PNG draws it, scaled to the box.
import type { ConversionInput } from '../converters/converter'
import { coverInto, fitInto } from '../engines/image/resize'
import type { RawImage } from '../engines/png/encode'
import { decodeText } from '../engines/text/decode'
import { layoutPages } from '../engines/text/layout'
import { A4_INCHES, pageStyle } from '../engines/text/page'
import { renderPage } from '../engines/text/render'
import { onlyFirstPage } from './pages'
import type { PreviewParams } from './params'

/** A text preview shows the first page: these first bytes hold more than a page's worth of characters. */
export const TEXT_PREVIEW_BYTES = 64 * 1024

/** The first TEXT_PREVIEW_BYTES of the file (or all of it), without reading the rest. */
async function firstBytes(input: ConversionInput, maxBytes: number): Promise<Uint8Array> {
  const out = new Uint8Array(Math.min(maxBytes, input.size))
  const reader = input.stream().getReader()
  let filled = 0
  try {
    while (filled < out.length) {
      const { done, value } = await reader.read()
      if (done) break
      const take = Math.min(value.byteLength, out.length - filled)
      out.set(value.subarray(0, take), filled)
      filled += take
    }
  } finally {
    await reader.cancel().catch(() => {})
  }
  return out.subarray(0, filled)
}

export async function textPixels(input: ConversionInput, params: PreviewParams): Promise<RawImage> {
  onlyFirstPage(params, 'a text preview')
  const text = decodeText(await firstBytes(input, TEXT_PREVIEW_BYTES))
  const ratios = [params.width / A4_INCHES.width, params.height / A4_INCHES.height]
  const dpi = params.fit === 'cover' ? Math.max(...ratios) : Math.min(...ratios)
  const { style, geometry } = pageStyle(dpi)
  const [first = ['']] = layoutPages(text, geometry)
  const image = await renderPage(first, style)
  return params.fit === 'cover'
    ? coverInto(image, params.width, params.height)
    : fitInto(image, params.width, params.height)
}
