// The content type of stored bytes, from their magic numbers: a client's declared type is a hint, never
// trusted over the bytes. Text formats without magic fall back to the extension.
import { fourCharacterCode, hasAscii } from '../magic'

/** Bytes enough for every signature below. */
export const SNIFF_BYTES = 4100

const ZIP_OFFICE: Record<string, string> = {
  '.docx': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  '.xlsx': 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  '.pptx': 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  '.odt': 'application/vnd.oasis.opendocument.text',
  '.ods': 'application/vnd.oasis.opendocument.spreadsheet',
  '.odp': 'application/vnd.oasis.opendocument.presentation',
}

const OLE_OFFICE: Record<string, string> = {
  '.doc': 'application/msword',
  '.xls': 'application/vnd.ms-excel',
  '.ppt': 'application/vnd.ms-powerpoint',
}

/** Types of formats recognised by extension alone (plain text has no magic number). */
const BY_EXTENSION: Record<string, string> = {
  '.txt': 'text/plain',
  '.csv': 'text/csv',
  '.md': 'text/markdown',
  '.json': 'application/json',
  '.html': 'text/html',
  '.vtt': 'text/vtt',
  '.svg': 'image/svg+xml',
  ...ZIP_OFFICE,
  ...OLE_OFFICE,
}

const startsWith = (bytes: Uint8Array, signature: readonly number[], offset = 0) =>
  bytes.length >= offset + signature.length && signature.every((byte, i) => bytes[offset + i] === byte)

function sniffMagic(head: Uint8Array, extension: string): string | undefined {
  if (startsWith(head, [0x25, 0x50, 0x44, 0x46, 0x2d])) return 'application/pdf'
  if (startsWith(head, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png'
  if (startsWith(head, [0xff, 0xd8, 0xff])) return 'image/jpeg'
  if (hasAscii(head, 0, 'GIF87a') || hasAscii(head, 0, 'GIF89a')) return 'image/gif'
  if (hasAscii(head, 0, 'RIFF') && hasAscii(head, 8, 'WEBP')) return 'image/webp'
  if (hasAscii(head, 0, 'RIFF') && hasAscii(head, 8, 'WAVE')) return 'audio/wav'
  if (hasAscii(head, 0, 'BM') && head.length > 14) return 'image/bmp'
  if (startsWith(head, [0x49, 0x49, 0x2a, 0x00]) || startsWith(head, [0x4d, 0x4d, 0x00, 0x2a])) return 'image/tiff'
  if (hasAscii(head, 4, 'ftyp')) {
    const brand = fourCharacterCode(head, 8)
    if (brand === 'avif' || brand === 'avis') return 'image/avif'
    if (brand.startsWith('M4A')) return 'audio/mp4'
    if (brand.startsWith('heic') || brand === 'mif1') return 'image/heic'
    return 'video/mp4'
  }
  if (hasAscii(head, 0, 'ID3') || (head[0] === 0xff && head.length > 1 && (head[1]! & 0xe0) === 0xe0))
    return 'audio/mpeg'
  if (hasAscii(head, 0, 'OggS')) return 'audio/ogg'
  if (hasAscii(head, 0, 'fLaC')) return 'audio/flac'
  if (startsWith(head, [0x1a, 0x45, 0xdf, 0xa3])) return 'video/webm'
  if (hasAscii(head, 0, '{\\rtf')) return 'application/rtf'
  if (startsWith(head, [0x50, 0x4b, 0x03, 0x04])) return ZIP_OFFICE[extension] ?? 'application/zip'
  if (startsWith(head, [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]))
    return OLE_OFFICE[extension] ?? 'application/x-ole-storage'
  return undefined
}

/** Whether the head looks like text (no NUL bytes, valid UTF-8 or a UTF-16 BOM). */
function looksLikeText(head: Uint8Array): boolean {
  if (startsWith(head, [0xff, 0xfe]) || startsWith(head, [0xfe, 0xff])) return true
  if (head.includes(0)) return false
  try {
    // A multi-byte character cut at the end of the head is not an error.
    new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(head.subarray(0, Math.max(0, head.length - 4)))
    return true
  } catch {
    return false
  }
}

/**
 * The MIME type of a file from its first bytes (`SNIFF_BYTES` are enough) and its extension (lower-case, with
 * the dot). Unknown binary content is application/octet-stream, whatever was declared.
 */
export function sniffContentType(head: Uint8Array, extension: string): string {
  const magic = sniffMagic(head, extension)
  if (magic) return magic
  if (looksLikeText(head)) {
    const byExtension = BY_EXTENSION[extension]
    return byExtension?.startsWith('text/') || byExtension === 'application/json' || byExtension === 'image/svg+xml'
      ? byExtension
      : 'text/plain'
  }
  return 'application/octet-stream'
}
