// Golden images: fixture pages rendered and encoded now, decoded by an independent decoder (Squoosh's PNG),
// compared pixel by pixel with committed renders, with a tolerance for small rendering changes (an
// anti-aliasing tweak in a PDFium update) but not for what a broken encoder does (shifted, swapped or lost rows
// or channels).
import { describe, expect, it } from 'vitest'
import { pdfToPng } from '../../worker/converters/pdf-to-png'
import { decodeImage } from '../../worker/engines/image/decode'
import type { RawImage } from '../../worker/engines/png/encode'
import { goldenColour, goldenColourPdf, goldenText } from '../fixtures/pdf/golden'
import { threePages } from '../fixtures/pdf/pdfs'
import { convertAll, inputFromBytes, outputBytes, TEST_IMAGE_LIMITS, testContext } from '../support/conversion'

/** A channel differing by more than this makes its pixel count as different. */
const CHANNEL_TOLERANCE = 16
/** Share of pixels that may differ. */
const MAX_DIFFERENT_SHARE = 0.001

/** Share of pixels (0..1) whose RGBA differs from the golden's by more than the channel tolerance. */
function differentShare(actual: RawImage, golden: RawImage): number {
  expect([actual.width, actual.height]).toEqual([golden.width, golden.height])
  let different = 0
  for (let i = 0; i < golden.data.length; i += 4) {
    for (let c = 0; c < 4; c++) {
      if (Math.abs(actual.data[i + c]! - golden.data[i + c]!) > CHANNEL_TOLERANCE) {
        different++
        break
      }
    }
  }
  return different / (golden.width * golden.height)
}

async function renderFirstPage(name: string, pdf: Uint8Array, dpi: number): Promise<RawImage> {
  const [output] = await convertAll(
    pdfToPng,
    inputFromBytes(name, pdf),
    testContext({ part: { start: 0, end: 1 }, settings: { PDF_DPI: dpi } }),
  )
  return decodeImage(await outputBytes(output!), TEST_IMAGE_LIMITS)
}

describe('PDF pages against golden renders', () => {
  it.each([
    ['a text page, grayscale', 'three.pdf', () => threePages, 72, goldenText],
    ['a colour page (image, fills, stroke)', 'colour.pdf', goldenColourPdf, 144, goldenColour],
  ])('renders %s as its golden image', async (_case, name, pdf, dpi, golden) => {
    const actual = await renderFirstPage(name, pdf(), dpi)
    expect(differentShare(actual, await decodeImage(golden, TEST_IMAGE_LIMITS))).toBeLessThanOrEqual(
      MAX_DIFFERENT_SHARE,
    )
  })

  it('tells a render one row off, or with red and blue swapped, from its golden', async () => {
    const golden = await decodeImage(goldenColour, TEST_IMAGE_LIMITS)
    const stride = golden.width * 4
    const shifted = new Uint8Array(golden.data.length)
    shifted.set(golden.data.subarray(stride))
    const swapped = Uint8Array.from(golden.data, (value, i) =>
      i % 4 === 0 ? golden.data[i + 2]! : i % 4 === 2 ? golden.data[i - 2]! : value,
    )
    expect(differentShare({ ...golden, data: shifted }, golden)).toBeGreaterThan(MAX_DIFFERENT_SHARE * 10)
    expect(differentShare({ ...golden, data: swapped }, golden)).toBeGreaterThan(MAX_DIFFERENT_SHARE * 10)
  })
})
