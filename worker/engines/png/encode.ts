// A streaming PNG encoder on the runtime's zlib (native code, not WASM): rows are
// filtered (the filter with the smallest sum of absolute differences, per row, as libpng's heuristic) and
// compressed as they are produced, so the encoded file never sits whole in memory. Colour and alpha are reduced
// when the pixels allow: grayscale when no pixel has colour, no alpha channel when every pixel is opaque.

import { crc32, constants as zlibConstants, createDeflate } from 'node:zlib'
import { hasAscii } from '../../magic'
import { workTurns } from '../event-loop'
import { rowFilter } from './filter'

/** 8-bit pixels, row-major, `channels` per pixel: 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA. */
export interface RawImage {
  readonly width: number
  readonly height: number
  readonly channels: 1 | 2 | 3 | 4
  readonly data: Uint8Array | Uint8ClampedArray
}

/** Samples per pixel: 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA. */
type Channels = 1 | 2 | 3 | 4

export interface PngHeader {
  readonly width: number
  readonly height: number
  readonly bitDepth: number
  /** 0 gray, 2 RGB, 3 palette, 4 gray+alpha, 6 RGBA */
  readonly colorType: number
}

export interface EncodeOptions {
  /** Keep the input's channels as they are (skip the colour and alpha analysis). */
  readonly keepChannels?: boolean
}

/**
 * zlib through node:zlib (native in workerd as in Node) rather than CompressionStream, which offers no strategy:
 * Z_FILTERED, libpng's strategy for filtered rows. Level 5 rather than zlib's default 6: less deflate time for
 * files about 1% larger (docs/benchmarks.md, "Engine constants"). Output in 64 KiB pieces (one IDAT each) rather
 * than zlib's 16 KiB: a quarter of the stream events and chunk CRCs.
 */
const DEFLATE_OPTIONS = { level: 5, strategy: zlibConstants.Z_FILTERED, chunkSize: 64 * 1024 }
const SIGNATURE = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
const COLOR_TYPE = { 1: 0, 2: 4, 3: 2, 4: 6 } as const
/**
 * Row bytes filtered and compressed between two turns of the event loop, plus the bytes read for rows converted to
 * fewer channels (convertedRowUnits). A page or photo is encoded in slices, so requests sharing the isolate wait
 * for one slice, not the whole image.
 */
const BYTES_PER_TURN = 512 * 1024
/** Pixel bytes read for the colour and alpha analysis between two turns. */
const SCAN_BYTES_PER_TURN = 256 * 1024

const IDAT = new TextEncoder().encode('IDAT')

/**
 * An IDAT chunk as three pieces, the compressor's output itself between its length and type and its CRC. A copy
 * would make every compressed byte garbage once (docs/platform-limits.md, "What the engines do").
 */
function idatPieces(data: Uint8Array): Uint8Array[] {
  const head = new Uint8Array(8)
  new DataView(head.buffer).setUint32(0, data.length)
  head.set(IDAT, 4)
  const crc = new Uint8Array(4)
  new DataView(crc.buffer).setUint32(0, crc32(data, crc32(IDAT)))
  return [head, data, crc]
}

/** A PNG chunk: its length, type, data and CRC. */
export function pngChunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length)
  const view = new DataView(out.buffer)
  view.setUint32(0, data.length)
  const typeBytes = new TextEncoder().encode(type)
  out.set(typeBytes, 4)
  out.set(data, 8)
  view.setUint32(8 + data.length, crc32(data, crc32(typeBytes)))
  return out
}

function header(width: number, height: number, colorType: number): Uint8Array {
  const data = new Uint8Array(13)
  const view = new DataView(data.buffer)
  view.setUint32(0, width)
  view.setUint32(4, height)
  data[8] = 8 // bit depth
  data[9] = colorType
  // compression 0, filter 0, interlace 0
  return data
}

/** Which channels the output needs: drops colour if every pixel is gray, alpha if every pixel is opaque. */
export function reducedChannels(image: RawImage): Promise<Channels> {
  const { width, height, channels, data } = image
  const stride = width * channels
  return reducedRowChannels(width, channels, {
    rows: height,
    row: (r) => data.subarray(r * stride, (r + 1) * stride) as Uint8Array,
  })
}

/**
 * reducedChannels over rows `width` pixels of `channels` wide (rows read from a decoder's heap, say), a turn of the
 * event loop every SCAN_BYTES_PER_TURN: an opaque or gray picture is read to its last pixel.
 */
export async function reducedRowChannels(width: number, channels: Channels, rows: PixelRows): Promise<Channels> {
  const hasAlpha = channels === 2 || channels === 4
  const hasColour = channels >= 3
  let opaque = hasAlpha
  let gray = hasColour
  const turn = workTurns(SCAN_BYTES_PER_TURN)
  for (let r = 0; r < rows.rows && (opaque || gray); r++) {
    const row = rows.row(r)
    const words = channels === 4 ? rgbaWords(row, width) : undefined
    if (words) {
      for (let x = 0; x < width && (opaque || gray); x++) {
        const pixel = words[x]!
        if (opaque && pixel >>> 24 !== 255) opaque = false
        if (gray && !isGrayWord(pixel)) gray = false
      }
    } else {
      for (let x = 0, i = 0; x < width && (opaque || gray); x++, i += channels) {
        if (opaque && row[i + channels - 1] !== 255) opaque = false
        if (gray && (row[i] !== row[i + 1] || row[i] !== row[i + 2])) gray = false
      }
    }
    await turn(width * channels)
  }
  const keepAlpha = hasAlpha && !opaque
  const keepColour = hasColour && !gray
  return keepColour ? (keepAlpha ? 4 : 3) : keepAlpha ? 2 : 1
}

/**
 * A PNG's rows given in batches, pixels of `channels` 8-bit samples (the input's, before any reduction). Rows are
 * often views of a WebAssembly heap (a decoder's, PDFium's): whoever makes a `row` closure over one empties the
 * variable it reaches the heap through once the rows are done. TurboFan's code for a function that inlined the
 * closure keeps the closure, and the scope it closes over, until that code is dropped: a WebP decoder's 64 MiB heap
 * outlived its step that way, in the second of every run of WebP → PNG steps in one isolate.
 */
export interface PixelRows {
  readonly rows: number
  /** Row `r` of the batch (`width × channels` bytes); read before the next batch is asked for. */
  row(r: number): Uint8Array
}

export interface RowsFormat {
  readonly width: number
  readonly height: number
  /** Samples per input pixel: 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA. */
  readonly channels: 1 | 2 | 3 | 4
  /**
   * Samples per output pixel; fewer than `channels` drops colour and/or alpha. A promise while the pixels are
   * still being analysed (reducedChannels, in turns): the encoder starts once it is known.
   */
  readonly outputChannels: Channels | Promise<Channels>
  /**
   * Row units between two turns of the event loop, when a caller wants shorter stretches than BYTES_PER_TURN: the
   * output's row bytes, plus the input's for rows converted to fewer channels (convertedRowUnits).
   */
  readonly bytesPerTurn?: number
}

/** The rows had colour (or transparency) that the chosen output channels cannot hold: encode again with `needs`. */
export class PngChannelsError extends Error {
  override readonly name = 'PngChannelsError'
  constructor(readonly needs: 'colour' | 'alpha') {
    super(`the pixels have ${needs} the PNG's channels cannot hold`)
  }
}

/**
 * RGBA read as one little-endian 32-bit word a pixel (R in the low byte, A in the high one): faster in V8 than bytes.
 */
const isLittleEndian = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1

/** A row of RGBA pixels as 32-bit words, if its bytes are 4-byte aligned (rows of an RGBA image are). */
function rgbaWords(row: Uint8Array, width: number): Uint32Array | undefined {
  return isLittleEndian && row.byteOffset % 4 === 0 ? new Uint32Array(row.buffer, row.byteOffset, width) : undefined
}

/** R = G = B in an RGBA word: the low byte holds R ^ G and the next G ^ B. */
const isGrayWord = (pixel: number) => ((pixel ^ (pixel >>> 8)) & 0xffff) === 0

/** One input row in the output's channels; throws PngChannelsError when a dropped channel carried information. */
function convertRow(input: Uint8Array, width: number, channels: number, outChannels: number, row: Uint8Array): void {
  if (outChannels === channels) {
    row.set(input.subarray(0, width * channels))
    return
  }
  const inAlpha = channels === 2 || channels === 4
  const dropsColour = channels >= 3 && outChannels < 3
  const dropsAlpha = inAlpha && (outChannels === 1 || outChannels === 3)
  const words = channels === 4 ? rgbaWords(input, width) : undefined
  if (words) {
    for (let x = 0, o = 0; x < width; x++) {
      const pixel = words[x]!
      if (outChannels === 3) {
        row[o++] = pixel & 0xff
        row[o++] = (pixel >>> 8) & 0xff
        row[o++] = (pixel >>> 16) & 0xff
      } else {
        if (!isGrayWord(pixel)) throw new PngChannelsError('colour')
        row[o++] = pixel & 0xff
      }
      if (dropsAlpha && pixel >>> 24 !== 255) throw new PngChannelsError('alpha')
      if (outChannels === 2) row[o++] = pixel >>> 24
    }
    return
  }
  for (let x = 0, i = 0, o = 0; x < width; x++, i += channels) {
    if (outChannels >= 3) {
      row[o++] = input[i]!
      row[o++] = input[i + 1]!
      row[o++] = input[i + 2]!
    } else {
      if (dropsColour && (input[i] !== input[i + 1] || input[i] !== input[i + 2])) throw new PngChannelsError('colour')
      row[o++] = input[i]!
    }
    if (dropsAlpha && input[i + channels - 1] !== 255) throw new PngChannelsError('alpha')
    if (outChannels === 2 || outChannels === 4) row[o++] = inAlpha ? input[i + channels - 1]! : 255
  }
}

/**
 * Row units counted between two turns for rows converted channel by channel in JavaScript (RGBA → gray, say): the
 * conversion reads every input byte, which counting the output bytes alone would leave out of a slice.
 */
const convertedRowUnits = (width: number, channels: number, outputChannels: number) =>
  width * (outputChannels + (channels === outputChannels ? 0 : channels))

/** Encodes the image as a PNG stream, with the fewest channels its pixels allow (unless told to keep them). */
export function encodePng(image: RawImage, options: EncodeOptions = {}): ReadableStream<Uint8Array> {
  const { width, height, channels, data } = image
  if (width < 1 || height < 1 || data.length < width * height * channels)
    throw new Error('image data does not match its size')
  const stride = width * channels
  // The rows' closure lets go of the pixels once they are written: they may be a view of a decoder's heap (PixelRows).
  let bytes: Uint8Array =
    data instanceof Uint8Array ? data : new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
  const whole: PixelRows = { rows: height, row: (r) => bytes.subarray(r * stride, (r + 1) * stride) }
  return encodePngRows(
    {
      width,
      height,
      channels,
      outputChannels: options.keepChannels ? channels : reducedRowChannels(width, channels, whole),
    },
    [whole],
    () => {
      bytes = new Uint8Array(0)
    },
  )
}

/**
 * Encodes rows as they come: each batch is converted, filtered and handed to the compressor before the next is
 * asked for, so the caller may reuse the memory behind a batch (a strip of a WASM heap) for the next one. The
 * output's channels are fixed up front (the IHDR goes first); a row that needs more fails the stream with
 * PngChannelsError. `onWritten` runs once every row is written or the writing failed: a caller whose `row` closes
 * over pixels lets go of them there (PixelRows).
 */
export function encodePngRows(
  format: RowsFormat,
  batches: Iterable<PixelRows> | AsyncIterable<PixelRows>,
  onWritten?: () => void,
): ReadableStream<Uint8Array> {
  const { width, height } = format
  if (width < 1 || height < 1) throw new Error('a PNG needs at least one pixel')
  const compressor = createDeflate(DEFLATE_OPTIONS)
  // Its errors reach the reader (next() rejects); without a listener Node-style streams would also throw them.
  compressor.on('error', ignoreError)
  const writing = writeRows(compressor, format, batches)
  writing.catch((error) => compressor.destroy(error)).finally(onWritten)

  const reader = compressor[Symbol.asyncIterator]() as AsyncIterator<Uint8Array>
  let started = false
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (!started) {
          started = true
          const head = new Uint8Array(SIGNATURE.length + 25)
          head.set(SIGNATURE)
          head.set(pngChunk('IHDR', header(width, height, COLOR_TYPE[await format.outputChannels])), SIGNATURE.length)
          controller.enqueue(head)
          return
        }
        // The compressor passes an abort reason on as a copy: the encoder's own error is thrown as it was.
        const { done, value } = await reader.next().catch(async (error) => {
          await writing
          throw error
        })
        if (done) {
          await writing
          controller.enqueue(pngChunk('IEND', new Uint8Array(0)))
          controller.close()
          return
        }
        for (const piece of idatPieces(value)) controller.enqueue(piece)
      },
      cancel: (reason) => {
        compressor.destroy(reason instanceof Error ? reason : undefined)
      },
    },
    { highWaterMark: 0 },
  )
}

const ignoreError = () => {}

/**
 * Converts, filters and writes every batch of rows to the compressor, then ends it. A function of its own, so that
 * only its frame holds the rows, and only while it runs: the stream's closures (its pull, the compressor's
 * listeners), which may outlive the step, share no scope with them, and the rows may be a view of a decoder's heap,
 * which would keep that whole WASM memory alive.
 */
async function writeRows(
  compressor: ReturnType<typeof createDeflate>,
  format: RowsFormat,
  batches: Iterable<PixelRows> | AsyncIterable<PixelRows>,
): Promise<void> {
  const { width, height, channels } = format
  const outputChannels = await format.outputChannels
  const filter = rowFilter(width * outputChannels, outputChannels)
  const rowUnits = convertedRowUnits(width, channels, outputChannels)
  const turn = workTurns(format.bytesPerTurn ?? BYTES_PER_TURN)
  // One buffer for every batch's filtered rows, written again once the compressor has taken it (its write's
  // callback): a slice a batch was the whole picture's filtered rows in garbage (34 MiB for a 12 MP photo).
  let filtered: Uint8Array | undefined
  let y = 0
  for await (const source of batches) {
    for (let first = 0; first < source.rows; first += filter.batchRows) {
      const rows = Math.min(filter.batchRows, source.rows - first, height - y)
      if (rows <= 0) throw new Error("more rows than the PNG's height")
      for (let r = 0; r < rows; r++) convertRow(source.row(first + r), width, channels, outputChannels, filter.row(r))
      y += rows
      filtered ??= new Uint8Array(filter.batchRows * (width * outputChannels + 1))
      await written(compressor, filter.filter(rows, filtered))
      await turn(rows * rowUnits)
    }
  }
  if (y !== height) throw new Error(`${y} rows for a PNG ${height} rows high`)
  compressor.end()
}

/**
 * Writes `bytes` to the compressor and waits until it has taken them. Out here, so that the callback, which the
 * compressor's handle may keep past the stream's end, holds nothing of the encoder's scope: its rows may be a view
 * of a decoder's heap, which would keep that whole WASM memory alive.
 */
function written(compressor: ReturnType<typeof createDeflate>, bytes: Uint8Array): Promise<void> {
  return new Promise((resolve, reject) => {
    compressor.write(bytes, (error) => (error ? reject(error) : resolve()))
  })
}

export async function encodePngBytes(image: RawImage, options: EncodeOptions = {}): Promise<Uint8Array> {
  return pngBytes(encodePng(image, options))
}

/** A PNG read to its end and kept as the encoder's chunks: its length known, its bytes never joined (a copy). */
export interface PngChunks {
  readonly byteLength: number
  /** The chunks as a stream (once), each let go as it is read. */
  stream(): ReadableStream<Uint8Array>
}

/**
 * The whole PNG stream read, kept in its chunks. Read here rather than by a Response, which would not keep the
 * stream's error as thrown (a PngChannelsError must reach the caller as itself).
 */
export async function pngChunks(stream: ReadableStream<Uint8Array>): Promise<PngChunks> {
  const chunks: (Uint8Array | undefined)[] = []
  let byteLength = 0
  for await (const chunk of stream) {
    chunks.push(chunk)
    byteLength += chunk.byteLength
  }
  let next = 0
  return {
    byteLength,
    stream: () =>
      new ReadableStream<Uint8Array>({
        pull(controller) {
          const chunk = chunks[next]
          if (!chunk) return controller.close()
          chunks[next++] = undefined
          controller.enqueue(chunk)
        },
      }),
  }
}

/** The whole PNG stream as one array of bytes (pngChunks, joined). */
export async function pngBytes(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const png = await pngChunks(stream)
  return new Uint8Array(await new Response(png.stream()).arrayBuffer())
}

/** The IHDR facts of a PNG, without decoding it (undefined when the bytes are not a PNG). */
export function readPngHeader(bytes: Uint8Array): PngHeader | undefined {
  if (bytes.length < 33 || !SIGNATURE.every((byte, i) => bytes[i] === byte)) return undefined
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (!hasAscii(bytes, 12, 'IHDR')) return undefined
  return { width: view.getUint32(16), height: view.getUint32(20), bitDepth: bytes[24]!, colorType: bytes[25]! }
}
