// A small decoder for uncompressed BMP (24- and 32-bit BI_RGB, and 32-bit BI_BITFIELDS in the usual BGRA
// layout): the formats screenshots and exports produce. Palette and RLE bitmaps are refused by name. Rows are
// converted in bands with a turn of the event loop between them: a 12 MP bitmap is a long stretch of JavaScript.
import { workTurns } from '../event-loop'
import type { RawImage } from '../png/encode'

/** Output bytes between two turns of the event loop. */
const WORK_BYTES_PER_TURN = 1024 * 1024

export class UnsupportedBmp extends Error {}

export async function decodeBmp(bytes: Uint8Array): Promise<RawImage> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (bytes.length < 54) throw new UnsupportedBmp('the BMP is truncated')
  const dataOffset = view.getUint32(10, true)
  const width = view.getInt32(18, true)
  const rawHeight = view.getInt32(22, true)
  const bitsPerPixel = view.getUint16(28, true)
  const compression = view.getUint32(30, true)
  if (width <= 0 || rawHeight === 0) throw new UnsupportedBmp('the BMP has no pixels')
  if (
    !((bitsPerPixel === 24 && compression === 0) || (bitsPerPixel === 32 && (compression === 0 || compression === 3)))
  ) {
    throw new UnsupportedBmp(
      `BMP with ${bitsPerPixel} bits per pixel and compression ${compression} is not supported (24- or 32-bit uncompressed only)`,
    )
  }
  const height = Math.abs(rawHeight)
  const bottomUp = rawHeight > 0
  const bytesPerPixel = bitsPerPixel / 8
  const stride = Math.ceil((width * bitsPerPixel) / 32) * 4
  if (dataOffset + stride * height > bytes.length) throw new UnsupportedBmp('the BMP is truncated')
  const channels = bitsPerPixel === 32 ? 4 : 3
  const data = new Uint8Array(width * height * channels)
  const turn = workTurns(WORK_BYTES_PER_TURN)
  let isAlphaZero = channels === 4
  for (let y = 0; y < height; y++) {
    const source = dataOffset + (bottomUp ? height - 1 - y : y) * stride
    for (let x = 0; x < width; x++) {
      const i = source + x * bytesPerPixel
      const o = (y * width + x) * channels
      data[o] = bytes[i + 2]!
      data[o + 1] = bytes[i + 1]!
      data[o + 2] = bytes[i]!
      if (channels === 4) {
        data[o + 3] = bytes[i + 3]!
        if (bytes[i + 3]) isAlphaZero = false
      }
    }
    await turn(width * channels)
  }
  // Many 32-bit BMPs leave the alpha byte at 0: then the image is opaque.
  if (isAlphaZero) for (let i = 3; i < data.length; i += 4) data[i] = 255
  return { width, height, channels, data }
}
