// Text pages drawn in bands (a few lines per resvg call, a turn between calls) are pixel for pixel the page one
// resvg call draws from the whole page's SVG, as every page was drawn before: compared byte for byte, band seams
// and anti-aliasing included, on pages made to straddle seams (accents, descenders, stacked marks, fallback glyphs).
import { Resvg } from '@cf-wasm/resvg/workerd'
import { describe, expect, it } from 'vitest'
import { textToPng } from '../../worker/converters/text-to-png'
import { pageStyle } from '../../worker/engines/text/page'
import { decodeImage } from '../../worker/engines/image/decode'
import { readPngHeader } from '../../worker/engines/png/encode'
import { MAX_MARKS_PER_BASE } from '../../worker/engines/text/layout'
import {
  drawPageBands,
  FONT_FAMILY,
  fallbackFonts,
  NO_FALLBACK,
  pageSvg,
  renderPage,
  type FallbackFonts,
  type PageStyle,
} from '../../worker/engines/text/render'
import monoFont from '../../worker/engines/text/fonts/DejaVuSansMono.ttf'
import { convertAll, inputFromBytes, outputBytes, TEST_IMAGE_LIMITS, testContext } from '../support/conversion'
import { turnsDuring } from '../support/turns'
import sans from '../fixtures/fonts/DejaVuSans.ttf'

/** The page as it was drawn before bands: one resvg call on the whole page's SVG, its white rectangle included. */
async function wholePage(
  lines: readonly string[],
  style: PageStyle,
  fallback: FallbackFonts = NO_FALLBACK,
): Promise<Uint8Array> {
  const resvg = await Resvg.async(pageSvg(lines, style, fallback), {
    font: {
      fontBuffers: [new Uint8Array(monoFont), ...fallback.buffers],
      loadSystemFonts: false,
      defaultFontFamily: FONT_FAMILY,
      monospaceFamily: FONT_FAMILY,
    },
  })
  const rendered = resvg.render()
  const pixels = rendered.pixels
  rendered.free()
  resvg.free()
  return pixels
}

/** Where two RGBA images differ: the first differing byte's row and how many bytes differ (none: identical). */
function difference(a: Uint8Array, b: Uint8Array, width: number) {
  let first = -1
  let count = 0
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] === b[i]) continue
    if (first < 0) first = i
    count++
  }
  return { bytes: count, firstRow: first < 0 ? undefined : Math.floor(first / (width * 4)) }
}

const { style, geometry } = pageStyle(150)
const fill = (pattern: string) =>
  pattern.repeat(Math.ceil(geometry.columns / pattern.length)).slice(0, geometry.columns)
const zalgo = `a${'\u0301'.repeat(MAX_MARKS_PER_BASE)}b${'\u0323'.repeat(MAX_MARKS_PER_BASE)}`

const PAGES: Record<string, string[]> = {
  'ordinary prose': Array.from({ length: geometry.rows }, (_, i) =>
    fill(`${i + 1}. The quick brown fox jumps over the lazy dog; `),
  ),
  'accented capitals over descenders on every line': Array.from({ length: geometry.rows }, (_, i) =>
    fill(i % 2 ? 'ÉÀÇÑ ǺǻḜ ' : 'gjpqy|}{_ '),
  ),
  'blank, space-only and ragged lines': Array.from({ length: geometry.rows }, (_, i) =>
    i % 5 === 0 ? '' : i % 5 === 1 ? '     ' : 'x'.repeat(i),
  ),
  [`stacks of ${MAX_MARKS_PER_BASE} marks above and below, reaching other lines`]: Array.from(
    { length: geometry.rows },
    (_, i) => (i % 7 === 3 ? zalgo.repeat(8) : fill('mid-line text ')),
  ),
  'block and box drawing glyphs touching the line box': Array.from({ length: geometry.rows }, () => fill('█▀▄░▒▓│┼╬ ')),
  'replacement characters for what no font has': Array.from({ length: 9 }, () => fill('漢字 ')),
  'a single line at the top': ['Hello, Edgefloor!'],
}

describe('text pages drawn in bands', () => {
  for (const [name, lines] of Object.entries(PAGES)) {
    it(`draws ${name} byte for byte as one resvg call on the whole page did`, async () => {
      const banded = await renderPage(lines, style)
      expect(banded).toMatchObject({ width: style.widthPx, height: style.heightPx, channels: 4 })
      expect(difference(banded.data as Uint8Array, await wholePage(lines, style), style.widthPx)).toEqual({
        bytes: 0,
        firstRow: undefined,
      })
    })
  }

  it('draws fallback-font glyphs (Hebrew from DejaVu Sans, as an R2 font) byte for byte as the whole page did', async () => {
    const fallback = fallbackFonts([sans])
    const lines = Array.from({ length: 12 }, (_, i) => (i % 2 ? 'שָׁלוֹם עוֹלָם ÉÀ gjpq' : 'Ǻ Hebrew and Latin'))
    const banded = await renderPage(lines, style, fallback)
    expect(difference(banded.data as Uint8Array, await wholePage(lines, style, fallback), style.widthPx)).toEqual({
      bytes: 0,
      firstRow: undefined,
    })
  })

  it('stores the converted page with exactly the whole-page pixels, gray and opaque', async () => {
    const lines = PAGES['accented capitals over descenders on every line']!
    const [page] = await convertAll(
      textToPng,
      inputFromBytes('page.txt', new TextEncoder().encode(lines.join('\n'))),
      testContext(),
    )
    const png = await outputBytes(page!)
    expect(readPngHeader(png)).toMatchObject({ width: style.widthPx, height: style.heightPx, colorType: 0 })
    const decoded = await decodeImage(png, TEST_IMAGE_LIMITS)
    expect(difference(decoded.data as Uint8Array, await wholePage(lines, style), style.widthPx)).toEqual({
      bytes: 0,
      firstRow: undefined,
    })
  })

  it('gives the event loop a turn between resvg calls: a full page is many turns, not one long call', async () => {
    const lines = PAGES['ordinary prose']!
    const { result: rows, turns } = await turnsDuring(async () => {
      let drawn = 0
      for await (const band of drawPageBands(lines, style)) drawn += band.rows
      return drawn
    })
    expect(rows).toBe(style.heightPx)
    // 60 lines in groups of 4: 15 groups parsed and measured, then (no group's ink reaching another's) 15 bands
    // drawn, a turn after each of those 30 resvg calls; before bands the page was one call and no turn.
    expect(turns).toBeGreaterThanOrEqual(2 * Math.ceil(lines.length / 4) - 1)
  })
})
