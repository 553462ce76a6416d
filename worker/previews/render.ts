// Drawing a preview's pixels from a stored file (in the consumer Worker: draw.ts), each kind through the engine entry points its conversion uses
// (and so through the same limits): images through openImageInput (header measured before decoding), PDFs through
// the PDF converters' fromInput (PDF_MAX_BYTES, PDF_MAX_PAGES, PDF_MAX_IMAGE_PIXELS), text through the text
// layout and renderer. PDF pages are drawn at the box's size, never larger; a cover crop draws only the box.
import type { Config } from '../config'
import { ConversionError, type ConversionInput } from '../converters/converter'
import { checkPageCount, fromInput, SETTINGS, type PdfContext } from '../converters/pdf-to-png'
import { openImageInput } from '../converters/image-to-png'
import { pageStyle } from '../converters/text-to-png'
import { coverInto, fitInto } from '../engines/image/resize'
import type { RawImage } from '../engines/png/encode'
import { decodeText } from '../engines/text/decode'
import { layoutPages } from '../engines/text/layout'
import { renderPage } from '../engines/text/render'
import type { PreviewKind } from './kind'
import type { PreviewParams } from './params'

/** A text preview shows the first page: these first bytes hold more than a page's worth of characters. */
export const TEXT_PREVIEW_BYTES = 64 * 1024
const A4_HEIGHT_INCHES = 11.69
const A4_WIDTH_INCHES = 8.27

function onlyFirstPage(params: PreviewParams, what: string): void {
  if (params.page !== 1) throw new ConversionError(`${what} has one page to preview; page ${params.page} does not exist`)
}

/**
 * AVIF previews are at most this many pixels a side: libavif's encoder grew its heap to 94 MiB for a 1449 × 2048 text
 * page (npm run check:deploy), which with the decoded picture does not fit a Worker's 128 MB; at 1024 it takes about 35 MiB.
 */
export const AVIF_PREVIEW_MAX_SIDE = 1024

/** What can be refused before any drawing is queued: a page other than 1 of an image or a text, an AVIF too large. */
export function checkPreviewPage(kind: PreviewKind, params: PreviewParams): void {
  if (kind === 'image') onlyFirstPage(params, 'an image')
  if (kind === 'text') onlyFirstPage(params, 'a text preview')
  if (params.format === 'avif' && Math.max(params.width, params.height) > AVIF_PREVIEW_MAX_SIDE) {
    throw new ConversionError(`AVIF previews are at most ${AVIF_PREVIEW_MAX_SIDE} pixels a side (its encoder's memory grows with the picture; a Worker has 128 MB): ask for w and h of at most ${AVIF_PREVIEW_MAX_SIDE}, or format=webp`)
  }
}

export async function imagePixels(input: ConversionInput, params: PreviewParams, config: Config): Promise<RawImage> {
  onlyFirstPage(params, 'an image')
  // The decoders need the whole file: IMAGE_MAX_BYTES bounds it.
  const bytes = await input.bytes(config.IMAGE_MAX_BYTES)
  // Decoded straight to the size drawn where the format allows (a JPEG by DCT scaling: a 12 MP photo at 1/8 for a
  // thumbnail), never to the full-size pixels and a copy of them.
  const { image } = await openImageInput(input.name, bytes, { maxPixels: config.IMAGE_MAX_PIXELS, maxSide: config.IMAGE_MAX_SIDE }, (header) => drawnSize(header, params))
  return params.fit === 'cover' ? coverInto(image, params.width, params.height) : fitInto(image, params.width, params.height)
}

/** The size of the whole image as the preview draws it: fitted in the box (contain) or filling it (cover), never enlarged. */
export function drawnSize(image: { width: number; height: number }, params: PreviewParams): { width: number; height: number } {
  const ratios = [params.width / image.width, params.height / image.height]
  const scale = Math.min(1, params.fit === 'cover' ? Math.max(...ratios) : Math.min(...ratios))
  return { width: Math.ceil(image.width * scale), height: Math.ceil(image.height * scale) }
}

export async function pdfPixels(input: ConversionInput, params: PreviewParams, config: Config): Promise<RawImage> {
  const ctx: PdfContext = { jobId: 'preview', settings: Object.fromEntries(SETTINGS.map((key) => [key, config[key]])) as PdfContext['settings'], options: {} }
  let pixels: RawImage | undefined
  for await (const image of fromInput(input, ctx, async function* (pdf) {
    checkPageCount(pdf.pageCount, config.PDF_MAX_PAGES)
    if (params.page > pdf.pageCount) throw new ConversionError(`the PDF has ${pdf.pageCount} pages; page ${params.page} does not exist`)
    const size = pdf.pageSize(params.page - 1)
    const points = { width: Math.max(1, Math.floor(size.width)), height: Math.max(1, Math.floor(size.height)) }
    const ratios = [params.width / points.width, params.height / points.height]
    const scale = params.fit === 'cover' ? Math.max(...ratios) : Math.min(...ratios)
    const full = { width: Math.max(1, Math.round(points.width * scale)), height: Math.max(1, Math.round(points.height * scale)) }
    const width = Math.min(full.width, params.width)
    const height = Math.min(full.height, params.height)
    const window = { left: Math.floor((full.width - width) / 2), top: Math.floor((full.height - height) / 2), width, height }
    const render = pdf.renderPage(params.page - 1, scale, window)
    // At most 2048 × 2048 × 4 bytes (16 MiB): the box bounds the page, whatever its size in points.
    const data = new Uint8Array(render.width * render.height * 4)
    let y = 0
    for (const strip of render.strips) for (let r = 0; r < strip.rows; r++) data.set(strip.row(r), (y++ * render.width) * 4)
    yield { width: render.width, height: render.height, channels: 4 as const, data }
  }))
    pixels = image
  if (!pixels) throw new Error('unreachable: the PDF reader yields the page')
  return pixels
}

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
  const ratios = [params.width / A4_WIDTH_INCHES, params.height / A4_HEIGHT_INCHES]
  const dpi = params.fit === 'cover' ? Math.max(...ratios) : Math.min(...ratios)
  const { style, geometry } = pageStyle(dpi)
  const [first = ['']] = layoutPages(text, geometry)
  const image = await renderPage(first, style)
  return params.fit === 'cover' ? coverInto(image, params.width, params.height) : fitInto(image, params.width, params.height)
}
