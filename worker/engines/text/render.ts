// Drawing laid-out pages with resvg (WASM; @cf-wasm/resvg's workerd build imports its .wasm statically): each
// page is an SVG of positioned monospace lines in the bundled font, rendered to RGBA for the PNG encoder.
import { Resvg } from '@cf-wasm/resvg/workerd'
import type { RawImage } from '../png/encode'
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
  return { buffers: fonts.map((font) => new Uint8Array(font)), covers: (codePoint) => coverages.some((covers) => covers(codePoint)) }
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

export function pageSvg(lines: readonly string[], style: PageStyle, fallback: FallbackFonts = NO_FALLBACK): string {
  const step = lineHeightPx(style)
  const texts = lines
    .map((line, row) => (line ? `<text x="${style.marginPx}" y="${(style.marginPx + style.fontPx + row * step).toFixed(2)}">${escapeXml(drawable(line, fallback))}</text>` : ''))
    .join('')
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${style.widthPx}" height="${style.heightPx}" viewBox="0 0 ${style.widthPx} ${style.heightPx}">` +
    `<rect width="100%" height="100%" fill="#fff"/>` +
    `<g font-family="${FONT_FAMILY}" font-size="${style.fontPx}" fill="#000" xml:space="preserve">${texts}</g></svg>`
  )
}

export async function renderPage(lines: readonly string[], style: PageStyle, fallback: FallbackFonts = NO_FALLBACK): Promise<RawImage> {
  const resvg = await Resvg.async(pageSvg(lines, style, fallback), {
    font: { fontBuffers: [fontBytes, ...fallback.buffers], loadSystemFonts: false, defaultFontFamily: FONT_FAMILY, monospaceFamily: FONT_FAMILY },
  })
  try {
    const rendered = resvg.render()
    try {
      return { width: rendered.width, height: rendered.height, channels: 4, data: rendered.pixels.slice() }
    } finally {
      rendered.free()
    }
  } finally {
    resvg.free()
  }
}
