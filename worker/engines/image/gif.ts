// A GIF's first frame as RGBA on its logical screen, in slices with a turn of the event loop between them: omggif
// reads the structure (the frame's place, palette, transparency, interlacing), and its one-call
// decodeAndBlitFrameRGBA (0.4–0.9 s for 12 MP) is done here instead, the LZW data decoded by a resumable copy of
// omggif's decoder (MIT) and the indices painted row by row, each pausing every PIXELS_PER_SLICE pixels.
import { GifReader } from 'omggif'
import { inTurns } from '../event-loop'
import type { RawImage } from '../png/encode'

/** Pixels decoded, or painted, between two turns of the event loop (a few milliseconds of JavaScript). */
const PIXELS_PER_SLICE = 512 * 1024

/**
 * The frame's palette indices from its LZW data at `p` (the minimum code size, then sub-blocks), as omggif's
 * GifReaderLZWOutputIndexStream makes them: a stream longer than the frame stops at the frame's size, a shorter one
 * leaves the rest at index 0.
 */
function* decodeIndices(code: Uint8Array, start: number, output: Uint8Array): Generator<void, void> {
  let p = start
  const minCodeSize = code[p++]!
  const clearCode = 1 << minCodeSize
  const eoiCode = clearCode + 1
  let nextCode = eoiCode + 1
  let codeSize = minCodeSize + 1
  let codeMask = (1 << codeSize) - 1
  let shift = 0
  let bits = 0
  let op = 0
  let subBlock = code[p++] ?? 0
  // Each entry: its prefix code in the upper bits, its last byte in the lowest 8.
  const table = new Int32Array(4096)
  let previous = -1
  let sliceEnd = PIXELS_PER_SLICE
  for (;;) {
    while (shift < 16 && subBlock !== 0) {
      bits |= (code[p++] ?? 0) << shift
      shift += 8
      subBlock = subBlock === 1 ? (code[p++] ?? 0) : subBlock - 1
    }
    if (shift < codeSize) return
    const value = bits & codeMask
    bits >>= codeSize
    shift -= codeSize
    if (value === clearCode) {
      nextCode = eoiCode + 1
      codeSize = minCodeSize + 1
      codeMask = (1 << codeSize) - 1
      previous = -1
      continue
    }
    if (value === eoiCode) return
    const chaseCode = value < nextCode ? value : previous
    if (chaseCode < 0) return
    let chaseLength = 0
    let chase = chaseCode
    while (chase > clearCode) {
      chase = table[chase]! >> 8
      chaseLength++
    }
    const k = chase
    const end = op + chaseLength + (chaseCode !== value ? 1 : 0)
    if (end > output.length) return
    output[op++] = k
    op += chaseLength
    let back = op
    if (chaseCode !== value) output[op++] = k
    chase = chaseCode
    while (chaseLength--) {
      chase = table[chase]!
      output[--back] = chase & 0xff
      chase >>= 8
    }
    if (previous >= 0 && nextCode < 4096) {
      table[nextCode++] = (previous << 8) | k
      if (nextCode >= codeMask + 1 && codeSize < 12) {
        codeSize++
        codeMask = (codeMask << 1) | 1
      }
    }
    previous = value
    if (op >= sliceEnd) {
      sliceEnd = op + PIXELS_PER_SLICE
      yield
    }
  }
}

/** The screen row of the frame's `row`th stored row: interlaced frames store rows 0, 8, 16 …, 4, 12 …, 2, 6 …, 1, 3 …. */
function interlacedRow(row: number, height: number): number {
  const passes = [
    [0, 8],
    [4, 8],
    [2, 4],
    [1, 2],
  ] as const
  let first = 0
  for (const [start, step] of passes) {
    const rows = Math.max(0, Math.ceil((height - start) / step))
    if (row < first + rows) return start + (row - first) * step
    first += rows
  }
  return row
}

/** The first frame painted on a transparent screen of the GIF's logical size (what omggif's RGBA blit does). */
export async function decodeGifFirstFrame(bytes: Uint8Array): Promise<RawImage> {
  const reader = new GifReader(bytes)
  const frame = reader.frameInfo(0)
  const { width, height } = reader
  const indices = new Uint8Array(frame.width * frame.height)
  await inTurns(decodeIndices(bytes, frame.data_offset, indices))
  const data = new Uint8Array(width * height * 4)
  const transparent = frame.transparent_index ?? 256
  const palette = frame.palette_offset
  function* paint(): Generator<void, void> {
    let painted = 0
    for (let row = 0; row < frame.height; row++) {
      const y = frame.y + (frame.interlaced ? interlacedRow(row, frame.height) : row)
      if (y >= height) continue
      const columns = Math.min(frame.width, width - frame.x)
      for (let x = 0; x < columns; x++) {
        const index = indices[row * frame.width + x]!
        if (index === transparent) continue
        const o = (y * width + frame.x + x) * 4
        data[o] = bytes[palette + index * 3]!
        data[o + 1] = bytes[palette + index * 3 + 1]!
        data[o + 2] = bytes[palette + index * 3 + 2]!
        data[o + 3] = 255
      }
      painted += frame.width
      if (painted >= PIXELS_PER_SLICE) {
        painted = 0
        yield
      }
    }
  }
  await inTurns(paint())
  return { width, height, channels: 4, data }
}
