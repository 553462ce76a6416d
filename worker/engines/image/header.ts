// Image dimensions read from the structure each decoder will decode, before any decoding, so a pixel flood (a
// tiny file that claims 60000×60000 pixels, or a small GIF screen whose first frame is huge) is refused before it
// can take memory: GIF's logical screen and its first frame's image descriptor; AVIF's primary item (pitm → ipma →
// its ispe), every other item's ispe and each AV1 sequence header's largest frame; WebP's VP8X canvas and each
// VP8/VP8L/ANMF frame; TIFF's first IFD (and its tiles); PNG's IHDR; the JPEG frame's SOF; BMP's header.
import { type Extent, ImageStructureError } from './limits'
import { readTiffFirstIfd } from './tiff'
import { fourCharacterCode, hasAscii } from '../../magic'

export type ImageFormat = 'png' | 'jpeg' | 'webp' | 'gif' | 'bmp' | 'tiff' | 'avif'

export interface ImageHeader {
  readonly format: ImageFormat
  /** The decoded picture's size. */
  readonly width: number
  readonly height: number
  /** Every pixel area the decoder allocates for this file (the picture, a GIF frame, AVIF items, TIFF tiles). */
  readonly extents: readonly Extent[]
  /** Bytes per pixel of the decoder's own buffer, when above RGBA's 4 (a 16-bit RGBA TIFF holds 8). */
  readonly bytesPerPixel?: number
}

function jpegSize(bytes: Uint8Array, view: DataView): Extent | undefined {
  let offset = 2
  while (offset + 9 < bytes.length) {
    if (bytes[offset] !== 0xff) return undefined
    const marker = bytes[offset + 1]!
    if (marker === 0xff) {
      offset++
      continue
    }
    const length = view.getUint16(offset + 2)
    // SOF0..SOF15 carry the size, except DHT (C4), JPG (C8) and DAC (CC).
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { height: view.getUint16(offset + 5), width: view.getUint16(offset + 7) }
    }
    offset += 2 + length
  }
  return undefined
}

const read24 = (bytes: Uint8Array, at: number) => bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16)

/** WebP: the RIFF chunks; the VP8X canvas and every frame (VP8, VP8L, ANMF) the decoder may decode. */
function webpExtents(bytes: Uint8Array, view: DataView): Extent[] {
  const extents: Extent[] = []
  const frame = (at: number, fourcc: string) => {
    if (fourcc === 'VP8 ' && at + 10 <= bytes.length)
      extents.push({ width: view.getUint16(at + 6, true) & 0x3fff, height: view.getUint16(at + 8, true) & 0x3fff })
    if (fourcc === 'VP8L' && at + 5 <= bytes.length) {
      const bits = view.getUint32(at + 1, true)
      extents.push({ width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 })
    }
  }
  const walk = (start: number, end: number, depth: number) => {
    for (let at = start; at + 8 <= end; ) {
      const fourcc = fourCharacterCode(bytes, at)
      const size = view.getUint32(at + 4, true)
      const data = at + 8
      if (fourcc === 'VP8X' && data + 10 <= end)
        extents.push({ width: read24(bytes, data + 4) + 1, height: read24(bytes, data + 7) + 1 })
      if (fourcc === 'ANMF' && data + 16 <= end && depth === 0) {
        extents.push({ width: read24(bytes, data + 6) + 1, height: read24(bytes, data + 9) + 1 })
        walk(data + 16, Math.min(end, data + size), depth + 1)
      }
      frame(data, fourcc)
      at = data + size + (size & 1)
    }
  }
  walk(12, bytes.length, 0)
  return extents
}

interface Box {
  readonly type: string
  readonly start: number // first byte of the content
  readonly end: number
}

/** The ISO BMFF boxes between start and end (sizes checked against the bytes; 64-bit and to-the-end sizes read). */
function boxes(bytes: Uint8Array, view: DataView, start: number, end: number): Box[] {
  const found: Box[] = []
  for (let at = start; at + 8 <= end; ) {
    let size = view.getUint32(at)
    let header = 8
    if (size === 1) {
      if (at + 16 > end) break
      size = Number(view.getBigUint64(at + 8))
      header = 16
    } else if (size === 0) size = end - at
    if (size < header || at + size > end) break
    found.push({ type: fourCharacterCode(bytes, at + 4), start: at + header, end: at + size })
    at += size
  }
  return found
}

/** Reads bits big-endian from a byte range (AV1's f(n) and uvlc()); past the end it throws. */
class BitReader {
  private bit = 0
  constructor(
    private readonly bytes: Uint8Array,
    private readonly start: number,
    private readonly end: number,
  ) {}

  read(count: number): number {
    let value = 0
    for (let i = 0; i < count; i++) {
      const at = this.start + (this.bit >> 3)
      if (at >= this.end) throw new ImageStructureError('the AV1 sequence header is cut short')
      value = value * 2 + ((this.bytes[at]! >> (7 - (this.bit & 7))) & 1)
      this.bit++
    }
    return value
  }

  uvlc(): number {
    let zeros = 0
    while (this.read(1) === 0) if (++zeros >= 32) return 2 ** 32 - 1
    return this.read(zeros) + 2 ** zeros - 1
  }
}

/** The largest frame an AV1 sequence header (AV1 spec §5.5.1) allows: max_frame_width/height_minus_1 + 1. */
function av1SequenceFrame(bytes: Uint8Array, start: number, end: number): Extent {
  const bits = new BitReader(bytes, start, end)
  bits.read(3) // seq_profile
  bits.read(1) // still_picture
  if (bits.read(1))
    bits.read(5) // reduced_still_picture_header: seq_level_idx[0]
  else {
    let decoderModelInfo = false
    let bufferDelayLength = 0
    if (bits.read(1)) {
      // timing_info()
      bits.read(32)
      bits.read(32)
      if (bits.read(1)) bits.uvlc()
      decoderModelInfo = bits.read(1) === 1
      if (decoderModelInfo) {
        bufferDelayLength = bits.read(5) + 1
        bits.read(32)
        bits.read(5)
        bits.read(5)
      }
    }
    const initialDisplayDelay = bits.read(1) === 1
    const operatingPoints = bits.read(5) + 1
    for (let i = 0; i < operatingPoints; i++) {
      bits.read(12) // operating_point_idc
      if (bits.read(5) > 7) bits.read(1) // seq_level_idx, seq_tier
      if (decoderModelInfo && bits.read(1)) {
        bits.read(bufferDelayLength)
        bits.read(bufferDelayLength)
        bits.read(1)
      }
      if (initialDisplayDelay && bits.read(1)) bits.read(4)
    }
  }
  const widthBits = bits.read(4) + 1
  const heightBits = bits.read(4) + 1
  return { width: bits.read(widthBits) + 1, height: bits.read(heightBits) + 1 }
}

/** The sequence header OBU (type 1) among the OBUs in [start, end) (AV1 spec §5.3), if there is one. */
function av1SequenceHeader(bytes: Uint8Array, start: number, end: number): Extent | undefined {
  for (let at = start; at < end; ) {
    const header = bytes[at]!
    const type = (header >> 3) & 0x0f
    let payload = at + 1 + ((header >> 2) & 1) // the extension byte
    let size = end - payload
    if (header & 0x02) {
      // obu_size, leb128
      size = 0
      for (let i = 0; i < 8; i++) {
        const byte = bytes[payload++]
        if (byte === undefined) return undefined
        size += (byte & 0x7f) * 2 ** (7 * i)
        if (!(byte & 0x80)) break
      }
    }
    if (type === 1) return av1SequenceFrame(bytes, payload, Math.min(end, payload + size))
    at = payload + size
  }
  return undefined
}

/** iinf: each item's type (infe version 2 or 3), by item ID. */
function itemTypes(bytes: Uint8Array, view: DataView, iinf: Box): Map<number, string> {
  const types = new Map<number, string>()
  const first = iinf.start + 4 + (bytes[iinf.start] === 0 ? 2 : 4)
  for (const infe of boxes(bytes, view, first, iinf.end).filter((box) => box.type === 'infe')) {
    const version = bytes[infe.start]!
    if (version < 2) continue
    const id = version === 2 ? view.getUint16(infe.start + 4) : view.getUint32(infe.start + 4)
    const at = infe.start + 4 + (version === 2 ? 2 : 4) + 2
    if (at + 4 <= infe.end) types.set(id, fourCharacterCode(bytes, at))
  }
  return types
}

/** iloc (ISO/IEC 14496-12 §8.11.3): each item's first extent as a byte range of the file (or of idat). */
function itemLocations(
  bytes: Uint8Array,
  view: DataView,
  iloc: Box,
  idat: Box | undefined,
): Map<number, { start: number; end: number }> {
  const locations = new Map<number, { start: number; end: number }>()
  const version = bytes[iloc.start]!
  const sizes = view.getUint16(iloc.start + 4)
  const [offsetSize, lengthSize, baseSize, indexSize] = [
    sizes >> 12,
    (sizes >> 8) & 15,
    (sizes >> 4) & 15,
    version > 0 ? sizes & 15 : 0,
  ]
  let at = iloc.start + 6
  const read = (size: number) => {
    if (at + size > iloc.end) throw new ImageStructureError('the AVIF item locations (iloc) are cut short')
    const value =
      size === 0
        ? 0
        : size === 2
          ? view.getUint16(at)
          : size === 4
            ? view.getUint32(at)
            : size === 8
              ? Number(view.getBigUint64(at))
              : Number.NaN
    if (Number.isNaN(value)) throw new ImageStructureError(`the AVIF item locations (iloc) use ${size}-byte fields`)
    at += size
    return value
  }
  const count = read(version < 2 ? 2 : 4)
  for (let item = 0; item < count; item++) {
    const id = read(version < 2 ? 2 : 4)
    const construction = version > 0 ? read(2) & 15 : 0
    read(2) // data_reference_index
    const base = read(baseSize)
    const extents = read(2)
    for (let e = 0; e < extents; e++) {
      if (indexSize > 0) read(indexSize)
      const offset = read(offsetSize)
      const length = read(lengthSize)
      const origin = construction === 1 ? (idat?.start ?? Number.NaN) : 0
      const start = origin + base + offset
      if (e === 0 && Number.isFinite(start))
        locations.set(id, { start, end: Math.min(bytes.length, length === 0 ? bytes.length : start + length) })
    }
  }
  return locations
}

/**
 * AVIF (HEIF): the areas its decoder allocates.
 * - The primary item's spatial extent: meta → pitm names the item, iprp → ipma lists its properties, their indexes
 *   point into ipco, and one of them is its ispe.
 * - Every other ispe of the file: grid tiles and alpha planes are decoded with the primary, and a thumbnail larger
 *   than the limits is refused too.
 * - The frame size each AV1 item's own sequence header allows, in its coded data (iinf → iloc) and in any av1C
 *   property: the AV1 decoder allocates that, whatever ispe says.
 * The primary's coded frame may not exceed its ispe.
 */
function avifHeader(bytes: Uint8Array, view: DataView): { width: number; height: number; extents: Extent[] } {
  const meta = boxes(bytes, view, 0, bytes.length).find((box) => box.type === 'meta')
  if (!meta)
    throw new ImageStructureError(
      'the AVIF has no meta box (an image sequence without a primary image is not supported)',
    )
  const inMeta = boxes(bytes, view, meta.start + 4, meta.end) // meta is a full box: version and flags first
  const pitm = inMeta.find((box) => box.type === 'pitm')
  const iprp = inMeta.find((box) => box.type === 'iprp')
  if (!pitm || !iprp || pitm.start + 6 > pitm.end)
    throw new ImageStructureError('the AVIF names no primary item (pitm) or has no item properties (iprp)')
  const primary = bytes[pitm.start] === 0 ? view.getUint16(pitm.start + 4) : view.getUint32(pitm.start + 4)
  const inIprp = boxes(bytes, view, iprp.start, iprp.end)
  const ipco = inIprp.find((box) => box.type === 'ipco')
  const properties = ipco ? boxes(bytes, view, ipco.start, ipco.end) : []
  const spatial = (box: Box | undefined): Extent | undefined =>
    box?.type === 'ispe' && box.start + 12 <= box.end
      ? { width: view.getUint32(box.start + 4), height: view.getUint32(box.start + 8) }
      : undefined
  const extents = properties.flatMap((box) => spatial(box) ?? [])
  // av1C (AV1-ISOBMFF §2.3): four bytes of fields, then configOBUs that may hold the sequence header.
  for (const av1c of properties.filter((box) => box.type === 'av1C')) {
    const frame = av1SequenceHeader(bytes, av1c.start + 4, av1c.end)
    if (frame) extents.push(frame)
  }
  let primaryExtent: Extent | undefined
  for (const ipma of inIprp.filter((box) => box.type === 'ipma')) {
    const version = bytes[ipma.start]!
    const wideIndexes = (bytes[ipma.start + 3]! & 1) === 1
    const count = view.getUint32(ipma.start + 4)
    let at = ipma.start + 8
    for (let entry = 0; entry < count && at < ipma.end; entry++) {
      const itemId = version < 1 ? view.getUint16(at) : view.getUint32(at)
      at += version < 1 ? 2 : 4
      const associations = bytes[at++]!
      for (let a = 0; a < associations && at < ipma.end; a++) {
        const index = wideIndexes ? view.getUint16(at) & 0x7fff : bytes[at]! & 0x7f
        at += wideIndexes ? 2 : 1
        if (itemId === primary && index > 0) primaryExtent ??= spatial(properties[index - 1])
      }
    }
  }
  if (!primaryExtent) throw new ImageStructureError(`the AVIF's primary item ${primary} has no spatial extent (ispe)`)
  const iinf = inMeta.find((box) => box.type === 'iinf')
  const iloc = inMeta.find((box) => box.type === 'iloc')
  if (iinf && iloc) {
    const locations = itemLocations(
      bytes,
      view,
      iloc,
      inMeta.find((box) => box.type === 'idat'),
    )
    for (const [id, type] of itemTypes(bytes, view, iinf)) {
      const location = locations.get(id)
      if (type !== 'av01' || !location) continue
      const frame = av1SequenceHeader(bytes, location.start, location.end)
      if (!frame) continue
      extents.push(frame)
      if (id === primary && (frame.width > primaryExtent.width || frame.height > primaryExtent.height)) {
        throw new ImageStructureError(
          `the AVIF's primary item is ${primaryExtent.width}×${primaryExtent.height} (ispe) but its AV1 data is coded for frames of up to ${frame.width}×${frame.height}`,
        )
      }
    }
  }
  return { ...primaryExtent, extents: [primaryExtent, ...extents] }
}

/** GIF: the logical screen, and frame 0's image descriptor (omggif decodes that frame at its own size). */
function gifHeader(bytes: Uint8Array, view: DataView): { width: number; height: number; extents: Extent[] } {
  const screen = { width: view.getUint16(6, true), height: view.getUint16(8, true) }
  const flags = bytes[10]!
  let at = 13 + (flags & 0x80 ? 3 * 2 ** ((flags & 7) + 1) : 0)
  while (at < bytes.length) {
    const block = bytes[at]!
    if (block === 0x2c) {
      if (at + 9 >= bytes.length) break
      return {
        ...screen,
        extents: [screen, { width: view.getUint16(at + 5, true), height: view.getUint16(at + 7, true) }],
      }
    }
    if (block !== 0x21) break
    at += 2 // introducer and label, then data sub-blocks up to a zero length
    while (at < bytes.length && bytes[at] !== 0) at += bytes[at]! + 1
    at++
  }
  throw new ImageStructureError('the GIF has no image (no image descriptor before its end)')
}

/**
 * The format and sizes, or undefined when the bytes are not an image this service decodes. Throws an
 * ImageStructureError when the structure the decoder would read is missing or refused.
 */
export function readImageHeader(bytes: Uint8Array): ImageHeader | undefined {
  if (bytes.length < 16) return undefined
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const plain = (format: ImageFormat, size: Extent | undefined): ImageHeader | undefined =>
    size && { format, ...size, extents: [size] }
  if (bytes[0] === 0x89 && hasAscii(bytes, 1, 'PNG') && hasAscii(bytes, 12, 'IHDR') && bytes.length >= 24) {
    return plain('png', { width: view.getUint32(16), height: view.getUint32(20) })
  }
  if (bytes[0] === 0xff && bytes[1] === 0xd8) return plain('jpeg', jpegSize(bytes, view))
  if (hasAscii(bytes, 0, 'RIFF') && hasAscii(bytes, 8, 'WEBP')) {
    const extents = webpExtents(bytes, view)
    return extents.length > 0 ? { format: 'webp', ...extents[0]!, extents } : undefined
  }
  if (hasAscii(bytes, 0, 'GIF8')) return { format: 'gif', ...gifHeader(bytes, view) }
  if (
    (hasAscii(bytes, 0, 'II') && bytes[2] === 42 && bytes[3] === 0) ||
    (hasAscii(bytes, 0, 'MM') && bytes[2] === 0 && bytes[3] === 42)
  ) {
    const ifd = readTiffFirstIfd(bytes)
    return {
      format: 'tiff',
      width: ifd.width,
      height: ifd.height,
      extents: [ifd, ...(ifd.tile ? [ifd.tile] : [])],
      bytesPerPixel: ifd.bitsPerPixel / 8,
    }
  }
  if (hasAscii(bytes, 4, 'ftyp') && (hasAscii(bytes, 8, 'avif') || hasAscii(bytes, 8, 'avis')))
    return { format: 'avif', ...avifHeader(bytes, view) }
  if (hasAscii(bytes, 0, 'BM') && bytes.length >= 26)
    return plain('bmp', { width: Math.abs(view.getInt32(18, true)), height: Math.abs(view.getInt32(22, true)) })
  return undefined
}
