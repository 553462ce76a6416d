// A GIF's first frame as RGBA on its logical screen, in slices with a turn of the event loop between them.
// omggif reads the structure (the frame's place, palette, transparency, interlacing). Its one-call
// decodeAndBlitFrameRGBA would hold the isolate for the whole frame, so this file has its own LZW decoder: a
// generator that pauses every PIXELS_PER_SLICE indices. The indices are painted row by row, pausing the same way.
// Measured against omggif: docs/benchmarks.md, "Engines: kept or removed".
import { GifReader } from 'omggif'
import { inTurns } from '../event-loop'
import type { RawImage } from '../png/encode'

/** Pixels decoded, or painted, between two turns of the event loop (a few milliseconds of JavaScript). */
const PIXELS_PER_SLICE = 512 * 1024

/** GIF codes are at most 12 bits wide, so the string table never holds more than 4096 entries. */
const TABLE_SIZE = 4096

/**
 * The frame's palette indices from its LZW data at `start`, written into `output`. The data is the minimum code
 * size, then sub-blocks of at most 255 bytes, ended by an empty one. GIF89a, appendix F: variable-length codes
 * packed from the least significant bit, a clear code and an end code above the roots. The code width grows by one
 * bit whenever the next free entry needs it, up to 12 bits, and not once the table is full.
 *
 * The table stores each string as its prefix entry and its last index, with its length and first index, so a
 * string is written back to front straight into `output`. Data that asks for more indices than the frame holds
 * stops at the last whole string that fits. Data that ends early or names an entry that does not exist yet leaves
 * the rest at index 0. Both are what omggif's one-call decoder gives for the same bytes (the tests compare).
 */
function* decodeIndices(data: Uint8Array, start: number, output: Uint8Array): Generator<void, void> {
  const rootBits = data[start] ?? 0
  if (rootBits < 1 || rootBits > 11) return
  const clearCode = 1 << rootBits
  const endCode = clearCode + 1
  const prefix = new Uint16Array(TABLE_SIZE)
  const last = new Uint8Array(TABLE_SIZE)
  const first = new Uint8Array(TABLE_SIZE)
  const length = new Uint16Array(TABLE_SIZE)
  for (let root = 0; root < clearCode; root++) {
    last[root] = root
    first[root] = root
    length[root] = 1
  }
  let width = rootBits + 1
  let free = endCode + 1
  let previous = -1
  // The bit reader: `pending` holds `pendingBits` unread bits; `blockLeft` bytes remain in the current sub-block.
  let at = start + 1
  let blockLeft = 0
  let pending = 0
  let pendingBits = 0
  let dataEnded = false
  let written = 0
  let nextTurn = PIXELS_PER_SLICE
  // Codes that write nothing (clear codes, one after another) read the data without filling the frame: the input
  // read counts toward a pause too, so a megabyte of them is not one stretch.
  let nextInputTurn = at + PIXELS_PER_SLICE
  for (;;) {
    while (pendingBits < width && !dataEnded) {
      if (blockLeft === 0) {
        blockLeft = at < data.length ? data[at++]! : 0
        if (blockLeft === 0) {
          dataEnded = true
          break
        }
      }
      if (at >= data.length) {
        dataEnded = true
        break
      }
      pending |= data[at++]! << pendingBits
      pendingBits += 8
      blockLeft--
    }
    if (pendingBits < width) return
    const code = pending & ((1 << width) - 1)
    pending >>>= width
    pendingBits -= width
    if (code === clearCode) {
      width = rootBits + 1
      free = endCode + 1
      previous = -1
      if (at >= nextInputTurn) {
        nextInputTurn = at + PIXELS_PER_SLICE
        yield
      }
      continue
    }
    if (code === endCode) return
    // A code already in the table is its string; the code about to be defined (the "KwKwK" case) is the previous
    // string followed by that string's own first index. Anything else is not GIF data.
    const known = code < free
    if (!known && (code !== free || previous < 0)) return
    const source = known ? code : previous
    const size = length[source]! + (known ? 0 : 1)
    if (written + size > output.length) return
    let entry = source
    for (let i = written + length[source]! - 1; i >= written; i--) {
      output[i] = last[entry]!
      entry = prefix[entry]!
    }
    if (!known) output[written + size - 1] = first[previous]!
    written += size
    if (previous >= 0 && free < TABLE_SIZE) {
      prefix[free] = previous
      last[free] = first[source]!
      first[free] = first[previous]!
      length[free] = length[previous]! + 1
      free++
      if (free === 1 << width && width < 12) width++
    }
    previous = code
    if (written >= nextTurn) {
      nextTurn = written + PIXELS_PER_SLICE
      yield
    }
  }
}

/**
 * The screen row of the frame's `row`th stored row.
 * Interlaced frames store rows 0, 8, 16 …, 4, 12 …, 2, 6 …, 1, 3 ….
 */
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
