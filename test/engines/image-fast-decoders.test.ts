// The decoders image-to-png reads rows from: libjpeg-turbo (jpeg.ts) against Squoosh's mozjpeg decoder, which it
// replaced, pixel for pixel; the PNG fast path (png.ts: native inflate, unfilter_rows in WASM) against our encoder's
// input and Squoosh's PNG decoder, and on hostile files (a deflate bomb, a bad filter type, truncation).
import decodeMozjpeg, { init as initMozjpegDecoder } from '@jsquash/jpeg/decode'
import mozjpegDecoderWasm from '@jsquash/jpeg/codec/dec/mozjpeg_dec.wasm'
import encodeJpeg, { init as initJpegEncoder } from '@jsquash/jpeg/encode'
import jpegEncoderWasm from '@jsquash/jpeg/codec/enc/mozjpeg_enc.wasm'
import { deflateSync } from 'node:zlib'
import { beforeAll, describe, expect, it } from 'vitest'
import { decodeImage } from '../../worker/engines/image/decode'
import { decodeJpeg } from '../../worker/engines/image/jpeg'
import { decodePngRows, PngDecodeError } from '../../worker/engines/image/png'
import { encodePngBytes, type RawImage } from '../../worker/engines/png/encode'
import * as fixtures from '../fixtures/images/images'
import { TEST_IMAGE_LIMITS } from '../support/conversion'

function image(
  width: number,
  height: number,
  channels: 1 | 2 | 3 | 4,
  pixel: (x: number, y: number) => number[],
): RawImage {
  const data = new Uint8Array(width * height * channels)
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) data.set(pixel(x, y), (y * width + x) * channels)
  return { width, height, channels, data }
}

/** A smooth picture with edges: every PNG filter type wins on some row. */
const picture = (channels: 1 | 2 | 3 | 4) =>
  image(97, 61, channels, (x, y) => [x * 2 + y, (x * y) & 255, y < 30 ? 40 : x * 3, (x + y) * 2].slice(0, channels))

const jpegs: Record<string, Uint8Array> = {}

beforeAll(async () => {
  await initJpegEncoder(jpegEncoderWasm)
  await initMozjpegDecoder(mozjpegDecoderWasm)
  const source = await decodeImage(fixtures.pattern_bmp, TEST_IMAGE_LIMITS)
  const pixels = { data: new Uint8ClampedArray(source.data), width: source.width, height: source.height } as Parameters<
    typeof encodeJpeg
  >[0]
  jpegs['4:2:0 progressive'] = new Uint8Array(await encodeJpeg(pixels, { chroma_subsample: 2 }))
  jpegs['4:4:4 baseline'] = new Uint8Array(
    await encodeJpeg(pixels, { progressive: false, baseline: true, auto_subsample: false, chroma_subsample: 1 }),
  )
  jpegs.grayscale = new Uint8Array(await encodeJpeg(pixels, { color_space: 1 }))
  jpegs['4:2:2 from ffmpeg'] = fixtures.pattern_jpg
})

describe('JPEG decoder (libjpeg-turbo in WASM)', () => {
  it.each(['4:2:0 progressive', '4:4:4 baseline', 'grayscale', '4:2:2 from ffmpeg'])(
    "gives mozjpeg's pixels byte for byte (%s)",
    async (kind) => {
      const bytes = jpegs[kind]!
      const reference = await decodeMozjpeg(bytes.slice().buffer)
      const rgba = decodeJpeg(bytes, 'rgba')
      expect(rgba.copy()).toEqual(new Uint8Array(reference.data.buffer))
      rgba.release()
      // As RGB rows (gray rows for a grayscale file), the same samples without alpha.
      const rgb = decodeJpeg(bytes, 'rgb')
      expect(rgb.channels).toBe(kind === 'grayscale' ? 1 : 3)
      for (let y = 0; y < rgb.height; y++) {
        const row = rgb.rows.row(y)
        for (let x = 0; x < rgb.width; x++) {
          for (let c = 0; c < 3; c++)
            expect(row[x * rgb.channels + (rgb.channels === 1 ? 0 : c)]).toBe(
              reference.data[(y * rgb.width + x) * 4 + c],
            )
        }
      }
      rgb.release()
    },
  )

  it('throws on a JPEG it cannot decode, and decodes the next one with a fresh instance', () => {
    const broken = fixtures.pattern_jpg.slice()
    // The SOF's component count set to 0: libjpeg's error exit (its longjmp).
    const sof = broken.findIndex((byte, i) => byte === 0xff && broken[i + 1] === 0xc0)
    broken[sof + 9] = 0
    expect(() => decodeJpeg(broken, 'rgb')).toThrow()
    const pixels = decodeJpeg(fixtures.pattern_jpg, 'rgb')
    expect([pixels.width, pixels.height, pixels.channels]).toEqual([64, 48, 3])
    pixels.release()
  })
})

/** A PNG from its IHDR fields and IDAT payload (CRCs zero: the fast path does not read them). */
function png(
  width: number,
  height: number,
  colorType: number,
  idat: Uint8Array,
  extra: { type: string; data: Uint8Array }[] = [],
): Uint8Array {
  const chunk = (type: string, data: Uint8Array) => {
    const out = new Uint8Array(12 + data.length)
    new DataView(out.buffer).setUint32(0, data.length)
    out.set(new TextEncoder().encode(type), 4)
    out.set(data, 8)
    return out
  }
  const ihdr = new Uint8Array(13)
  new DataView(ihdr.buffer).setUint32(0, width)
  new DataView(ihdr.buffer).setUint32(4, height)
  ihdr.set([8, colorType, 0, 0, 0], 8)
  const parts = [
    new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    ...extra.map(({ type, data }) => chunk(type, data)),
    chunk('IDAT', idat),
    chunk('IEND', new Uint8Array(0)),
  ]
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0))
  parts.reduce((at, part) => (out.set(part, at), at + part.length), 0)
  return out
}

/** The decoded rows copied out (after a turn of the event loop, as an encoder would), then released. */
async function rowsOf(bytes: Uint8Array): Promise<{ result: RawImage } | undefined> {
  const pixels = await decodePngRows(bytes)
  if (!pixels) return undefined
  try {
    await new Promise((resolve) => setTimeout(resolve, 0)) // a turn of the event loop, so the other decodes run meanwhile
    const { width, height, channels, rows } = pixels
    const data = new Uint8Array(width * height * channels)
    for (let y = 0; y < height; y++) data.set(rows.row(y), y * width * channels)
    return { result: { width, height, channels, data } }
  } finally {
    pixels.release()
  }
}

describe('PNG fast path (native inflate, unfilter_rows in WASM)', () => {
  it.each([1, 2, 3, 4] as const)(
    'gives back the pixels our encoder wrote (%i channels, every filter type)',
    async (channels) => {
      const source = picture(channels)
      const decoded = await rowsOf(await encodePngBytes(source, { keepChannels: true }))
      expect(decoded?.result).toEqual(source)
    },
  )

  it("agrees with Squoosh's PNG decoder on a PNG from ffmpeg", async () => {
    const decoded = (await rowsOf(fixtures.pattern_png))!.result
    const reference = await decodeImage(fixtures.pattern_png, TEST_IMAGE_LIMITS)
    expect(decoded.channels).toBe(3)
    for (let p = 0; p < decoded.width * decoded.height; p++)
      expect([...decoded.data.subarray(p * 3, p * 3 + 3)]).toEqual([...reference.data.subarray(p * 4, p * 4 + 3)])
  })

  it('decodes two PNGs at once, each from its own rows', async () => {
    const [a, b] = [picture(3), picture(4)]
    const [pngA, pngB] = [
      await encodePngBytes(a, { keepChannels: true }),
      await encodePngBytes(b, { keepChannels: true }),
    ]
    const both = await Promise.all([rowsOf(pngA), rowsOf(pngB), rowsOf(pngA)])
    expect(both.map((decoded) => decoded?.result)).toEqual([a, b, a])
  })

  it.each([
    ['palette', png(2, 2, 3, deflateSync(new Uint8Array(6)))],
    ['tRNS', png(2, 2, 2, deflateSync(new Uint8Array(14)), [{ type: 'tRNS', data: new Uint8Array(6) }])],
    [
      '16-bit',
      (() => {
        const bytes = png(2, 2, 2, deflateSync(new Uint8Array(26)))
        bytes[24] = 16
        return bytes
      })(),
    ],
    [
      'interlaced',
      (() => {
        const bytes = png(2, 2, 2, deflateSync(new Uint8Array(14)))
        bytes[28] = 1
        return bytes
      })(),
    ],
  ])('leaves a %s PNG to the general decoder', async (_kind, bytes) => {
    expect(await rowsOf(bytes)).toBeUndefined()
  })

  it.each([
    [
      'a deflate bomb (1×1 pixel, 8 MiB of rows)',
      png(1, 1, 2, deflateSync(new Uint8Array(8 * 2 ** 20))),
      /cannot be inflated/,
    ],
    ['too few rows', png(4, 4, 2, deflateSync(new Uint8Array(13 * 3))), /holds 39 bytes of rows, not 52/],
    ['filter type 7', png(1, 2, 0, deflateSync(new Uint8Array([0, 5, 7, 5]))), /row 1 has an unknown filter type/],
    ['corrupt zlib data', png(2, 2, 0, new Uint8Array([0x78, 0x9c, 0xff, 0xff, 0xff, 0xff])), /cannot be inflated/],
    ['no IEND (truncated)', png(2, 2, 0, deflateSync(new Uint8Array(6))).subarray(0, -12), /truncated/],
  ])('refuses %s with a reason', async (_kind, bytes, message) => {
    const failure = await rowsOf(bytes).catch((error) => error)
    expect(failure).toBeInstanceOf(PngDecodeError)
    expect(failure.message).toMatch(message)
  })
})
