// TIFF's first page with UTIF (utif2), bounded: UTIF follows every IFD of the chain (a cycle never ends), loops
// over each tag's declared count (4 billion values from a 12-byte entry) and inflates Deflate strips whole (a
// bomb). So the first IFD and the IFDs it points to are checked here first (counts within the file, no cycles, a
// bounded depth), only the first IFD is read, only the common compressions are taken, and Deflate strips are
// inflated to at most the bytes the strip can hold. UTIF decodes and converts a whole page in one call each: here the
// page is decoded strip by strip (tile by tile) and converted to RGBA in bands, a turn of the event loop between.
import UTIF from 'utif2'
import { workTurns } from '../event-loop'
import type { PixelRows } from '../png/encode'
import { inflateInto } from './inflate'
import { type Extent, ImageStructureError } from './limits'

export interface TiffFirstIfd extends Extent {
  /** Bits per pixel of UTIF's raw buffer, at least RGBA's 32 (its RGBA copy is made beside it). */
  readonly bitsPerPixel: number
  readonly tile?: Extent
}

/** Bytes of one value of each TIFF field type (1 BYTE … 13 IFD). */
const TYPE_BYTES = [0, 1, 1, 2, 4, 8, 1, 1, 2, 4, 8, 4, 8, 4]
/** Tags whose values are offsets of further IFDs, which UTIF reads too (SubIFDs, Exif, GPS, DNG private, Fuji). */
const SUB_IFD_TAGS = new Set([330, 34665, 34853, 50740, 61440])
/** None, CCITT RLE/G3/G4, LZW, Deflate (both codes), PackBits: JPEG-in-TIFF and camera codecs are refused. */
const COMPRESSIONS = new Set([1, 2, 3, 4, 5, 8, 32946, 32773])
const MAX_IFDS = 64
const MAX_DEPTH = 4

interface Reader {
  readonly bytes: Uint8Array
  readonly view: DataView
  readonly little: boolean
}

const u16 = (r: Reader, at: number) => r.view.getUint16(at, r.little)
const u32 = (r: Reader, at: number) => r.view.getUint32(at, r.little)

/** Checks an IFD and those it points to; answers the IFD's tags' first values. */
function checkIfd(r: Reader, offset: number, depth: number, seen: Set<number>): Map<number, number> {
  if (seen.has(offset)) throw new ImageStructureError('the TIFF has a cycle of IFDs')
  if (seen.size >= MAX_IFDS || depth > MAX_DEPTH)
    throw new ImageStructureError(`the TIFF has more than ${MAX_IFDS} IFDs or nests them deeper than ${MAX_DEPTH}`)
  seen.add(offset)
  if (offset + 2 > r.bytes.length) throw new ImageStructureError('the TIFF is truncated (its IFD lies past the end)')
  const count = u16(r, offset)
  if (offset + 2 + count * 12 > r.bytes.length)
    throw new ImageStructureError('the TIFF is truncated (its IFD runs past the end)')
  const first = new Map<number, number>()
  for (let i = 0; i < count; i++) {
    const entry = offset + 2 + i * 12
    const tag = u16(r, entry)
    const type = u16(r, entry + 2)
    const values = u32(r, entry + 4)
    const size = values * (TYPE_BYTES[type] ?? 0)
    if (size > r.bytes.length)
      throw new ImageStructureError(`the TIFF's tag ${tag} claims ${values} values, more than the file holds`)
    const at = size > 4 ? u32(r, entry + 8) : entry + 8
    if (at + size > r.bytes.length)
      throw new ImageStructureError(`the TIFF's tag ${tag} points past the end of the file`)
    if (values === 0) continue
    const value =
      type === 3 || type === 8
        ? u16(r, at)
        : type === 4 || type === 9 || type === 13
          ? u32(r, at)
          : type === 1 || type === 7
            ? r.bytes[at]!
            : 0
    first.set(tag, value)
    if (SUB_IFD_TAGS.has(tag)) {
      if (values > 16) throw new ImageStructureError(`the TIFF's tag ${tag} points to ${values} IFDs`)
      for (let v = 0; v < values; v++)
        checkIfd(r, type === 3 ? u16(r, at + 2 * v) : u32(r, at + 4 * v), depth + 1, seen)
    }
  }
  return first
}

/** The first IFD's size, bits per pixel and tile size, after checking it (and what it points to) is safe to read. */
export function readTiffFirstIfd(bytes: Uint8Array): TiffFirstIfd {
  const r: Reader = {
    bytes,
    view: new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength),
    little: bytes[0] === 0x49,
  }
  const tags = checkIfd(r, u32(r, 4), 0, new Set())
  const width = tags.get(256)
  const height = tags.get(257)
  if (!width || !height) throw new ImageStructureError('the TIFF has no image size in its first IFD')
  const compression = tags.get(259) ?? 1
  if (!COMPRESSIONS.has(compression))
    throw new ImageStructureError(
      `TIFF compression ${compression} is not supported (none, LZW, Deflate, PackBits and CCITT are)`,
    )
  const bitsPerSample = tags.get(258) ?? 1
  const samples = tags.get(277) ?? 1
  if (![1, 2, 4, 8, 16].includes(bitsPerSample) || samples < 1 || samples > 8) {
    throw new ImageStructureError(`TIFF with ${samples} samples of ${bitsPerSample} bits per pixel is not supported`)
  }
  const tileWidth = tags.get(322)
  const tileHeight = tags.get(323)
  // TIFF 6.0, section 15: TileWidth and TileLength must be multiples of 16 (so tiles are never 1 × 1 pixels).
  if (
    (tileWidth !== undefined || tileHeight !== undefined) &&
    (!tileWidth || !tileHeight || tileWidth % 16 !== 0 || tileHeight % 16 !== 0)
  ) {
    throw new ImageStructureError(`the TIFF's tiles are ${tileWidth} × ${tileHeight} (TIFF 6.0: multiples of 16)`)
  }
  return {
    width,
    height,
    bitsPerPixel: Math.max(32, bitsPerSample * samples),
    ...(tileWidth && tileHeight ? { tile: { width: tileWidth, height: tileHeight } } : {}),
  }
}

/** A UTIF IFD: its tags by number (`t256` …), and what decoding it sets. */
interface Ifd {
  [tag: `t${number}`]: number[] | undefined
  width: number
  height: number
  isLE: boolean
  data?: Uint8Array
}
type Decompress = (
  img: Ifd,
  ifds: Ifd[],
  data: Uint8Array,
  off: number,
  len: number,
  cmpr: number,
  tgt: Uint8Array,
  toff: number,
  fo: number,
  w: number,
  h: number,
) => void

interface UtifInternals {
  _binLE: unknown
  _binBE: unknown
  _readIFD(bin: unknown, data: Uint8Array, offset: number, ifds: object[], depth: number, options: object): number
  _copyTile(
    tile: Uint8Array,
    tileRowBytes: number,
    tileRows: number,
    target: Uint8Array,
    rowBytes: number,
    rows: number,
    x: number,
    y: number,
  ): void
  decode: { _decompress: Decompress }
  toRGBA8(img: Ifd): Uint8Array
}

const utif = UTIF as unknown as UtifInternals

/**
 * Work (bytes decoded or converted) between two turns of the event loop. UTIF decodes a whole page and converts it
 * to RGBA in one long call each, so the page is done here strip by strip (tile by tile), Deflate in pieces
 * (inflate.ts), and the RGBA conversion in bands of rows. Why 128 KiB and not more: docs/benchmarks.md, "Engine
 * constants".
 */
const WORK_BYTES_PER_TURN = 128 * 1024

/**
 * Compressed bytes read for one strip or tile, at most, for each byte it decodes to, and a little more for each row
 * and for the strip. CCITT's longest codes for one-pixel runs are under 8 bytes for a byte of pixels (and an EOL a
 * row), LZW and PackBits under 2, Deflate about 1. UTIF's decoders run to the end of the byte count they are given,
 * whatever the strip holds: PackBits' no-op byte, LZW's clear code and Deflate's empty blocks decode to nothing.
 * And every strip may name the whole file: 20,000 one-row strips of a 1 MB file would be 20,000 passes over it.
 */
const MAX_INPUT_PER_OUTPUT_BYTE = 8
const MAX_INPUT_PER_ROW = 4
const MAX_INPUT_SLACK = 1024

/**
 * Decodes one strip or tile into `target` at `offset` (`rows` rows of `rowBytes`), as UTIF.decodeImage would, with
 * turns. Deflate is inflated in pieces, at most the bytes the strip can hold (a bomb stops there), and its rows are
 * fixed up (predictor, byte order) in bands. An uncompressed strip is copied in bands. LZW, PackBits and CCITT
 * strips go to UTIF's own decoders, one call a strip.
 */
async function decodeBlock(
  img: Ifd,
  data: Uint8Array,
  start: number,
  length: number,
  target: Uint8Array,
  offset: number,
  size: { width: number; rows: number; rowBytes: number },
  turn: (units: number) => Promise<void> | undefined,
): Promise<void> {
  const compression = img.t259?.[0] ?? 1
  const fillOrder = img.t266?.[0] ?? 1
  const { width, rows, rowBytes } = size
  const blockBytes = Math.min(rows * rowBytes, target.length - offset)
  const end = Math.min(
    data.length,
    start + length,
    start + MAX_INPUT_PER_OUTPUT_BYTE * blockBytes + MAX_INPUT_PER_ROW * rows + MAX_INPUT_SLACK,
  )
  if (compression !== 8 && compression !== 32946 && compression !== 1) {
    utif.decode._decompress(img, [img], data, start, end - start, compression, target, offset, fillOrder, width, rows)
    await turn(blockBytes)
    return
  }
  let source = data
  let at = start
  let sourceEnd = end
  if (compression !== 1) {
    // As UTIF does: the zlib stream without its 2-byte header and 4-byte checksum. Corrupt data keeps what was
    // inflated before it, as pako does for UTIF.
    const inflated = await inflateInto(
      [data.subarray(start + 2, Math.max(start + 2, end - 4))],
      'deflate-raw',
      target.subarray(offset, offset + blockBytes),
    )
    source = target
    at = offset
    sourceEnd = offset + inflated.length
    // Only the predictor and big-endian 16-bit samples need UTIF's pass over the inflated rows.
    const bitsPerSample = img.t258?.[0] ?? 1
    if (img.t317?.[0] !== 2 && !(bitsPerSample === 16 && !img.isLE)) return
  }
  const band = Math.max(1, Math.floor(WORK_BYTES_PER_TURN / rowBytes))
  for (let row = 0; row < rows && row * rowBytes < blockBytes; row += band) {
    const count = Math.min(band, rows - row)
    const from = at + row * rowBytes
    utif.decode._decompress(
      img,
      [img],
      source,
      from,
      Math.max(0, Math.min(count * rowBytes, sourceEnd - from)),
      1,
      target,
      offset + row * rowBytes,
      fillOrder,
      width,
      count,
    )
    await turn(count * rowBytes)
  }
}

/** The first page's raster in the file's own samples, strip by strip or tile by tile, as UTIF.decodeImage makes it. */
async function decodeRaster(
  img: Ifd,
  data: Uint8Array,
  turn: (units: number) => Promise<void> | undefined,
): Promise<Uint8Array> {
  const { width, height } = img
  const bitsPerPixel = (img.t258?.[0] ?? 1) * (img.t277?.[0] ?? 1)
  const rowBytes = Math.ceil((width * bitsPerPixel) / 8)
  const raster = new Uint8Array(height * rowBytes)
  const compression = img.t259?.[0] ?? 1
  if (img.t322) {
    const offsets = img.t324
    const counts = img.t325
    if (!offsets || !counts) throw new ImageStructureError('the TIFF has no tile offsets or byte counts')
    const tileWidth = img.t322[0]!
    const tileHeight = img.t323![0]!
    const tileRowBytes = Math.ceil((tileWidth * bitsPerPixel) / 8)
    const tile = new Uint8Array(tileRowBytes * tileHeight)
    const across = Math.ceil(width / tileWidth)
    const down = Math.ceil(height / tileHeight)
    for (let y = 0; y < down; y++) {
      for (let x = 0; x < across; x++) {
        const i = y * across + x
        if (offsets[i] === undefined) continue
        tile.fill(0)
        await decodeBlock(
          img,
          data,
          offsets[i]!,
          counts[i] ?? 0,
          tile,
          0,
          { width: tileWidth, rows: tileHeight, rowBytes: tileRowBytes },
          turn,
        )
        utif._copyTile(
          tile,
          tileRowBytes,
          tileHeight,
          raster,
          rowBytes,
          height,
          Math.ceil((x * tileWidth * bitsPerPixel) / 8),
          y * tileHeight,
        )
      }
    }
    return raster
  }
  const offsets = img.t273
  if (!offsets) throw new ImageStructureError('the TIFF has no strip offsets')
  const counts = compression === 1 && offsets.length === 1 ? [height * rowBytes] : img.t279
  if (!counts) throw new ImageStructureError('the TIFF has no strip byte counts')
  const rowsPerStrip = Math.min(img.t278?.[0] ?? height, height)
  for (let i = 0; i < offsets.length && i * rowsPerStrip < height; i++) {
    const rows = Math.min(rowsPerStrip, height - i * rowsPerStrip)
    await decodeBlock(
      img,
      data,
      offsets[i]!,
      counts[i] ?? 0,
      raster,
      i * rowsPerStrip * rowBytes,
      { width, rows, rowBytes },
      turn,
    )
  }
  return raster
}

/** UTIF.toRGBA8 in bands of rows (each band's RGBA made by UTIF, then copied into the page's). */
async function toRgbaInBands(
  img: Ifd,
  raster: Uint8Array,
  turn: (units: number) => Promise<void> | undefined,
): Promise<Uint8Array> {
  const { width, height } = img
  const rowBytes = height > 0 ? raster.length / height : 0
  // A raster of 4 bytes a pixel (8-bit RGBA, the largest) is converted in place, band by band: each band is read
  // whole before its RGBA is written over it, so no second copy of the picture is made.
  const rgba = rowBytes === width * 4 ? raster : new Uint8Array(width * height * 4)
  const band = Math.max(1, Math.floor(WORK_BYTES_PER_TURN / (width * 4)))
  for (let row = 0; row < height; row += band) {
    const rows = Math.min(band, height - row)
    rgba.set(
      utif.toRGBA8({ ...img, height: rows, data: raster.subarray(row * rowBytes, (row + rows) * rowBytes) }),
      row * width * 4,
    )
    await turn(rows * width * 4)
  }
  return rgba
}

/** UTIF's first IFD of the file (UTIF.decode would follow the whole chain), without maker notes. */
function firstIfd(bytes: Uint8Array): { img: Ifd; data: Uint8Array } {
  const data = bytes.slice()
  const little = data[0] === 0x49
  const ifds: Ifd[] = []
  utif._readIFD(little ? utif._binLE : utif._binBE, data, new DataView(data.buffer).getUint32(4, little), ifds, 0, {
    parseMN: false,
    debug: false,
  })
  const first = ifds[0]
  if (!first?.t256 || !first.t257) throw new ImageStructureError('the TIFF has no image')
  return { img: Object.assign(first, { isLE: little, width: first.t256[0]!, height: first.t257[0]! }), data }
}

/**
 * The first page as RGBA, in slices with a turn of the event loop between them.
 * readTiffFirstIfd must have accepted the bytes.
 */
export async function decodeTiffFirstPage(
  bytes: Uint8Array,
): Promise<{ width: number; height: number; data: Uint8Array }> {
  const { img, data } = firstIfd(bytes)
  const turn = workTurns(WORK_BYTES_PER_TURN)
  const raster = await decodeRaster(img, data, turn)
  return { width: img.width, height: img.height, data: await toRgbaInBands(img, raster, turn) }
}

/** A page's RGBA above this size is read in bands (tiffBands) by image → PNG rather than made whole. */
export const TIFF_BANDED_RGBA_BYTES = 16 * 2 ** 20

/** A TIFF's first page as RGBA rows a band at a time (tiffBands), read again as often as asked. */
export interface TiffBands {
  readonly width: number
  readonly height: number
  readonly channels: 4
  /** The RGBA rows from the first, a band a batch, each batch valid until the next is asked for. */
  bands(): AsyncIterable<PixelRows>
}

/**
 * The first page of a TIFF in strips whose RGBA passes TIFF_BANDED_RGBA_BYTES, as bands: each strip decoded alone
 * (decodeBlock, as decodeRaster does) and converted to RGBA a band of rows at a time (UTIF.toRGBA8, as toRgbaInBands
 * does), so neither the page's raster nor its RGBA exists whole. Undefined, with nothing decoded, for a tiled TIFF
 * or a page of at most `aboveRgbaBytes` of RGBA. readTiffFirstIfd must have accepted the bytes.
 */
export function tiffBands(bytes: Uint8Array, aboveRgbaBytes = TIFF_BANDED_RGBA_BYTES): TiffBands | undefined {
  const { img, data } = firstIfd(bytes)
  const { width, height } = img
  // Zero rows a strip would be no band ever: decodeRaster reads such a page (as zeros).
  if (img.t322 || !((img.t278?.[0] ?? height) >= 1) || width * height * 4 <= aboveRgbaBytes) return undefined
  return { width, height, channels: 4, bands: () => stripBands(img, data) }
}

/** A fault of the file found while its bands are read (UTIF's decoders' errors): refused as a decoding fault is. */
export class TiffDecodeError extends Error {
  override readonly name = 'TiffDecodeError'
}

async function* stripBands(img: Ifd, data: Uint8Array): AsyncGenerator<PixelRows> {
  try {
    yield* stripBandsOf(img, data)
  } catch (error) {
    throw error instanceof ImageStructureError ? error : new TiffDecodeError(String(error), { cause: error })
  }
}

async function* stripBandsOf(img: Ifd, data: Uint8Array): AsyncGenerator<PixelRows> {
  const { width, height } = img
  const bitsPerPixel = (img.t258?.[0] ?? 1) * (img.t277?.[0] ?? 1)
  const rowBytes = Math.ceil((width * bitsPerPixel) / 8)
  const compression = img.t259?.[0] ?? 1
  const offsets = img.t273
  if (!offsets) throw new ImageStructureError('the TIFF has no strip offsets')
  const counts = compression === 1 && offsets.length === 1 ? [height * rowBytes] : img.t279
  if (!counts) throw new ImageStructureError('the TIFF has no strip byte counts')
  const rowsPerStrip = Math.min(img.t278?.[0] ?? height, height)
  const turn = workTurns(WORK_BYTES_PER_TURN)
  // A whole number of 4-byte words: UTIF.toRGBA8 views a gray page's buffer as floats when its rows' length is.
  const strip = new Uint8Array(Math.ceil((rowsPerStrip * rowBytes) / 4) * 4)
  const band = Math.max(1, Math.floor(WORK_BYTES_PER_TURN / (width * 4)))
  const stride = width * 4
  for (let first = 0, i = 0; first < height; first += rowsPerStrip, i++) {
    const rows = Math.min(rowsPerStrip, height - first)
    // A missing strip reads as zeros, as decodeRaster's raster, new for the page, leaves it.
    strip.fill(0)
    if (i < offsets.length)
      await decodeBlock(img, data, offsets[i]!, counts[i] ?? 0, strip, 0, { width, rows, rowBytes }, turn)
    for (let row = 0; row < rows; row += band) {
      const count = Math.min(band, rows - row)
      const rgba = utif.toRGBA8({
        ...img,
        height: count,
        data: strip.subarray(row * rowBytes, (row + count) * rowBytes),
      })
      yield { rows: count, row: (r) => rgba.subarray(r * stride, (r + 1) * stride) }
      await turn(count * stride)
    }
  }
}
