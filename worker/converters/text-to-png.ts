// Plain text → PNG pages: A4-proportioned pages at PDF_DPI with 10-point monospace text, laid out here and
// drawn by resvg in WASM with the bundled DejaVu Sans Mono. Each page is drawn in bands handed to the PNG row
// encoder as they come (a band's pixels, never the page's), and yielded (stored by the pipeline) before the next.
import { workTurns, yieldToEventLoop } from '../engines/event-loop'
import { encodePngRows, PngChannelsError, pngBytes } from '../engines/png/encode'
import { decodeTextPieces } from '../engines/text/decode'
import {
  MAX_CHARS_PER_CELL,
  type PageGeometry,
  startLayout,
  TextTooDenseError,
  TextTooLongError,
  TURN_CHARS,
} from '../engines/text/layout'
import { pageStyle } from '../engines/text/page'
import {
  drawable,
  drawPageBands,
  fallbackFonts,
  NO_FALLBACK,
  type FallbackFonts,
  type PageStyle,
} from '../engines/text/render'
import { textToPngInfo } from './catalog/text-to-png'
import {
  type ConversionContext,
  ConversionError,
  type ConversionInput,
  defineConverter,
  type ResourceReader,
} from './converter'

/** Fallback fonts at most this large in all: they are read whole for every conversion. */
const FALLBACK_FONTS_MAX_BYTES = 24 * 1024 * 1024

/**
 * Fonts stored under TEXT_FONTS_PREFIX in the file bucket (e.g. a CJK font too big for the Worker bundle),
 * loaded only when the text has characters the bundled font lacks.
 */
async function loadFallbackFonts(resources: ResourceReader | undefined): Promise<FallbackFonts> {
  if (!resources) return NO_FALLBACK
  const fonts: ArrayBuffer[] = []
  let total = 0
  for (const object of (await resources.list(20)).filter((entry) => /\.(ttf|otf|ttc)$/i.test(entry.key))) {
    if (total + object.size > FALLBACK_FONTS_MAX_BYTES) break
    const body = await resources.read(object.key)
    if (!body) continue
    fonts.push(body)
    total += object.size
  }
  return fonts.length ? fallbackFonts(fonts) : NO_FALLBACK
}

/**
 * 128 KiB of gray rows between two turns of a page's encoder: a quarter of the encoder's default, so that a page's
 * stretches are as short as its resvg calls' (docs/benchmarks.md, "Engine constants"). A page is 2.2 MB of gray
 * rows at 150 dpi: 17 turns instead of 5. In the encoder's units, RGBA rows converted to gray count 5 a pixel (4
 * read, 1 written).
 */
const PAGE_BYTES_PER_TURN = 5 * 128 * 1024

/**
 * One page as PNG bytes. Black text on white is gray and opaque: the encoder is told so up front (it needs the
 * channels before the first band); a fallback font that draws in colour makes the page RGB, drawn again.
 */
async function encodeTextPage(
  lines: readonly string[],
  style: PageStyle,
  fallback: FallbackFonts,
): Promise<Uint8Array> {
  const format = {
    width: style.widthPx,
    height: style.heightPx,
    channels: 4,
    bytesPerTurn: PAGE_BYTES_PER_TURN,
  } as const
  try {
    return await pngBytes(encodePngRows({ ...format, outputChannels: 1 }, drawPageBands(lines, style, fallback)))
  } catch (error) {
    if (!(error instanceof PngChannelsError)) throw error
    return pngBytes(encodePngRows({ ...format, outputChannels: 3 }, drawPageBands(lines, style, fallback)))
  }
}

/**
 * The text's pages of display lines, laid out a piece at a time. Each step lays the whole text out again: its pages'
 * names carry the total ("3 of 175").
 */
async function layOutText(
  input: ConversionInput,
  settings: ConversionContext<'TEXT_MAX_BYTES' | 'TEXT_MAX_PAGES' | 'PDF_DPI'>['settings'],
  geometry: PageGeometry,
): Promise<string[][]> {
  const maxBytes = settings.TEXT_MAX_BYTES
  if (input.size > maxBytes)
    throw new ConversionError(
      `"${input.name}" is ${input.size} bytes; text pages are drawn from texts of at most ${maxBytes} bytes (TEXT_MAX_BYTES)`,
      { code: 'FILE_TOO_LARGE' },
    )
  try {
    // Read, decoded and laid out a piece at a time, a turn of the event loop after each: the layout keeps only
    // its lines (TEXT_MAX_PAGES bounds them), never the text, and 5 MB of it is seconds of work on a busy core.
    // A turn after TURN_CHARS bytes (each at most one character of layout), not after each of a stream's 4 KiB
    // chunks: each turn waits in workerd (docs/benchmarks.md, "Engine constants").
    const layout = startLayout(geometry, settings.TEXT_MAX_PAGES)
    const turn = workTurns(TURN_CHARS)
    for await (const piece of decodeTextPieces(input.stream(), TURN_CHARS)) {
      layout.write(piece.text)
      await turn(piece.bytes)
    }
    return layout.end()
  } catch (error) {
    if (error instanceof TextTooLongError)
      throw new ConversionError(`${error.message}; the limit is ${settings.TEXT_MAX_PAGES} (TEXT_MAX_PAGES)`)
    if (error instanceof TextTooDenseError)
      throw new ConversionError(
        `${error.message}, ${MAX_CHARS_PER_CELL} per cell of its ${geometry.columns} × ${geometry.rows} grid`,
      )
    throw error
  }
}

export const textToPng = defineConverter({
  ...textToPngInfo,
  // Pages in steps of CONVERT_PAGES_PER_STEP, as a PDF's: a step's CPU is bounded by that many pages, not by
  // TEXT_MAX_PAGES (docs/platform-limits.md, CPU per invocation).
  async plan(input, ctx) {
    const pages = await layOutText(input, ctx.settings, pageStyle(ctx.settings.PDF_DPI).geometry)
    const perStep = ctx.settings.CONVERT_PAGES_PER_STEP
    const parts = []
    for (let start = 0; start < pages.length; start += perStep)
      parts.push({ start, end: Math.min(pages.length, start + perStep) })
    return { total: pages.length, parts }
  },
  async *convert(input, ctx) {
    const { style, geometry } = pageStyle(ctx.settings.PDF_DPI)
    const all = await layOutText(input, ctx.settings, geometry)
    const { start, end } = ctx.part ?? { start: 0, end: all.length }
    const pages = all.slice(start, Math.min(end, all.length))
    let needsFallback = false
    for (const lines of pages) {
      needsFallback = lines.some((line) => drawable(line) !== line)
      if (needsFallback) break
      await yieldToEventLoop()
    }
    const fallback = needsFallback ? await loadFallbackFonts(ctx.resources) : NO_FALLBACK
    for (const [offset, lines] of pages.entries()) {
      const body = await encodeTextPage(lines, style, fallback)
      yield {
        index: start + offset,
        total: all.length,
        extension: '.png',
        contentType: 'image/png',
        body,
        metadata: { page: start + offset + 1, width: style.widthPx, height: style.heightPx, dpi: ctx.settings.PDF_DPI },
      }
    }
  },
})
