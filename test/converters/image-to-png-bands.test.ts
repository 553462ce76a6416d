// image → PNG of a PNG whose rows pass PNG_BANDED_ROWS_BYTES: read in bands twice (once for the channels its pixels
// need, once into the encoder), its rows never whole. The output must be the same picture, in the colour type the
// pixels allow, as the whole-rows path makes. The inputs are written here by the PNG specification (W3C PNG, 3rd
// edition): "11.2.2 IHDR ... Width 4 bytes, Height 4 bytes, Bit depth 1 byte, Colour type 1 byte, Compression
// method 1 byte, Filter method 1 byte, Interlace method 1 byte", colour type 6 "Truecolour with alpha", and
// "7.3 Filtering ... the filter type byte ... precedes the filtered scanline"; their zlib stream is stored
// (level 0), so that the optimized PNG is smaller and is written.
import { deflateSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { imageToPng } from '../../worker/converters/image-to-png'
import { decodeImage } from '../../worker/engines/image/decode'
import { PNG_BANDED_ROWS_BYTES } from '../../worker/engines/image/png'
import { readPngHeader } from '../../worker/engines/png/encode'
import { concatBytes } from '../support/bytes'
import { convertAll, inputFromBytes, outputBytes, TEST_IMAGE_LIMITS, testContext } from '../support/conversion'

const WIDTH = 2100
const HEIGHT = 2050

const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
  return c >>> 0
})
function crc(bytes: Uint8Array): number {
  let c = 0xffffffff
  for (const byte of bytes) c = crcTable[(c ^ byte) & 255]! ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}

function chunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length)
  const view = new DataView(out.buffer)
  view.setUint32(0, data.length)
  out.set(new TextEncoder().encode(type), 4)
  out.set(data, 8)
  view.setUint32(8 + data.length, crc(out.subarray(4, 8 + data.length)))
  return out
}

/**
 * An 8-bit RGBA PNG of `rgba`, every row filter type `filterOf(y)` (0, None, unless a test breaks one), its zlib
 * stream cut to `idatBytes` when given.
 */
function pngOf(rgba: Uint8Array, filterOf: (y: number) => number = () => 0, idatBytes?: number): Uint8Array {
  const stride = WIDTH * 4
  const raw = new Uint8Array(HEIGHT * (stride + 1))
  for (let y = 0; y < HEIGHT; y++) {
    raw[y * (stride + 1)] = filterOf(y)
    raw.set(rgba.subarray(y * stride, (y + 1) * stride), y * (stride + 1) + 1)
  }
  const ihdr = new Uint8Array(13)
  new DataView(ihdr.buffer).setUint32(0, WIDTH)
  new DataView(ihdr.buffer).setUint32(4, HEIGHT)
  ihdr.set([8, 6, 0, 0, 0], 8)
  return concatBytes(
    [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a],
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw, { level: 0 }).subarray(0, idatBytes)),
    chunk('IEND', new Uint8Array(0)),
  )
}

function picture(pixel: (x: number, y: number) => [number, number, number, number]): Uint8Array {
  const rgba = new Uint8Array(WIDTH * HEIGHT * 4)
  for (let y = 0; y < HEIGHT; y++) for (let x = 0; x < WIDTH; x++) rgba.set(pixel(x, y), (y * WIDTH + x) * 4)
  return rgba
}

describe('image → PNG of a large PNG, read in bands', () => {
  it('is past the size read in bands', () => {
    expect(HEIGHT * (WIDTH * 4 + 1)).toBeGreaterThan(PNG_BANDED_ROWS_BYTES)
  })

  it.each([
    // Colour type 6 (RGBA), 2 (RGB), 0 (gray), 4 (gray + alpha): the last with its one transparent pixel in the last
    // row, which the first reading must reach.
    [
      'colour and alpha',
      (x: number, y: number) => [x & 255, y & 255, (x ^ y) & 255, 255 - (x >> 4)] as [number, number, number, number],
      6,
    ],
    [
      'colour, opaque',
      (x: number, y: number) => [x & 255, y & 255, (x + y) & 255, 255] as [number, number, number, number],
      2,
    ],
    [
      'gray, opaque',
      (x: number, y: number) => [(x + y) & 255, (x + y) & 255, (x + y) & 255, 255] as [number, number, number, number],
      0,
    ],
    [
      'gray, one transparent pixel at the end',
      (x: number, y: number) =>
        [x & 255, x & 255, x & 255, x === WIDTH - 1 && y === HEIGHT - 1 ? 0 : 255] as [number, number, number, number],
      4,
    ],
  ])('keeps the picture (%s) in the colour type its pixels need', async (_, pixel, colorType) => {
    const rgba = picture(pixel)
    const input = pngOf(rgba)
    const [output] = await convertAll(imageToPng, inputFromBytes('large.png', input), testContext())
    expect(output!.metadata).toMatchObject({ width: WIDTH, height: HEIGHT, source_format: 'png' })
    const png = await outputBytes(output!)
    expect(readPngHeader(png)).toMatchObject({ width: WIDTH, height: HEIGHT, colorType })
    const decoded = await decodeImage(png, TEST_IMAGE_LIMITS)
    expect(Buffer.from(decoded.data).equals(Buffer.from(rgba))).toBe(true)
  })

  it('refuses a row with an unknown filter type near the end, as the whole-rows path does', async () => {
    const input = pngOf(
      picture((x, y) => [x & 255, y & 255, 0, 200]),
      (y) => (y === HEIGHT - 3 ? 9 : 0),
    )
    await expect(convertAll(imageToPng, inputFromBytes('bad.png', input), testContext())).rejects.toMatchObject({
      retryable: false,
      message: 'the PNG image cannot be decoded',
    })
  })

  it('refuses image data cut short (found by the first reading, which goes to the end)', async () => {
    // Opaque gray: the first reading goes to the end too (nothing settles the channels earlier).
    const input = pngOf(
      picture((x) => [x & 255, x & 255, x & 255, 255]),
      undefined,
      HEIGHT * (WIDTH * 4 + 1) - 100_000,
    )
    await expect(convertAll(imageToPng, inputFromBytes('cut.png', input), testContext())).rejects.toMatchObject({
      retryable: false,
      message: 'the PNG image cannot be decoded',
    })
  })
})
