// A fast path for the PNGs most files are (8-bit gray, gray+alpha, RGB or RGBA, not interlaced, no tRNS). The IDAT
// stream is inflated by the runtime's native zlib (DecompressionStream, in pieces: inflate.ts) straight into a WASM
// heap. The rows are unfiltered there in batches (filter.c's unfilter_rows, in an instance of its own), a turn of
// the event loop between any two slices. They stay there in the file's own channels: no RGBA expansion, no copy out
// of the heap. Squoosh's decoder (Rust's png crate in WASM, then an RGBA copy) is slower (docs/benchmarks.md,
// "Engine constants"). Any other PNG (palette, 16-bit, fewer bits, interlaced, tRNS) answers undefined and goes to
// Squoosh's decoder.
import { fourCharacterCode, hasAscii } from '../../magic'
import { yieldToEventLoop } from '../event-loop'
import type { PixelRows, RawImage } from '../png/encode'
import filterWasm from '../png/filter.wasm'
import { inflateInto, inflateToSink, WORK_BYTES_PER_TURN } from './inflate'
import { type DrawBox, RowsDrawer } from './resize'

interface UnfilterExports {
  memory: WebAssembly.Memory
  __heap_base: WebAssembly.Global
  unfilter_rows(data: number, stride: number, first: number, end: number, bpp: number): number
}

const PAGE_BYTES = 65536
const SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]
/** Channels of the colour types read here: 0 gray, 4 gray+alpha, 2 RGB, 6 RGBA. */
const CHANNELS: Record<number, 1 | 2 | 3 | 4> = { 0: 1, 4: 2, 2: 3, 6: 4 }

/** The file's structure is wrong (the caller reports it as a decoding failure). */
export class PngDecodeError extends Error {
  override readonly name = 'PngDecodeError'
}

export interface PngPixels {
  readonly width: number
  readonly height: number
  readonly channels: 1 | 2 | 3 | 4
  /** Rows in the decoder's heap, valid until `release`. */
  readonly rows: PixelRows
  /** Hands the heap to the next decode (which waits for it): call it once done with the rows, also on failure. */
  release(): void
}

// A fresh instance per decode, its memory grown to the picture (IMAGE_MAX_PIXELS bounds it) and dropped once the
// caller releases the rows (a WASM memory never shrinks: one kept per isolate would stay at the largest picture's).
// One decode at a time: a decode's rows stay in its heap while the caller encodes them, so the next decode waits.
let turn: Promise<void> = Promise.resolve()

async function holdHeap(): Promise<() => void> {
  const previous = turn
  let release!: () => void
  turn = new Promise<void>((resolve) => {
    release = resolve
  })
  await previous
  return release
}

/** The IHDR facts and the IDAT payloads, when this decoder reads the file; undefined for the others. */
function readStructure(
  bytes: Uint8Array,
): { width: number; height: number; channels: 1 | 2 | 3 | 4; idat: Uint8Array[] } | undefined {
  if (bytes.length < 33 || !SIGNATURE.every((byte, i) => bytes[i] === byte)) return undefined
  if (!hasAscii(bytes, 12, 'IHDR')) throw new PngDecodeError('the first chunk is not IHDR')
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const width = view.getUint32(16)
  const height = view.getUint32(20)
  const channels = CHANNELS[bytes[25]!]
  // Bit depth 8, compression 0, filter method 0, no interlace.
  if (bytes[24] !== 8 || !channels || bytes[26] !== 0 || bytes[27] !== 0 || bytes[28] !== 0) return undefined
  const idat: Uint8Array[] = []
  for (let at = 8; at + 12 <= bytes.length; ) {
    const length = view.getUint32(at)
    const type = fourCharacterCode(bytes, at + 4)
    if (at + 12 + length > bytes.length) throw new PngDecodeError(`the ${type} chunk runs past the end of the file`)
    if (type === 'tRNS') return undefined
    if (type === 'IDAT') idat.push(bytes.subarray(at + 8, at + 8 + length))
    if (type === 'IEND') return { width, height, channels, idat }
    at += 12 + length
  }
  throw new PngDecodeError('the file ends before its IEND chunk (truncated)')
}

/** Refuses an IDAT stream that did not inflate, or not to exactly the `filtered` bytes of its rows. */
function checkInflated(inflated: { error?: Error; isCut: boolean; length: number }, filtered: number): void {
  if (inflated.error)
    throw new PngDecodeError(`the image data cannot be inflated: ${inflated.error.message}`, { cause: inflated.error })
  if (inflated.isCut)
    throw new PngDecodeError(`the image data cannot be inflated: it holds more than the ${filtered} bytes of its rows`)
  if (inflated.length !== filtered)
    throw new PngDecodeError(`the image data holds ${inflated.length} bytes of rows, not ${filtered}`)
}

/** Rows unfiltered between two turns of the event loop: about WORK_BYTES_PER_TURN of them. */
const rowsPerTurn = (stride: number) => Math.max(1, Math.floor(WORK_BYTES_PER_TURN / (stride + 1)))

/**
 * Decodes the PNG into the heap, rows in the file's channels, or answers undefined (nothing decoded) when the file
 * is not of the kinds read here. The caller has checked its IHDR size against the image limits. The IDAT stream is
 * inflated straight into the heap and the rows unfiltered in batches, a turn of the event loop between any two.
 */
export async function decodePngRows(bytes: Uint8Array): Promise<PngPixels | undefined> {
  const structure = readStructure(bytes)
  if (!structure) return undefined
  const { width, height, channels, idat } = structure
  const stride = width * channels
  const filtered = height * (stride + 1)
  const release = await holdHeap()
  try {
    const wasm = new WebAssembly.Instance(filterWasm, {}).exports as unknown as UnfilterExports
    const at = wasm.__heap_base.value as number
    if (at + filtered > wasm.memory.buffer.byteLength)
      wasm.memory.grow(Math.ceil((at + filtered - wasm.memory.buffer.byteLength) / PAGE_BYTES))
    // At most the rows' size: a deflate bomb stops there.
    const inflated = await inflateInto(idat, 'deflate', new Uint8Array(wasm.memory.buffer, at, filtered))
    checkInflated(inflated, filtered)
    const batch = rowsPerTurn(stride)
    for (let first = 0; first < height; first += batch) {
      if (first > 0) await yieldToEventLoop()
      const badRow = wasm.unfilter_rows(at, stride, first, Math.min(height, first + batch), channels)
      if (badRow) throw new PngDecodeError(`row ${badRow - 1} has an unknown filter type`)
    }
    // The rows' closure holds the heap through this variable alone, emptied on release: optimized code that
    // inlined it may keep it, and its scope, past the step (PixelRows, engines/png/encode.ts).
    let heap: WebAssembly.Memory | undefined = wasm.memory
    const rows: PixelRows = {
      rows: height,
      row: (r) => {
        if (!heap) throw new Error('the PNG rows were released')
        return new Uint8Array(heap.buffer, at + r * stride, stride)
      },
    }
    const releaseRows = () => {
      heap = undefined
      release()
    }
    return { width, height, channels, rows, release: releaseRows }
  } catch (error) {
    release()
    throw error
  }
}

/** Rows inflated and unfiltered at a time by decodePngBands: about WORK_BYTES_PER_TURN of them. */
const bandRows = rowsPerTurn

type Structure = NonNullable<ReturnType<typeof readStructure>>

/**
 * The PNG's rows a band at a time, its whole rows never existing. The IDAT stream is inflated in pieces into a band
 * of rows in a small heap (about 1 MiB of rows). Each band is unfiltered there and handed to `onBand`; its last row
 * is kept as the next one's row above. The inflating waits for `onBand`; the band's rows are valid until it
 * resolves. `onBand` answering false stops the decode there (the rest is neither inflated nor checked).
 */
async function decodePngBands(
  { width, height, channels, idat }: Structure,
  onBand: (rows: PixelRows) => boolean | undefined | Promise<boolean | undefined>,
): Promise<void> {
  const stride = width * channels
  const filtered = height * (stride + 1)
  const band = Math.min(height, bandRows(stride))
  // The closures below hold the heap through this variable alone, emptied once the decode ends (decodePngRows says
  // why).
  let wasm: UnfilterExports | undefined = new WebAssembly.Instance(filterWasm, {}).exports as unknown as UnfilterExports
  const heap = () => {
    if (!wasm) throw new Error('the PNG decode has ended')
    return wasm
  }
  try {
    // The row above the band (unfiltered, `stride` bytes), a byte of padding, then the band's filtered rows: in
    // unfilter_rows's layout, the row above is row 0 and the band's rows are rows 1 to `band`.
    const at = heap().__heap_base.value as number
    const bytesNeeded = at + (band + 1) * (stride + 1)
    if (bytesNeeded > heap().memory.buffer.byteLength)
      heap().memory.grow(Math.ceil((bytesNeeded - heap().memory.buffer.byteLength) / PAGE_BYTES))
    const bandBytes = band * (stride + 1)
    let filled = 0
    let rowsDone = 0
    let failure: Error | undefined
    let isStopped = false
    const unfilterBand = async () => {
      const rows = filled / (stride + 1)
      const first = rowsDone === 0 ? 0 : 1
      const data = rowsDone === 0 ? at + stride + 1 : at
      const badRow = heap().unfilter_rows(data, stride, first, first + rows, channels)
      if (badRow) throw new PngDecodeError(`row ${rowsDone + badRow - 1 - first} has an unknown filter type`)
      if (
        (await onBand({
          rows,
          row: (r) => new Uint8Array(heap().memory.buffer, data + (first + r) * stride, stride),
        })) === false
      )
        isStopped = true
      // The band's last row is the next band's row above.
      new Uint8Array(heap().memory.buffer).copyWithin(
        at,
        data + (first + rows - 1) * stride,
        data + (first + rows) * stride,
      )
      rowsDone += rows
      filled = 0
    }
    const inflated = await inflateToSink(idat, 'deflate', filtered, async (chunk) => {
      try {
        for (let from = 0; from < chunk.length && !isStopped; ) {
          const taken = Math.min(chunk.length - from, bandBytes - filled)
          new Uint8Array(heap().memory.buffer, at + stride + 1 + filled, taken).set(chunk.subarray(from, from + taken))
          filled += taken
          from += taken
          if (filled === bandBytes) await unfilterBand()
        }
      } catch (error) {
        failure = error as Error
      }
      // Thrown into the inflating, which stops there.
      if (failure || isStopped) throw failure ?? new Error('stopped')
    })
    if (failure) throw failure
    if (isStopped) return
    checkInflated(inflated, filtered)
    if (filled > 0) await unfilterBand()
  } finally {
    wasm = undefined
  }
}

/**
 * The PNG drawn into `box` (drawInto's pixels, RGBA) without its whole rows ever existing (decodePngBands): a
 * preview holds about 1 MiB of rows, whatever the picture's size. Undefined, with nothing decoded, for the PNGs
 * decodePngRows does not read either.
 */
export async function decodePngDrawn(bytes: Uint8Array, box: DrawBox): Promise<RawImage | undefined> {
  const structure = readStructure(bytes)
  if (!structure) return undefined
  const drawer = new RowsDrawer(structure, structure.channels, box)
  await decodePngBands(structure, (rows) => {
    for (let r = 0; r < rows.rows; r++) drawer.push(rows.row(r))
    return undefined
  })
  return drawer.image()
}

/** Rows above this size are read in bands (pngBands) by image → PNG rather than held whole (decodePngRows). */
export const PNG_BANDED_ROWS_BYTES = 16 * 2 ** 20

/** A PNG read a band of rows at a time, as often as asked (each reading inflates the IDAT stream again). */
export interface PngBands {
  readonly width: number
  readonly height: number
  readonly channels: 1 | 2 | 3 | 4
  /**
   * The rows from the first, a band a batch (decodePngBands), each batch valid until the next is asked for; a
   * reading left early (a break) stops inflating there.
   */
  bands(): AsyncIterable<PixelRows>
}

/**
 * The PNG as bands (PngBands) when it is of the kinds read here and its rows are larger than PNG_BANDED_ROWS_BYTES;
 * undefined otherwise (nothing decoded). The caller has checked its IHDR size against the image limits.
 */
export function pngBands(bytes: Uint8Array): PngBands | undefined {
  const structure = readStructure(bytes)
  if (!structure || structure.height * (structure.width * structure.channels + 1) <= PNG_BANDED_ROWS_BYTES)
    return undefined
  const { width, height, channels } = structure
  return { width, height, channels, bands: () => ({ [Symbol.asyncIterator]: () => bandsPulled(structure) }) }
}

/**
 * decodePngBands's bands, which it pushes, as an iterator the reader pulls: each band is handed out and the decode
 * waits until the next is asked for (or the reading ends: return() stops the decode).
 */
function bandsPulled(structure: Structure): AsyncIterator<PixelRows> {
  type Next = IteratorResult<PixelRows> | { failure: unknown }
  const ready: Next[] = []
  let waiting: ((next: Next) => void) | undefined
  let resume: ((goOn: boolean) => void) | undefined
  const hand = (next: Next) => {
    if (waiting) waiting(next)
    else ready.push(next)
    waiting = undefined
  }
  let started: Promise<void> | undefined
  const start = () => {
    started ??= decodePngBands(
      structure,
      (rows) =>
        new Promise<boolean>((resolve) => {
          resume = resolve
          hand({ value: rows, done: false })
        }),
    ).then(
      () => hand({ value: undefined, done: true }),
      (failure: unknown) => hand({ failure }),
    )
  }
  return {
    async next() {
      start()
      // The band handed out before has been read: the decode goes on.
      resume?.(true)
      resume = undefined
      const next = ready.shift() ?? (await new Promise<Next>((resolve) => (waiting = resolve)))
      if ('failure' in next) throw next.failure
      return next
    },
    async return() {
      resume?.(false)
      resume = undefined
      if (started) await started
      return { value: undefined, done: true }
    },
  }
}
