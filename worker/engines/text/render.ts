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
const covered = fontCoverage(monoFont)

export interface PageStyle {
  readonly widthPx: number
  readonly heightPx: number
  readonly marginPx: number
  readonly fontPx: number
}

export const lineHeightPx = (style: PageStyle) => style.fontPx * LINE_HEIGHT_EM

const escapeXml = (text: string) => text.replace(/[<>&"']/g, (char) => `&#${char.charCodeAt(0)};`)

/** Characters the font cannot draw become U+FFFD, which it can: never an invisible gap. */
export function drawable(line: string): string {
  let out = ''
  for (const char of line) out += char === ' ' || covered(char.codePointAt(0)!) ? char : '\uFFFD'
  return out
}

export function pageSvg(lines: readonly string[], style: PageStyle): string {
  const step = lineHeightPx(style)
  const texts = lines
    .map((line, row) => (line ? `<text x="${style.marginPx}" y="${(style.marginPx + style.fontPx + row * step).toFixed(2)}">${escapeXml(drawable(line))}</text>` : ''))
    .join('')
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${style.widthPx}" height="${style.heightPx}" viewBox="0 0 ${style.widthPx} ${style.heightPx}">` +
    `<rect width="100%" height="100%" fill="#fff"/>` +
    `<g font-family="${FONT_FAMILY}" font-size="${style.fontPx}" fill="#000" xml:space="preserve">${texts}</g></svg>`
  )
}

export async function renderPage(lines: readonly string[], style: PageStyle): Promise<RawImage> {
  const resvg = await Resvg.async(pageSvg(lines, style), {
    font: { fontBuffers: [fontBytes], loadSystemFonts: false, defaultFontFamily: FONT_FAMILY, monospaceFamily: FONT_FAMILY },
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
