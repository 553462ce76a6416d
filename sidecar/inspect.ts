// What the sidecar checks in a document before LibreOffice opens it: a zip container (DOCX, XLSX, PPTX, ODF)
// that would expand beyond the limit is refused (a zip bomb), by its declared sizes and then by inflating each
// entry without keeping the output (declared sizes can lie); a zip cut short is refused too; and whether the
// document is encrypted, so a failed open can say "password-protected" rather than "unreadable".
import { createInflateRaw, inflateRawSync } from 'node:zlib'

export class DocumentRefusedError extends Error {}

const ZIP_LOCAL = 0x04034b50
const ZIP_CENTRAL = 0x02014b50
const ZIP_END = 0x06054b50
const CFB_MAGIC = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]
const OOXML = /\.(docx|docm|dotx|xlsx|xlsm|xltx|pptx|ppsx|potx)$/i
export const MAX_ZIP_ENTRIES = 20_000

export interface ZipEntry {
  readonly name: string
  readonly method: number
  readonly compressedSize: number
  readonly size: number
  readonly localOffset: number
}

const mib = (bytes: number) => `${Math.round(bytes / 1024 / 1024)} MiB`

/** The entries of a zip's central directory, or undefined when the bytes are not a zip. */
export function zipEntries(bytes: Uint8Array): ZipEntry[] | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (bytes.length < 22 || view.getUint32(0, true) !== ZIP_LOCAL) return undefined
  let end = -1
  for (let at = bytes.length - 22; at >= Math.max(0, bytes.length - 22 - 65_535); at--) {
    if (view.getUint32(at, true) === ZIP_END) {
      end = at
      break
    }
  }
  if (end < 0) return undefined
  const count = view.getUint16(end + 10, true)
  if (count > MAX_ZIP_ENTRIES) throw new DocumentRefusedError(`the document holds more than ${MAX_ZIP_ENTRIES} parts`)
  const entries: ZipEntry[] = []
  let at = view.getUint32(end + 16, true)
  const decoder = new TextDecoder()
  for (let i = 0; i < count && at + 46 <= bytes.length && view.getUint32(at, true) === ZIP_CENTRAL; i++) {
    const nameLength = view.getUint16(at + 28, true)
    entries.push({
      method: view.getUint16(at + 10, true),
      compressedSize: view.getUint32(at + 20, true),
      size: view.getUint32(at + 24, true),
      name: decoder.decode(bytes.subarray(at + 46, at + 46 + nameLength)),
      localOffset: view.getUint32(at + 42, true),
    })
    at += 46 + nameLength + view.getUint16(at + 30, true) + view.getUint16(at + 32, true)
  }
  return entries
}

/** An entry's stored (maybe compressed) bytes. */
export function entryData(bytes: Uint8Array, entry: ZipEntry): Uint8Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const at = entry.localOffset
  if (at + 30 > bytes.length || view.getUint32(at, true) !== ZIP_LOCAL) return new Uint8Array()
  const start = at + 30 + view.getUint16(at + 26, true) + view.getUint16(at + 28, true)
  return bytes.subarray(start, Math.min(bytes.length, start + entry.compressedSize))
}

/** Most parts of a document are small: inflated at once (no stream, no event-loop turns per part) when they
 * inflate to at most 1 MiB; undefined otherwise (or when damaged), for the streaming count to decide. */
function smallInflatedSize(data: Uint8Array): number | undefined {
  try {
    return inflateRawSync(data, { maxOutputLength: 1024 * 1024 }).length
  } catch {
    return undefined
  }
}

/** Inflates `data`, counting and dropping the output; the count, stopping once it passes `budget`. */
function inflatedSize(data: Uint8Array, budget: number): Promise<number> {
  return new Promise((resolve) => {
    let size = 0
    const inflate = createInflateRaw()
    inflate.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > budget) {
        inflate.destroy()
        resolve(size)
      }
    })
    inflate.on('end', () => resolve(size))
    inflate.on('error', () => resolve(size))
    inflate.on('close', () => resolve(size))
    inflate.end(data)
  })
}

export interface DocumentFacts {
  readonly encrypted: boolean
}

/** Refuses a document that expands beyond `maxExpandedBytes`; tells whether it is encrypted. */
export async function inspectDocument(
  filename: string,
  bytes: Uint8Array,
  maxExpandedBytes: number,
): Promise<DocumentFacts> {
  if (CFB_MAGIC.every((byte, i) => bytes[i] === byte)) {
    // An OOXML name on an OLE compound file is an encrypted OOXML package (EncryptionInfo + EncryptedPackage).
    return { encrypted: OOXML.test(filename) }
  }
  const entries = zipEntries(bytes)
  if (!entries) {
    // A zip cut short (no end of central directory record): LibreOffice cannot read it as a package, and its type
    // detection goes on to other import filters (LibreOffice 7.4 opened such a .docx as WordPerfect).
    if (
      bytes.length >= 4 &&
      new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(0, true) === ZIP_LOCAL
    ) {
      throw new DocumentRefusedError(
        `the document '${filename}' is a truncated or damaged zip: its end of central directory record is missing`,
      )
    }
    return { encrypted: false }
  }
  const declared = entries.reduce((sum, entry) => sum + entry.size, 0)
  const refuse = () =>
    new DocumentRefusedError(
      `the document expands to more than ${mib(maxExpandedBytes)} (SIDECAR_MAX_EXPANDED_BYTES); it looks like a zip bomb`,
    )
  if (declared > maxExpandedBytes) throw refuse()
  let budget = maxExpandedBytes
  let encrypted = false
  for (const entry of entries) {
    const data = entryData(bytes, entry)
    const size = entry.method === 8 ? (smallInflatedSize(data) ?? (await inflatedSize(data, budget))) : data.length
    budget -= size
    if (budget < 0) throw refuse()
    if (entry.name === 'META-INF/manifest.xml' && size <= 1024 * 1024) {
      const manifest = entry.method === 8 ? await inflateText(data) : new TextDecoder().decode(data)
      encrypted = manifest.includes('encryption-data')
    }
  }
  return { encrypted }
}

function inflateText(data: Uint8Array): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    const inflate = createInflateRaw()
    inflate.on('data', (chunk: Buffer) => chunks.push(chunk))
    inflate.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    inflate.on('error', () => resolve(''))
    inflate.end(data)
  })
}
