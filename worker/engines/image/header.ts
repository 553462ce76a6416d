// Image dimensions from the first bytes of a file, read before any decoding, so a pixel flood (a tiny file
// that claims 60000×60000 pixels) is refused before it can take memory.

export type ImageFormat = 'png' | 'jpeg' | 'webp' | 'gif' | 'bmp' | 'tiff' | 'avif'

export interface ImageHeader {
  readonly format: ImageFormat
  readonly width: number
  readonly height: number
}

const ascii = (bytes: Uint8Array, offset: number, text: string) => [...text].every((char, i) => bytes[offset + i] === char.charCodeAt(0))

function jpegSize(bytes: Uint8Array, view: DataView): { width: number; height: number } | undefined {
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

function webpSize(bytes: Uint8Array, view: DataView): { width: number; height: number } | undefined {
  if (ascii(bytes, 12, 'VP8 ') && bytes.length >= 30) return { width: view.getUint16(26, true) & 0x3fff, height: view.getUint16(28, true) & 0x3fff }
  if (ascii(bytes, 12, 'VP8L') && bytes.length >= 25) {
    const bits = view.getUint32(21, true)
    return { width: (bits & 0x3fff) + 1, height: ((bits >> 14) & 0x3fff) + 1 }
  }
  if (ascii(bytes, 12, 'VP8X') && bytes.length >= 30) {
    const read24 = (at: number) => bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16)
    return { width: read24(24) + 1, height: read24(27) + 1 }
  }
  return undefined
}

/** AVIF (HEIF): the first image spatial extent property box, 'ispe' (version, flags, width, height). */
function avifSize(bytes: Uint8Array, view: DataView): { width: number; height: number } | undefined {
  for (let i = 4; i + 16 <= Math.min(bytes.length, 64 * 1024); i++) {
    if (ascii(bytes, i, 'ispe')) return { width: view.getUint32(i + 8), height: view.getUint32(i + 12) }
  }
  return undefined
}

/** TIFF: the first IFD's ImageWidth (256) and ImageLength (257) tags, short or long. */
function tiffSize(bytes: Uint8Array, view: DataView): { width: number; height: number } | undefined {
  const little = bytes[0] === 0x49
  const ifd = view.getUint32(4, little)
  if (ifd + 2 > bytes.length) return undefined
  const count = view.getUint16(ifd, little)
  const size: { width?: number; height?: number } = {}
  for (let i = 0; i < count && ifd + 2 + i * 12 + 12 <= bytes.length; i++) {
    const entry = ifd + 2 + i * 12
    const tag = view.getUint16(entry, little)
    const type = view.getUint16(entry + 2, little)
    const value = type === 3 ? view.getUint16(entry + 8, little) : view.getUint32(entry + 8, little)
    if (tag === 256) size.width = value
    if (tag === 257) size.height = value
  }
  return size.width && size.height ? { width: size.width, height: size.height } : undefined
}

/** The format and size, or undefined when the bytes are not an image this service decodes. */
export function readImageHeader(bytes: Uint8Array): ImageHeader | undefined {
  if (bytes.length < 16) return undefined
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (bytes[0] === 0x89 && ascii(bytes, 1, 'PNG') && ascii(bytes, 12, 'IHDR') && bytes.length >= 24) {
    return { format: 'png', width: view.getUint32(16), height: view.getUint32(20) }
  }
  if (bytes[0] === 0xff && bytes[1] === 0xd8) {
    const size = jpegSize(bytes, view)
    return size && { format: 'jpeg', ...size }
  }
  if (ascii(bytes, 0, 'RIFF') && ascii(bytes, 8, 'WEBP')) {
    const size = webpSize(bytes, view)
    return size && { format: 'webp', ...size }
  }
  if (ascii(bytes, 0, 'GIF8')) return { format: 'gif', width: view.getUint16(6, true), height: view.getUint16(8, true) }
  if ((ascii(bytes, 0, 'II') && bytes[2] === 42 && bytes[3] === 0) || (ascii(bytes, 0, 'MM') && bytes[2] === 0 && bytes[3] === 42)) {
    const size = tiffSize(bytes, view)
    return size && { format: 'tiff', ...size }
  }
  if (ascii(bytes, 4, 'ftyp') && (ascii(bytes, 8, 'avif') || ascii(bytes, 8, 'avis'))) {
    const size = avifSize(bytes, view)
    return size && { format: 'avif', ...size }
  }
  if (ascii(bytes, 0, 'BM') && bytes.length >= 26) return { format: 'bmp', width: Math.abs(view.getInt32(18, true)), height: Math.abs(view.getInt32(22, true)) }
  return undefined
}
