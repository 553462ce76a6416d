// Drawing laid-out pages with resvg (WASM; @cf-wasm/resvg's workerd build imports its .wasm statically): each
// page is an SVG of positioned monospace lines in the bundled font, drawn to RGBA in bands for the PNG encoder.
import { Resvg } from '@cf-wasm/resvg/workerd'
import { yieldToEventLoop } from '../event-loop'
import type { PixelRows, RawImage } from '../png/encode'
import { fontCoverage } from './coverage'
import monoFont from './fonts/DejaVuSansMono.ttf'

export const FONT_FAMILY = 'DejaVu Sans Mono'
/** DejaVu Sans Mono's advance width: 1233 of 2048 units per em. */
export const ADVANCE_EM = 1233 / 2048
const LINE_HEIGHT_EM = 1.25

const fontBytes = new Uint8Array(monoFont)
const monoCoverage = fontCoverage(monoFont)

/** Fonts beyond the bundled one (a CJK font from R2): resvg falls back to them glyph by glyph. */
export interface FallbackFonts {
  readonly buffers: readonly Uint8Array[]
  readonly covers: (codePoint: number) => boolean
}

export const NO_FALLBACK: FallbackFonts = { buffers: [], covers: () => false }

export function fallbackFonts(fonts: readonly ArrayBuffer[]): FallbackFonts {
  const coverages = fonts.map(fontCoverage)
  return {
    buffers: fonts.map((font) => new Uint8Array(font)),
    covers: (codePoint) => coverages.some((covers) => covers(codePoint)),
  }
}

export interface PageStyle {
  readonly widthPx: number
  readonly heightPx: number
  readonly marginPx: number
  readonly fontPx: number
}

export const lineHeightPx = (style: PageStyle) => style.fontPx * LINE_HEIGHT_EM

const escapeXml = (text: string) => text.replace(/[<>&"']/g, (char) => `&#${char.charCodeAt(0)};`)

/** Characters no font can draw become U+FFFD, which the bundled one can: never an invisible gap. */
export function drawable(line: string, fallback: FallbackFonts = NO_FALLBACK): string {
  let out = ''
  for (const char of line) {
    const codePoint = char.codePointAt(0)!
    out += char === ' ' || monoCoverage(codePoint) || fallback.covers(codePoint) ? char : '\uFFFD'
  }
  return out
}

const textElements = (
  lines: readonly string[],
  from: number,
  to: number,
  style: PageStyle,
  fallback: FallbackFonts,
) => {
  const step = lineHeightPx(style)
  let texts = ''
  for (let row = from; row < to; row++) {
    const line = lines[row]
    if (line)
      texts += `<text x="${style.marginPx}" y="${(style.marginPx + style.fontPx + row * step).toFixed(2)}">${escapeXml(drawable(line, fallback))}</text>`
  }
  return `<g font-family="${FONT_FAMILY}" font-size="${style.fontPx}" fill="#000" xml:space="preserve">${texts}</g>`
}

const svgOpen = (style: PageStyle) =>
  `<svg xmlns="http://www.w3.org/2000/svg" width="${style.widthPx}" height="${style.heightPx}" viewBox="0 0 ${style.widthPx} ${style.heightPx}">`

/** The whole page as one SVG on a white rectangle: the reference the bands draw pixel for pixel. */
export function pageSvg(lines: readonly string[], style: PageStyle, fallback: FallbackFonts = NO_FALLBACK): string {
  return `${svgOpen(style)}<rect width="100%" height="100%" fill="#fff"/>${textElements(lines, 0, lines.length, style, fallback)}</svg>`
}

/** Lines `from`–`to` at their places on the page, nothing else (the white comes from resvg's background option). */
const linesSvg = (lines: readonly string[], from: number, to: number, style: PageStyle, fallback: FallbackFonts) =>
  `${svgOpen(style)}${textElements(lines, from, to, style, fallback)}</svg>`

/**
 * Text lines per resvg tree. Parsing a full page (usvg shapes and outlines every glyph) and rendering it are each
 * one long synchronous call. A few lines take a few milliseconds, with a turn of the event loop between them.
 */
const LINES_PER_GROUP = 4
/**
 * Font bytes the parsed groups of a page may hold at once. Each resvg instance copies its fonts into WASM memory
 * (@resvg/resvg-wasm 2.6 has no shared font database). With the bundled font alone (340 KiB) a page's groups stay
 * parsed between measuring and drawing. With large fallback fonts each group is parsed again to draw it.
 */
const RETAINED_FONT_BYTES = 8 * 1024 * 1024
/** Rows around a group's bounding box: its anti-aliased edges touch the rows its box only enters. */
const INK_MARGIN_ROWS = 1

interface InkGroup {
  readonly from: number
  readonly to: number
  /** Pixel rows [top, bottom) every pixel the group's lines draw lies in. */
  readonly top: number
  readonly bottom: number
  resvg?: Resvg
}

type ResvgOptions = NonNullable<ConstructorParameters<typeof Resvg>[1]>

const resvgOptions = (fallback: FallbackFonts): ResvgOptions => ({
  background: '#fff',
  font: {
    fontBuffers: [fontBytes, ...fallback.buffers],
    loadSystemFonts: false,
    defaultFontFamily: FONT_FAMILY,
    monospaceFamily: FONT_FAMILY,
  },
})

/**
 * Groups of consecutive ink groups no other group's ink reaches into. Each is drawn in one resvg call on a pixmap
 * holding all of its ink, so no path is clipped at a band's edge: tiny-skia's clipper would move the clipped edges
 * by a rounding and change their anti-aliasing. Every pixel is then blended from the same paths in the same order
 * as on the whole page. Ordinary lines are a band each; accents and stacked marks reaching into a neighbour merge
 * the two.
 */
function clusters(groups: readonly InkGroup[]): Array<{ first: number; last: number; top: number; bottom: number }> {
  const out: Array<{ first: number; last: number; top: number; bottom: number }> = []
  for (let first = 0; first < groups.length; ) {
    let last = first
    let top = groups[first]!.top
    let bottom = groups[first]!.bottom
    for (;;) {
      let reaching = -1
      for (let later = last + 1; later < groups.length; later++) if (groups[later]!.top < bottom) reaching = later
      if (reaching < 0) break
      for (let merged = last + 1; merged <= reaching; merged++) {
        top = Math.min(top, groups[merged]!.top)
        bottom = Math.max(bottom, groups[merged]!.bottom)
      }
      last = reaching
    }
    out.push({ first, last, top, bottom })
    first = last + 1
  }
  return out
}

/** `rows` white RGBA rows `width` pixels wide, all the same buffer. */
function whiteRows(width: number, rows: number): PixelRows {
  const white = new Uint8Array(width * 4).fill(255)
  return { rows, row: () => white }
}

/**
 * The page's RGBA pixels top to bottom in bands, pixel for pixel what one resvg call on `pageSvg` draws, with a
 * turn of the event loop between two resvg calls. First each group of LINES_PER_GROUP lines is parsed and its ink
 * measured. Then each band of ink is drawn on a pixmap of its own rows; rows without ink are white without resvg.
 * The band's memory is the caller's until it asks for the next one.
 */
export async function* drawPageBands(
  lines: readonly string[],
  style: PageStyle,
  fallback: FallbackFonts = NO_FALLBACK,
): AsyncGenerator<PixelRows> {
  const options = resvgOptions(fallback)
  const fontTotal = fontBytes.byteLength + fallback.buffers.reduce((sum, buffer) => sum + buffer.byteLength, 0)
  const isRetained = fontTotal * Math.ceil(lines.length / LINES_PER_GROUP) <= RETAINED_FONT_BYTES
  const groups: InkGroup[] = []
  try {
    for (let from = 0; from < lines.length; from += LINES_PER_GROUP) {
      const to = Math.min(lines.length, from + LINES_PER_GROUP)
      if (!lines.slice(from, to).some(Boolean)) continue
      const resvg = await Resvg.async(linesSvg(lines, from, to, style, fallback), options)
      const box = resvg.getBBox()
      if (box) {
        const top = Math.max(0, Math.floor(box.y) - INK_MARGIN_ROWS)
        const bottom = Math.min(style.heightPx, Math.ceil(box.y + box.height) + INK_MARGIN_ROWS)
        box.free()
        if (top < bottom) groups.push({ from, to, top, bottom, resvg: isRetained ? resvg : undefined })
      }
      if (!isRetained || !box) resvg.free()
      await yieldToEventLoop()
    }
    let y = 0
    for (const band of clusters(groups)) {
      if (band.top > y) yield whiteRows(style.widthPx, band.top - y)
      const only = band.first === band.last ? groups[band.first]!.resvg : undefined
      const resvg =
        only ??
        (await Resvg.async(linesSvg(lines, groups[band.first]!.from, groups[band.last]!.to, style, fallback), options))
      try {
        const crop = resvg.getBBox()!
        crop.x = 0
        crop.y = band.top
        crop.width = style.widthPx
        crop.height = band.bottom - band.top
        resvg.cropByBBox(crop)
        crop.free()
        const rendered = resvg.render()
        const { width, height } = rendered
        // A copy out of WASM memory, so the pixmap is freed before the band is encoded.
        const pixels = rendered.pixels
        rendered.free()
        if (width !== style.widthPx || height !== band.bottom - band.top)
          throw new Error(`resvg drew ${width} × ${height} for a band of ${style.widthPx} × ${band.bottom - band.top}`)
        const stride = width * 4
        yield { rows: height, row: (r) => pixels.subarray(r * stride, (r + 1) * stride) }
      } finally {
        if (!only) resvg.free()
        for (let drawn = band.first; drawn <= band.last; drawn++) {
          groups[drawn]!.resvg?.free()
          groups[drawn]!.resvg = undefined
        }
      }
      y = band.bottom
      await yieldToEventLoop()
    }
    if (y < style.heightPx) yield whiteRows(style.widthPx, style.heightPx - y)
  } finally {
    for (const group of groups) group.resvg?.free()
  }
}

/** The whole page as one RGBA image (previews, which scale it): drawn in bands like a converted page. */
export async function renderPage(
  lines: readonly string[],
  style: PageStyle,
  fallback: FallbackFonts = NO_FALLBACK,
): Promise<RawImage> {
  const stride = style.widthPx * 4
  const data = new Uint8Array(stride * style.heightPx)
  let y = 0
  for await (const band of drawPageBands(lines, style, fallback))
    for (let r = 0; r < band.rows; r++) data.set(band.row(r), y++ * stride)
  return { width: style.widthPx, height: style.heightPx, channels: 4, data }
}
