// The page text is drawn on, for text → PNG and text previews alike: A4 at a given dpi, 0.6-inch margins, 10-point
// monospace type, and the grid of characters that fits it.
import type { PageGeometry } from './layout'
import { ADVANCE_EM, lineHeightPx, type PageStyle } from './render'

/** A4, the page's size. */
export const A4_INCHES = { width: 8.27, height: 11.69 }
const MARGIN_INCHES = 0.6
const FONT_POINTS = 10
const TAB_SIZE = 8

/** The page's size in pixels at `dpi`, and its grid of columns and rows. */
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
