// The streaming PNG encoder: output decoded again (by the Squoosh PNG decoder) must give back the pixels,
// with colour and alpha reduced only when nothing is lost.
import { describe, expect, it } from 'vitest'
import { decodeImage } from '../../worker/engines/image/decode'
import { TEST_IMAGE_LIMITS } from '../support/conversion'
import { longestStretchDuring, turnsDuring } from '../support/turns'
import {
  encodePngBytes,
  encodePngRows,
  PngChannelsError,
  readPngHeader,
  reducedRowChannels,
  type PixelRows,
  type RawImage,
} from '../../worker/engines/png/encode'

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

/** The image's rows in strips of `rows`, each strip from one scratch buffer overwritten for the next (as a WASM heap is). */
function* strips(source: RawImage, rows: number): Generator<PixelRows> {
  const stride = source.width * source.channels
  const scratch = new Uint8Array(rows * stride)
  for (let top = 0; top < source.height; top += rows) {
    const count = Math.min(rows, source.height - top)
    scratch.fill(0x5a)
    scratch.set(source.data.subarray(top * stride, (top + count) * stride))
    yield { rows: count, row: (r) => scratch.subarray(r * stride, (r + 1) * stride) }
  }
}

async function bytesOf(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const chunks: number[] = []
  for await (const chunk of stream) chunks.push(...chunk)
  return new Uint8Array(chunks)
}

function toRgba(source: RawImage): Uint8Array {
  const out = new Uint8Array(source.width * source.height * 4)
  for (let p = 0; p < source.width * source.height; p++) {
    const i = p * source.channels
    const [r, g, b] =
      source.channels >= 3
        ? [source.data[i]!, source.data[i + 1]!, source.data[i + 2]!]
        : [source.data[i]!, source.data[i]!, source.data[i]!]
    const a = source.channels === 2 || source.channels === 4 ? source.data[i + source.channels - 1]! : 255
    out.set([r, g, b, a], p * 4)
  }
  return out
}

describe('PNG encoder', () => {
  it.each([
    ['RGBA with transparency', image(37, 23, 4, (x, y) => [x * 7, y * 11, (x * y) & 255, (x + y) * 5]), 6],
    ['opaque RGBA → RGB', image(40, 30, 4, (x, y) => [x * 6, 255 - y * 8, 128, 255]), 2],
    ['gray RGB → gray', image(50, 20, 3, (x) => [x * 5, x * 5, x * 5]), 0],
    ['gray with alpha', image(16, 16, 4, (x, y) => [x * 16, x * 16, x * 16, y * 16]), 4],
    ['1×1', image(1, 1, 3, () => [1, 2, 3]), 2],
    ['noise', image(64, 64, 3, () => [Math.random() * 256, Math.random() * 256, Math.random() * 256]), 2],
  ])('%s round-trips exactly', async (_name, source, colorType) => {
    const png = await encodePngBytes(source)
    expect(readPngHeader(png)).toEqual({ width: source.width, height: source.height, bitDepth: 8, colorType })
    const decoded = await decodeImage(png, TEST_IMAGE_LIMITS)
    expect(decoded.data).toEqual(toRgba(source))
  })

  it('keeps the channels when asked', async () => {
    const source = image(8, 8, 3, () => [9, 9, 9])
    expect(readPngHeader(await encodePngBytes(source, { keepChannels: true }))!.colorType).toBe(2)
  })

  it('compresses smooth images well', async () => {
    const gradient = image(512, 512, 3, (x, y) => [x / 2, y / 2, (x + y) / 4])
    const png = await encodePngBytes(gradient)
    expect(png.byteLength).toBeLessThan(gradient.data.byteLength / 20)
  })

  it('gives the event loop a turn every slice of rows, so requests sharing the isolate are not held for the whole image', async () => {
    // 4 MiB of RGBA rows (noise: nothing to drop), in slices of at most 512 KiB: at least 7 turns.
    const data = new Uint8Array(1024 * 1024 * 4).map((_, i) => (i % 4 === 3 ? 255 : (i * 2654435761) >>> 24))
    const source: RawImage = { width: 1024, height: 1024, channels: 4, data }
    const { result: png, turns } = await turnsDuring(() => encodePngBytes(source, { keepChannels: true }))
    expect(turns).toBeGreaterThanOrEqual(7)
    const decoded = (await decodeImage(png, TEST_IMAGE_LIMITS)).data
    expect(decoded.every((value, i) => value === data[i])).toBe(true)
  })

  /** A gray, opaque 1024×1024 RGBA image as rows that count the bytes read from them. */
  function countedGrayRows(count: (units: number) => void): PixelRows {
    const row = new Uint8Array(1024 * 4).map((_, i) => (i % 4 === 3 ? 255 : (i >> 2) & 255))
    return {
      rows: 1024,
      row: () => {
        count(row.length)
        return row
      },
    }
  }

  it('reads at most 256 KiB of pixels between two turns while choosing the channels of a gray opaque image (read to its last pixel)', async () => {
    const { result, turns, longest } = await longestStretchDuring((count) =>
      reducedRowChannels(1024, 4, countedGrayRows(count)),
    )
    expect(result).toBe(1)
    // 4 MiB of RGBA read, a turn after every 64 rows (it was one stretch of 4 MiB).
    expect(longest).toBeLessThanOrEqual(256 * 1024)
    expect(turns).toBeGreaterThanOrEqual(15)
  })

  it("converts at most 128 rows of RGBA to gray between two turns (a row's units count its input bytes too)", async () => {
    const { result: png, longest } = await longestStretchDuring((count) =>
      bytesOf(encodePngRows({ width: 1024, height: 1024, channels: 4, outputChannels: 1 }, [countedGrayRows(count)])),
    )
    // 512 KiB of units at 5 a pixel is 102 rows, rounded up to the filter's batches of 32: 128 rows (was 512).
    expect(longest).toBeLessThanOrEqual(128 * 1024 * 4)
    const decoded = (await decodeImage(png, TEST_IMAGE_LIMITS)).data
    expect(decoded.every((value, i) => value === (i % 4 === 3 ? 255 : ((i >> 2) % 1024) & 255))).toBe(true)
  })

  it('refuses data that does not match the size', async () => {
    await expect(encodePngBytes({ width: 10, height: 10, channels: 3, data: new Uint8Array(10) })).rejects.toThrow(
      'does not match',
    )
  })

  it.each([1, 7, 32, 33, 100])('encodes rows given in strips of %i exactly as the whole image', async (rows) => {
    const source = image(45, 70, 4, (x, y) => [x * 5, y * 3, 200, 255])
    const png = await bytesOf(
      encodePngRows({ width: 45, height: 70, channels: 4, outputChannels: 3 }, strips(source, rows)),
    )
    expect(png).toEqual(await encodePngBytes(source))
  })

  it('encodes rows at odd byte offsets (read byte by byte, not as 32-bit words) exactly as the whole image', async () => {
    const source = image(45, 70, 4, (x, y) => [x * 5, y * 3, 200, 255])
    const shifted = new Uint8Array(source.data.length + 1)
    shifted.set(source.data, 1)
    const rows: PixelRows = { rows: 70, row: (r) => shifted.subarray(1 + r * 180, 1 + (r + 1) * 180) }
    const outputChannels = await reducedRowChannels(45, 4, rows)
    expect(outputChannels).toBe(3)
    expect(await bytesOf(encodePngRows({ width: 45, height: 70, channels: 4, outputChannels }, [rows]))).toEqual(
      await encodePngBytes(source),
    )
  })

  it.each([
    ['colour in a gray PNG', image(10, 40, 4, (x, y) => (y === 35 ? [255, 0, 0, 255] : [x, x, x, 255])), 1, 'colour'],
    ['transparency in an opaque PNG', image(10, 40, 4, (x, y) => [x, x, x, y === 39 ? 0 : 255]), 1, 'alpha'],
  ] as const)(
    'fails the stream with PngChannelsError on %s, however late',
    async (_case, source, outputChannels, needs) => {
      const stream = encodePngRows({ width: 10, height: 40, channels: 4, outputChannels }, strips(source, 8))
      const failure = await bytesOf(stream).catch((error) => error)
      expect(failure).toBeInstanceOf(PngChannelsError)
      expect(failure.needs).toBe(needs)
    },
  )
})
