// A PNG's preview drawn a band of rows at a time (png.ts's decodePngDrawn, resize.ts's RowsDrawer) is the preview
// drawn from the whole decode (decodeImage, then drawInto), byte for byte: every channel count, contain and cover,
// pictures small enough for one inflate call and large enough for the pieces and many bands, and the hostile PNGs
// the whole decode refuses (a deflate bomb, a bad filter type, truncated rows) refused alike.
import { deflateSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { decodeImage } from '../../worker/engines/image/decode'
import { decodePngDrawn, PngDecodeError } from '../../worker/engines/image/png'
import { type DrawBox, drawInto } from '../../worker/engines/image/resize'
import { encodePngBytes, type RawImage } from '../../worker/engines/png/encode'
import { TEST_IMAGE_LIMITS } from '../support/conversion'

function picture(width: number, height: number, channels: 1 | 2 | 3 | 4): RawImage {
  const data = new Uint8Array(width * height * channels)
  let seed = 7
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      seed = (seed * 1103515245 + 12345) >>> 0
      const noise = (seed >>> 27) & 15
      const pixel = [
        (x * 3 + noise) & 255,
        (y * 2 + (x >> 3)) & 255,
        y < height / 2 ? 40 : (x ^ y) & 255,
        (x + y + noise) & 255,
      ]
      data.set(pixel.slice(0, channels), (y * width + x) * channels)
    }
  }
  return { width, height, channels, data }
}

const boxes: DrawBox[] = [
  { fit: 'contain', width: 64, height: 64 },
  { fit: 'cover', width: 64, height: 64 },
  { fit: 'cover', width: 256, height: 48 },
  { fit: 'contain', width: 2048, height: 2048 },
  { fit: 'cover', width: 2048, height: 2048 },
]

/** A PNG of raw rows filtered by the caller (filter byte first), for hostile cases. */
function pngOfRows(width: number, height: number, channels: 1 | 2 | 3 | 4, rows: Uint8Array): Uint8Array {
  const colorType = { 1: 0, 2: 4, 3: 2, 4: 6 }[channels]
  const chunk = (type: string, data: Uint8Array) => {
    const out = Buffer.alloc(12 + data.length)
    out.writeUInt32BE(data.length, 0)
    out.write(type, 4, 'latin1')
    out.set(data, 8)
    out.writeUInt32BE(0, 8 + data.length)
    return out
  }
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(width, 0)
  ihdr.writeUInt32BE(height, 4)
  ihdr[8] = 8
  ihdr[9] = colorType
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(rows)),
    chunk('IEND', new Uint8Array()),
  ])
}

describe('a PNG drawn a band of rows at a time', () => {
  it.each([1, 2, 3, 4] as const)(
    'draws what the whole decode draws, %i channels, small and large',
    async (channels) => {
      // 300 × 200 inflates in one call; 1500 × 1100 × 4 (6.6 MB of rows) in pieces, over several bands.
      for (const [width, height] of [
        [300, 200],
        [1500, 1100],
      ] as const) {
        const png = await encodePngBytes(picture(width, height, channels))
        const whole = await decodeImage(png, TEST_IMAGE_LIMITS)
        for (const box of boxes) {
          const drawn = await decodePngDrawn(png, box)
          const expected = drawInto(whole, box)
          expect({ width: drawn!.width, height: drawn!.height, channels: drawn!.channels }).toEqual({
            width: expected.width,
            height: expected.height,
            channels: 4,
          })
          expect(Buffer.from(drawn!.data).equals(Buffer.from(expected.data))).toBe(true)
        }
      }
    },
  )

  it('leaves the PNGs the fast path does not read to the whole decode', async () => {
    const png = pngOfRows(4, 4, 3, new Uint8Array(4 * 13))
    png[24] = 16 // 16-bit
    expect(await decodePngDrawn(png, boxes[0]!)).toBeUndefined()
  })

  it('refuses a deflate bomb, an unknown filter type and rows cut short, as the whole decode does', async () => {
    const width = 1000
    const stride = width * 3 + 1
    const bomb = pngOfRows(width, 2000, 3, new Uint8Array(stride * 2000 + 10_000_000))
    await expect(decodePngDrawn(bomb, boxes[0]!)).rejects.toThrow(/holds more than the 6002000 bytes of its rows/)
    const badFilter = new Uint8Array(stride * 2000)
    badFilter[stride * 1500] = 9
    await expect(decodePngDrawn(pngOfRows(width, 2000, 3, badFilter), boxes[0]!)).rejects.toThrow(
      new PngDecodeError('row 1500 has an unknown filter type'),
    )
    await expect(decodePngDrawn(pngOfRows(width, 2000, 3, new Uint8Array(stride * 1999)), boxes[0]!)).rejects.toThrow(
      /holds 5998999 bytes of rows, not 6002000/,
    )
  })
})
