// TIFF's first page with UTIF (utif2), bounded: UTIF follows every IFD of the chain (a cycle never ends), loops
// over each tag's declared count (4 billion values from a 12-byte entry) and inflates Deflate strips whole (a
// bomb). So the first IFD and the IFDs it points to are checked here first (counts within the file, no cycles, a
// bounded depth), only the first IFD is read, only the common compressions are taken, and Deflate strips are
// inflated to at most the bytes the strip can hold.
import pako from 'pako'
import UTIF from 'utif2'
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
  if (seen.size >= MAX_IFDS || depth > MAX_DEPTH) throw new ImageStructureError(`the TIFF has more than ${MAX_IFDS} IFDs or nests them deeper than ${MAX_DEPTH}`)
  seen.add(offset)
  if (offset + 2 > r.bytes.length) throw new ImageStructureError('the TIFF is truncated (its IFD lies past the end)')
  const count = u16(r, offset)
  if (offset + 2 + count * 12 > r.bytes.length) throw new ImageStructureError('the TIFF is truncated (its IFD runs past the end)')
  const first = new Map<number, number>()
  for (let i = 0; i < count; i++) {
    const entry = offset + 2 + i * 12
    const tag = u16(r, entry)
    const type = u16(r, entry + 2)
    const values = u32(r, entry + 4)
    const size = values * (TYPE_BYTES[type] ?? 0)
    if (size > r.bytes.length) throw new ImageStructureError(`the TIFF's tag ${tag} claims ${values} values, more than the file holds`)
    const at = size > 4 ? u32(r, entry + 8) : entry + 8
    if (at + size > r.bytes.length) throw new ImageStructureError(`the TIFF's tag ${tag} points past the end of the file`)
    if (values === 0) continue
    const value = type === 3 || type === 8 ? u16(r, at) : type === 4 || type === 9 || type === 13 ? u32(r, at) : type === 1 || type === 7 ? r.bytes[at]! : 0
    first.set(tag, value)
    if (SUB_IFD_TAGS.has(tag)) {
      if (values > 16) throw new ImageStructureError(`the TIFF's tag ${tag} points to ${values} IFDs`)
      for (let v = 0; v < values; v++) checkIfd(r, type === 3 ? u16(r, at + 2 * v) : u32(r, at + 4 * v), depth + 1, seen)
    }
  }
  return first
}

/** The first IFD's size, bits per pixel and tile size, after checking it (and what it points to) is safe to read. */
export function readTiffFirstIfd(bytes: Uint8Array): TiffFirstIfd {
  const r: Reader = { bytes, view: new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), little: bytes[0] === 0x49 }
  const tags = checkIfd(r, u32(r, 4), 0, new Set())
  const width = tags.get(256)
  const height = tags.get(257)
  if (!width || !height) throw new ImageStructureError('the TIFF has no image size in its first IFD')
  const compression = tags.get(259) ?? 1
  if (!COMPRESSIONS.has(compression)) throw new ImageStructureError(`TIFF compression ${compression} is not supported (none, LZW, Deflate, PackBits and CCITT are)`)
  const bitsPerSample = tags.get(258) ?? 1
  const samples = tags.get(277) ?? 1
  if (![1, 2, 4, 8, 16].includes(bitsPerSample) || samples < 1 || samples > 8) {
    throw new ImageStructureError(`TIFF with ${samples} samples of ${bitsPerSample} bits per pixel is not supported`)
  }
  const tileWidth = tags.get(322)
  const tileHeight = tags.get(323)
  // TIFF 6.0, section 15: TileWidth and TileLength must be multiples of 16 (so tiles are never 1 × 1 pixels).
  if ((tileWidth !== undefined || tileHeight !== undefined) && (!tileWidth || !tileHeight || tileWidth % 16 !== 0 || tileHeight % 16 !== 0)) {
    throw new ImageStructureError(`the TIFF's tiles are ${tileWidth} × ${tileHeight} (TIFF 6.0: multiples of 16)`)
  }
  return { width, height, bitsPerPixel: Math.max(32, bitsPerSample * samples), ...(tileWidth && tileHeight ? { tile: { width: tileWidth, height: tileHeight } } : {}) }
}

class InflateStop extends Error {}

/** Raw Deflate data inflated to at most maxBytes: a bomb stops at the size of the strip it fills. */
function inflateRawAtMost(source: Uint8Array, maxBytes: number): Uint8Array {
  const out = new Uint8Array(Math.max(0, maxBytes))
  let length = 0
  const inflator = new pako.Inflate({ raw: true, chunkSize: 64 * 1024 })
  inflator.onData = (chunk: Uint8Array) => {
    const taken = Math.min(chunk.length, out.length - length)
    out.set(chunk.subarray(0, taken), length)
    length += taken
    if (taken < chunk.length) throw new InflateStop()
  }
  try {
    inflator.push(source, true)
  } catch (error) {
    if (!(error instanceof InflateStop)) throw error
  }
  return out.subarray(0, length)
}

type Decompress = (img: unknown, ifds: unknown, data: Uint8Array, off: number, len: number, cmpr: number, tgt: Uint8Array, toff: number, ...rest: unknown[]) => void
const utifDecode = UTIF.decode as unknown as { _decompress: Decompress }
const decompress = utifDecode._decompress
utifDecode._decompress = (img, ifds, data, off, len, cmpr, tgt, toff, ...rest) => {
  if (cmpr !== 8 && cmpr !== 32946) return decompress(img, ifds, data, off, len, cmpr, tgt, toff, ...rest)
  // As UTIF does: the zlib stream without its 2-byte header and 4-byte checksum, then copied as uncompressed.
  const inflated = inflateRawAtMost(data.subarray(off + 2, off + len - 4), tgt.length - toff)
  return decompress(img, ifds, inflated, 0, inflated.length, 1, tgt, toff, ...rest)
}

interface UtifInternals {
  _binLE: unknown
  _binBE: unknown
  _readIFD(bin: unknown, data: Uint8Array, offset: number, ifds: object[], depth: number, options: object): number
}

/** The first page as RGBA; readTiffFirstIfd must have accepted the bytes. */
export function decodeTiffFirstPage(bytes: Uint8Array): { width: number; height: number; data: Uint8Array } {
  const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer
  const data = new Uint8Array(buffer)
  const internals = UTIF as unknown as UtifInternals
  const little = data[0] === 0x49
  const ifds: Array<{ width: number; height: number }> = []
  // The first IFD only (UTIF.decode would follow the whole chain), without maker notes.
  internals._readIFD(little ? internals._binLE : internals._binBE, data, new DataView(buffer).getUint32(4, little), ifds, 0, { parseMN: false, debug: false })
  const first = ifds[0]
  if (!first) throw new ImageStructureError('the TIFF has no image')
  UTIF.decodeImage(buffer, first as never)
  return { width: first.width, height: first.height, data: UTIF.toRGBA8(first as never) }
}
