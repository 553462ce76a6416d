// The pages of bench/pdf-draw-cost (test/hostile/corpus.ts), small: each opens in PDFium as one page and draws what
// its builder says, so that the bench measures the drawing it names. Costs are the bench's; nothing here is timed.
import { describe, expect, it } from 'vitest'
import { pdfToPng } from '../../worker/converters/pdf-to-png'
import { decodeImage } from '../../worker/engines/image/decode'
import type { RawImage } from '../../worker/engines/png/encode'
import { convertAll, inputFromBytes, outputBytes, TEST_IMAGE_LIMITS, testContext } from '../support/conversion'
import { pdfGlyphPile, pdfPatternCells, pdfSoftMaskRedraw, pdfType3Glyphs } from './corpus'

/** The one page of the PDF drawn at 72 dpi (a pixel a point), and the page count. */
async function drawn(pdf: Uint8Array): Promise<{ pages: number; image: RawImage }> {
  const outputs = await convertAll(
    pdfToPng,
    inputFromBytes('page.pdf', pdf),
    testContext({ settings: { PDF_DPI: 72 } }),
  )
  return { pages: outputs.length, image: await decodeImage(await outputBytes(outputs[0]!), TEST_IMAGE_LIMITS) }
}

/** The red channel of the pixel at (x, y) in PDF points, y up from the page's foot (the pages are grey). */
const greyAt = (image: RawImage, x: number, y: number) => image.data[((image.height - 1 - y) * image.width + x) * 4]!

/** Share of dark pixels (under 128) in a box of points. */
function inkIn(image: RawImage, box: { x0: number; y0: number; x1: number; y1: number }): number {
  let dark = 0
  for (let y = box.y0; y < box.y1; y++) for (let x = box.x0; x < box.x1; x++) if (greyAt(image, x, y) < 128) dark++
  return dark / ((box.x1 - box.x0) * (box.y1 - box.y0))
}

describe('the pages of bench:pdf-draw-cost', () => {
  it('piles Helvetica glyphs on one spot', async () => {
    // ISO 32000-1, 9.4.4: a glyph moves the text position by tx = ((w0 − Tj/1000) × Tfs + Tc + Tw) × Th; with
    // Tc = −w0 × Tfs (−8.664 for H at 12 pt) it does not move.
    const { pages, image } = await drawn(await pdfGlyphPile(50_000))
    expect(pages).toBe(1)
    expect(inkIn(image, { x0: 100, y0: 400, x1: 109, y1: 409 })).toBeGreaterThan(0.2)
    expect(inkIn(image, { x0: 112, y0: 395, x1: 300, y1: 420 })).toBe(0)
  })

  it('draws a Type 3 glyph by its procedure at 600 pt, coloured (d0) or in the text colour (d1)', async () => {
    // ISO 32000-1, 9.6.5, d0: "Set width information for the glyph and declare that the glyph description specifies
    // both its shape and its colour." The third of three fills (grey 0.2) is the glyph's colour.
    const { pages, image } = await drawn(await pdfType3Glyphs(3, 3))
    expect(pages).toBe(1)
    expect(greyAt(image, 300, 400)).toBeCloseTo(0.2 * 255, -1)
    expect(greyAt(image, 300, 50)).toBe(255) // below the glyph, which starts at 96 pt
    // d1: "… declare that the glyph description specifies only shape, not colour": the text's colour, black.
    const shape = await drawn(await pdfType3Glyphs(3, 3, { declaration: 'd1' }))
    expect(greyAt(shape.image, 300, 400)).toBe(0)
  })

  it('fills the page with a tiling pattern whose cell is the page', async () => {
    // ISO 32000-1, 8.7.3.3: "Painting with the pattern replicates the cell at fixed horizontal and vertical
    // intervals to fill an area." One cell, its last fill grey 0.2, covers the page.
    const { pages, image } = await drawn(pdfPatternCells(3, 3))
    expect(pages).toBe(1)
    for (const [x, y] of [
      [5, 5],
      [306, 396],
      [600, 780],
    ] as const)
      expect(greyAt(image, x, y)).toBeCloseTo(0.2 * 255, -1)
  })

  it('fills the page under a luminosity soft mask', async () => {
    // ISO 32000-1, 11.3.3: in the Normal blend mode the result is (1 − αs) × Cb + αs × Cs. The mask's group ends
    // with grey 0.7 (its luminosity: αs = 0.7); each fill is blended with what is under it: black over white is 0.3,
    // grey 0.1 over that 0.7 × 0.1 + 0.3 × 0.3 = 0.16.
    expect(greyAt((await drawn(pdfSoftMaskRedraw(1, 3))).image, 306, 396)).toBeCloseTo(0.3 * 255, -1)
    const { pages, image } = await drawn(pdfSoftMaskRedraw(2, 3))
    expect(pages).toBe(1)
    expect(greyAt(image, 306, 396)).toBeCloseTo(0.16 * 255, -1)
  })
})
