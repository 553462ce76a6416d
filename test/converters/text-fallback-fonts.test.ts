// Fallback fonts from R2 (TEXT_FONTS_PREFIX): characters the bundled monospace font lacks are drawn with them
// instead of as U+FFFD. DejaVu Sans stands in for a CJK font here: it has Hebrew, which DejaVu Sans Mono lacks.
import { env } from 'cloudflare:test'
import { afterAll, describe, expect, it } from 'vitest'
import { resourceReader } from '../../worker/files/input'
import { textToPng } from '../../worker/converters/text-to-png'
import { decodeImage } from '../../worker/engines/image/decode'
import { convertAll, inputFromBytes, outputBytes, TEST_IMAGE_LIMITS, testContext } from '../support/conversion'
import sans from '../fixtures/fonts/DejaVuSans.ttf'

const HEBREW = 'שלום עולם'

async function firstLine(bucket?: R2Bucket) {
  const [page] = await convertAll(
    textToPng,
    inputFromBytes('hebrew.txt', new TextEncoder().encode(HEBREW)),
    testContext({ resources: bucket && resourceReader(bucket, 'fonts/'), settings: { PDF_DPI: 72 } }),
  )
  const image = await decodeImage(await outputBytes(page!), TEST_IMAGE_LIMITS)
  // The first line's pixels, as a fingerprint of what was drawn.
  const rows = image.data.subarray(0, image.width * 4 * 60)
  let dark = 0
  for (let i = 0; i < rows.length; i += 4) if (rows[i]! < 128) dark++
  return { dark, bytes: rows.slice() }
}

describe('fallback fonts from R2', () => {
  afterAll(() => env.BUCKET.delete('fonts/DejaVuSans.ttf'))

  it('draws characters the bundled font lacks with a font stored under TEXT_FONTS_PREFIX', async () => {
    const replaced = await firstLine(env.BUCKET)
    await env.BUCKET.put('fonts/DejaVuSans.ttf', sans)
    const drawn = await firstLine(env.BUCKET)
    expect(replaced.dark).toBeGreaterThan(0)
    expect(drawn.dark).toBeGreaterThan(0)
    expect(drawn.bytes).not.toEqual(replaced.bytes)
  })
})
