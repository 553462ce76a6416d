// What a PDF's streams decode to, measured before PDFium decodes them. PDFium decodes a stream whole into memory
// (content streams, fonts, object and cross-reference streams; each filter of a chain into a buffer of its own),
// so a 64 KB Flate stream of 64 MiB takes that much and more. Here every stream's filter chain (Flate, LZW,
// ASCIIHex, ASCII85, RunLength) runs in small pieces and each filter's output is counted, never kept, against a
// byte budget: a bomb is refused after inflating at most the budget, in bounded memory.
// The streams are found the way a repairing reader finds them: every `>> stream` in the file, its dictionary
// parsed forward from the `N G obj` before it, so no /Length, cross-reference table or compressed data can hide
// one. Without a verified /Length a stream's data end where PDFium ends them: at the first `endstream` or `endobj`
// after it (none: PDFium reads no stream there). A /Length that names an object is not verified (PDFium may find
// that object in an object stream): such a stream is decoded to the end of the file, and the bytes all the streams
// feed their filters together are bounded by twice the file (a file whose streams overlap more is refused), so the
// work is linear in the file whatever its streams say. Every object a stream dictionary names is parsed once.
// An encrypted document's streams are read both as they are and decrypted with each key pdf-crypt.ts finds (PDFium
// leaves some as they are), a /Crypt filter skipped as PDFium skips it.
import pako from 'pako'
import type { PdfDecryption, StreamDecryptor } from './pdf-crypt'

/** A stream of the file: where its data begins and what PDFium will do with it. */
export interface PdfStream {
  /** Its object number, 0 when unknown. */
  readonly object: number
  /** Its generation number (with the object number, an encrypted stream's key). */
  readonly generation: number
  /** Candidate first bytes of the data (after `stream` and its end of line, as readers differ on a lone CR). */
  readonly starts: readonly number[]
  /**
   * End of the data: after /Length's bytes when it is a number that `endstream` follows; else at the first
   * `endstream` or `endobj` (PDFium's FindStreamEndPos; none: no data); the end of the file when /Length names an
   * object.
   */
  readonly end: number
  /** The filters PDFium decodes whole, in order ('FlateDecode', …): an image's last one decodes line by line. */
  readonly filters: readonly string[]
  /** LZW's /EarlyChange per filter (1 unless DecodeParms say 0). */
  readonly earlyChange: readonly number[]
  /** Object and cross-reference streams: PDFium decodes these while loading the document. */
  readonly isStructure: boolean
  /** Its dictionary, as read. */
  readonly dictionary: ReadonlyMap<string, PdfValue>
  /**
   * Where a reader of its data without filters stops: `end` when /Length is verified, else at the first `endstream`
   * or `endobj` after the data (a data end that only a filter's end of data would otherwise mark).
   */
  readonly rawEnd: number
}

/** A stream's dictionary cannot be read: the file is refused rather than measured wrongly. */
export class PdfStreamSyntaxError extends Error {
  override readonly name = 'PdfStreamSyntaxError'
}

/** The objects read take more bytes than the file: they overlap (nested in one another's strings). */
export class PdfObjectsOverlapError extends PdfStreamSyntaxError {}

/** A stream, or all of them together, would decode to more than the budget allows. */
export class PdfStreamTooLargeError extends Error {
  override readonly name = 'PdfStreamTooLargeError'
  constructor(
    message: string,
    readonly limit: 'stream' | 'document',
    readonly maxBytes: number,
  ) {
    super(message)
  }
}

/** Work the pre-scan did, in bytes: what tests count (never time). */
export interface PdfScanWork {
  /** Bytes of the file read as objects: stream dictionaries and the objects they name. */
  bytesParsed: number
  /** Bytes of the file fed to the streams' first filters, every reading of every stream. */
  bytesFed: number
}

/** Objects the file's stream dictionaries name may be parsed to this many bytes in all, more than the file. */
const PARSE_SLACK_BYTES = 64 * 1024

export interface StreamBudget {
  /** Largest output of one filter of one stream. */
  readonly maxStreamBytes: number
  /** Largest output of all the measured streams' filters together. */
  readonly maxTotalBytes: number
}

export const isWhite = (byte: number | undefined) =>
  byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09 || byte === 0x0c || byte === 0x00
const isDelimiter = (byte: number) =>
  byte === 0x28 ||
  byte === 0x29 ||
  byte === 0x3c ||
  byte === 0x3e ||
  byte === 0x5b ||
  byte === 0x5d ||
  byte === 0x7b ||
  byte === 0x7d ||
  byte === 0x2f ||
  byte === 0x25
export const isRegular = (byte: number | undefined) => byte !== undefined && !isWhite(byte) && !isDelimiter(byte)
const isDigit = (byte: number | undefined) => byte !== undefined && byte >= 0x30 && byte <= 0x39

/** Filters PDFium decodes whole (the abbreviations are inline-image names it accepts too). */
const WHOLE_FILTERS: Record<string, string> = {
  FlateDecode: 'FlateDecode',
  Fl: 'FlateDecode',
  LZWDecode: 'LZWDecode',
  LZW: 'LZWDecode',
  ASCIIHexDecode: 'ASCIIHexDecode',
  AHx: 'ASCIIHexDecode',
  ASCII85Decode: 'ASCII85Decode',
  A85: 'ASCII85Decode',
  RunLengthDecode: 'RunLengthDecode',
  RL: 'RunLengthDecode',
}
/** Filters an image decodes line by line, within its declared size, when they come last. */
const IMAGE_LINE_FILTERS = new Set(['FlateDecode', 'RunLengthDecode'])

/** A string's bytes (kept only by readers asked to: stream dictionaries need none). */
export interface PdfString {
  readonly bytes: Uint8Array
}

export type PdfValue =
  | number
  | boolean
  | string
  | PdfString
  | { name: string }
  | { ref: [number, number] }
  | PdfValue[]
  | Map<string, PdfValue>
  | null

const MAX_DEPTH = 64

const hexValue = (byte: number) =>
  byte >= 0x30 && byte <= 0x39
    ? byte - 0x30
    : byte >= 0x41 && byte <= 0x46
      ? byte - 0x37
      : byte >= 0x61 && byte <= 0x66
        ? byte - 0x57
        : -1

const isOctal = (byte: number | undefined) => byte !== undefined && byte >= 0x30 && byte <= 0x37

/** Bytes as Latin-1 text, in slices (a spread of a megabyte of arguments overflows the stack). */
function latin1(bytes: Uint8Array): string {
  let text = ''
  for (let at = 0; at < bytes.length; at += 4096) text += String.fromCharCode(...bytes.subarray(at, at + 4096))
  return text
}

/** A PDF number (no alternative may match a digit another could: linear on a megabyte of digits and a letter). */
const NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/

/** A literal string's bytes between its parentheses, as PDFium reads them: escapes decoded, line ends kept. */
function literalStringBytes(body: Uint8Array): Uint8Array {
  const out: number[] = []
  // \n \r \t \b \f; any other escaped byte stands for itself.
  const escapes = new Map([
    [0x6e, 0x0a],
    [0x72, 0x0d],
    [0x74, 0x09],
    [0x62, 0x08],
    [0x66, 0x0c],
  ])
  for (let i = 0; i < body.length; i++) {
    const byte = body[i]!
    if (byte !== 0x5c) {
      out.push(byte)
      continue
    }
    const next = body[++i]
    if (next === undefined) break
    if (isOctal(next)) {
      let code = next - 0x30
      for (let digits = 1; digits < 3 && isOctal(body[i + 1]); digits++) code = code * 8 + body[++i]! - 0x30
      out.push(code & 0xff)
    } else if (next === 0x0d) {
      if (body[i + 1] === 0x0a) i++ // a line continued: backslash, end of line
    } else if (next !== 0x0a) out.push(escapes.get(next) ?? next)
  }
  return Uint8Array.from(out)
}

/** A hex string's bytes: digits in pairs, anything else skipped, an odd last digit followed by 0. */
function hexStringBytes(body: Uint8Array): Uint8Array {
  const out: number[] = []
  let high = -1
  for (const byte of body) {
    const value = hexValue(byte)
    if (value < 0) continue
    if (high < 0) high = value
    else {
      out.push((high << 4) | value)
      high = -1
    }
  }
  if (high >= 0) out.push(high << 4)
  return Uint8Array.from(out)
}

/**
 * A small reader of PDF objects (enough for stream, trailer and encryption dictionaries): strings, names, numbers,
 * booleans, arrays, dictionaries. Strings are skipped unless `keepStrings` (then read as PDFium reads them).
 */
export class ObjectReader {
  at: number
  constructor(
    readonly bytes: Uint8Array,
    start: number,
    readonly end: number,
    readonly keepStrings = false,
  ) {
    this.at = start
  }

  skipWhite(): void {
    const { bytes } = this
    while (this.at < this.end) {
      const byte = bytes[this.at]!
      if (isWhite(byte)) this.at++
      else if (byte === 0x25)
        while (this.at < this.end && bytes[this.at] !== 0x0a && bytes[this.at] !== 0x0d) this.at++ // comment
      else return
    }
  }

  private fail(what: string): never {
    throw new PdfStreamSyntaxError(`${what} at byte ${this.at}`)
  }

  private regularRun(): string {
    const start = this.at
    while (this.at < this.end && isRegular(this.bytes[this.at])) this.at++
    return latin1(this.bytes.subarray(start, this.at))
  }

  value(depth = 0): PdfValue {
    if (depth > MAX_DEPTH) this.fail('nesting too deep')
    this.skipWhite()
    const { bytes } = this
    const byte = bytes[this.at]
    if (byte === undefined || this.at >= this.end) this.fail('unexpected end')
    if (byte === 0x3c && bytes[this.at + 1] === 0x3c) return this.dictionary(depth)
    if (byte === 0x3c) {
      // Searched only up to the reader's end: each of many small values would otherwise scan to the end of the file.
      const found = bytes.subarray(this.at, this.end).indexOf(0x3e)
      if (found < 0) this.fail('unterminated hex string')
      const close = this.at + found
      const start = this.at + 1
      this.at = close + 1
      return this.keepStrings ? { bytes: hexStringBytes(bytes.subarray(start, close)) } : ''
    }
    if (byte === 0x28) return this.literalString()
    if (byte === 0x2f) {
      this.at++
      return {
        name: this.regularRun().replace(/#([0-9a-fA-F]{2})/g, (_, hex: string) =>
          String.fromCharCode(Number.parseInt(hex, 16)),
        ),
      }
    }
    if (byte === 0x5b) {
      this.at++
      const items: PdfValue[] = []
      for (;;) {
        this.skipWhite()
        if (bytes[this.at] === 0x5d) {
          this.at++
          return items
        }
        items.push(this.value(depth + 1))
      }
    }
    const word = this.regularRun()
    if (!word) this.fail(`unexpected byte ${byte}`)
    if (NUMBER.test(word)) {
      // An indirect reference: `N G R`.
      if (/^\d+$/.test(word)) {
        const save = this.at
        this.skipWhite()
        const generation = this.regularRun()
        this.skipWhite()
        if (/^\d+$/.test(generation) && bytes[this.at] === 0x52 && !isRegular(bytes[this.at + 1])) {
          this.at++
          return { ref: [Number(word), Number(generation)] }
        }
        this.at = save
      }
      return Number(word)
    }
    if (word === 'true' || word === 'false') return word === 'true'
    if (word === 'null') return null
    return this.fail(`unexpected keyword ${word.slice(0, 20)}`)
  }

  private literalString(): string | PdfString {
    const { bytes } = this
    const start = this.at
    let depth = 0
    while (this.at < this.end) {
      const byte = bytes[this.at++]!
      if (byte === 0x5c)
        this.at++ // an escape: the next byte is taken as it is
      else if (byte === 0x28) depth++
      else if (byte === 0x29 && --depth === 0)
        return this.keepStrings ? { bytes: literalStringBytes(bytes.subarray(start + 1, this.at - 1)) } : ''
    }
    return this.fail('unterminated string')
  }

  dictionary(depth: number): Map<string, PdfValue> {
    this.at += 2
    const entries = new Map<string, PdfValue>()
    for (;;) {
      this.skipWhite()
      if (this.bytes[this.at] === 0x3e && this.bytes[this.at + 1] === 0x3e) {
        this.at += 2
        return entries
      }
      const key = this.value(depth + 1)
      if (typeof key !== 'object' || key === null || !('name' in key)) this.fail('a dictionary key that is not a name')
      entries.set(key.name, this.value(depth + 1))
    }
  }
}

export const nameOf = (value: PdfValue | undefined) =>
  value && typeof value === 'object' && 'name' in value ? value.name : undefined
export const asArray = (value: PdfValue | undefined): PdfValue[] =>
  Array.isArray(value) ? value : value === undefined || value === null ? [] : [value]

export function spells(bytes: Uint8Array, at: number, word: string): boolean {
  for (let i = 0; i < word.length; i++) if (bytes[at + i] !== word.charCodeAt(i)) return false
  return true
}

const digitsAt = (bytes: Uint8Array, start: number, end: number) => Number(latin1(bytes.subarray(start, end)))

/** The object header (`N G obj`) whose `obj` is at `at`, or undefined. */
export function objectHeaderAt(
  bytes: Uint8Array,
  at: number,
): { body: number; object: number; generation: number } | undefined {
  if (bytes[at] !== 0x6f || !spells(bytes, at, 'obj') || isRegular(bytes[at + 3])) return undefined
  // Backwards: white, generation digits, white, object digits.
  let i = at - 1
  if (!isWhite(bytes[i] ?? 0x41)) return undefined
  while (i >= 0 && isWhite(bytes[i]!)) i--
  const generationEnd = i + 1
  while (i >= 0 && isDigit(bytes[i])) i--
  const generationStart = i + 1
  if (generationStart === generationEnd || !isWhite(bytes[i] ?? 0x41)) return undefined
  while (i >= 0 && isWhite(bytes[i]!)) i--
  const numberEnd = i + 1
  while (i >= 0 && isDigit(bytes[i])) i--
  if (i + 1 === numberEnd || isRegular(bytes[i])) return undefined
  return {
    body: at + 3,
    object: digitsAt(bytes, i + 1, numberEnd),
    generation: digitsAt(bytes, generationStart, generationEnd),
  }
}

/** The object headers before `limit`, nearest first (lazily: most streams need only their own). */
function* objectHeadersBefore(
  bytes: Uint8Array,
  limit: number,
): Generator<{ body: number; object: number; generation: number }> {
  for (let at = limit - 3; at >= 0; at--) {
    const header = objectHeaderAt(bytes, at)
    if (header) yield header
  }
}

/**
 * Finds indirect objects by number in the file's bytes (built on first use: few dictionaries need it). Each object
 * is parsed once, however many dictionaries name it (docs/hostile-inputs.md: shared-params.pdf). All of them
 * together stay within the file's size and a little more: only objects nested in one another's strings could pass
 * that, and such a file is refused.
 */
export class ObjectIndex {
  private bodies: Map<string, number> | undefined
  private readonly values = new Map<string, PdfValue>()
  /** Bytes read by the parses so far. */
  parsedBytes = 0
  /**
   * `keepStrings`: read strings' bytes; `maxObjectBytes`: read no object past this many bytes from its start (a
   * reader of small dictionaries bounds its work whatever the file holds).
   */
  /**
   * `bytes`: the file's; a reader in slices hands the index a new view after each pause (a WASM heap grown meanwhile
   * replaces its view).
   */
  constructor(
    public bytes: Uint8Array,
    private readonly options: { keepStrings?: boolean; maxObjectBytes?: number } = {},
  ) {}

  /**
   * The value a reference names, resolved (once: a reference to a reference is not followed). An object not in the
   * file's bytes is refused (PdfStreamSyntaxError), or undefined when `optional`.
   */
  resolve(value: PdfValue | undefined, optional = false): PdfValue | undefined {
    if (!value || typeof value !== 'object' || !('ref' in value)) return value
    const key = value.ref.join(' ')
    const known = this.values.get(key)
    if (known !== undefined) return known
    if (!this.bodies) {
      this.bodies = new Map()
      const { bytes } = this
      for (let at = bytes.indexOf(0x6f); at >= 0; at = bytes.indexOf(0x6f, at + 1)) {
        const header = objectHeaderAt(bytes, at)
        // The last one wins, as with incremental updates.
        if (header) this.bodies.set(`${header.object} ${header.generation}`, header.body)
      }
    }
    const body = this.bodies.get(key)
    if (body === undefined && optional) return undefined
    // PDFium may find it in an object stream this reader does not open: refused rather than left unmeasured.
    if (body === undefined)
      throw new PdfStreamSyntaxError(
        `object ${value.ref[0]}, which a stream dictionary names, is not in the file's bytes`,
      )
    const { bytes } = this
    const end = Math.min(bytes.length, body + (this.options.maxObjectBytes ?? bytes.length))
    const reader = new ObjectReader(bytes, body, end, this.options.keepStrings)
    let resolved: PdfValue
    try {
      resolved = reader.value()
    } finally {
      this.parsedBytes += reader.at - body
    }
    if (this.parsedBytes > bytes.length + PARSE_SLACK_BYTES) {
      throw new PdfObjectsOverlapError(
        `the objects its stream dictionaries name take more than ${bytes.length + PARSE_SLACK_BYTES} bytes to read (they overlap)`,
      )
    }
    this.values.set(key, resolved)
    return resolved
  }
}

/** The dictionary that ends at `dictEnd` (just after its `>>`), read from the object header before it. */
function streamDictionary(
  bytes: Uint8Array,
  dictEnd: number,
  work?: PdfScanWork,
): { dictionary: Map<string, PdfValue>; object: number; generation: number } | undefined {
  // The nearest header is the stream's own unless a string inside the dictionary spells one: a few are tried. A
  // dictionary that holds more headers than that is refused, so dictionaries nest at most 8 deep and all the
  // parsing here is within 8 × 8 times the file.
  let tried = 0
  for (const header of objectHeadersBefore(bytes, dictEnd)) {
    if (++tried > 8) break
    const reader = new ObjectReader(bytes, header.body, dictEnd)
    reader.skipWhite()
    if (bytes[reader.at] !== 0x3c || bytes[reader.at + 1] !== 0x3c) continue
    try {
      const dictionary = reader.dictionary(0)
      if (reader.at === dictEnd) return { dictionary, object: header.object, generation: header.generation }
    } catch (error) {
      if (!(error instanceof PdfStreamSyntaxError)) throw error
    } finally {
      if (work) work.bytesParsed += reader.at - header.body
    }
  }
  return undefined
}

/**
 * White space and comments read after /Length's bytes looking for `endstream`, at most: more (thousands of streams
 * could point into one megabyte of spaces), and the end is taken to be the file's.
 */
const MAX_GAP_BEFORE_ENDSTREAM = 4096

/**
 * Where the data end by /Length, as PDFium's ReadStream reads it:
 * - the number, when `endstream` follows it after white space and comments;
 * - 'unverified', when /Length is missing, not a whole number, or not followed by `endstream`;
 * - 'unknown', when it names an object (PDFium may find that in an object stream) or the gap is too long.
 */
function lengthEnd(bytes: Uint8Array, start: number, length: PdfValue | undefined): number | 'unverified' | 'unknown' {
  if (length && typeof length === 'object' && 'ref' in length) return 'unknown'
  if (typeof length !== 'number' || !Number.isInteger(length) || length < 0 || start + length >= bytes.length)
    return 'unverified'
  const reader = new ObjectReader(
    bytes,
    start + length,
    Math.min(bytes.length, start + length + MAX_GAP_BEFORE_ENDSTREAM),
  )
  reader.skipWhite()
  if (reader.at === reader.end && reader.end < bytes.length) return 'unknown'
  return spells(bytes, reader.at, 'endstream') ? start + length : 'unverified'
}

/** Whether `word` at `at` stands alone: white space or the file's edge on both sides (PDFium's IsWholeWord). */
const isWholeWord = (bytes: Uint8Array, at: number, word: string) =>
  spells(bytes, at, word) &&
  (at === 0 || isWhite(bytes[at - 1])) &&
  (at + word.length === bytes.length || isWhite(bytes[at + word.length]))

/** Positions of every whole `endstream` and `endobj`, in order (found once: one pass over the file). */
function endKeywords(bytes: Uint8Array): number[] {
  const found: number[] = []
  for (let at = bytes.indexOf(0x65); at >= 0; at = bytes.indexOf(0x65, at + 1)) {
    if (isWholeWord(bytes, at, 'endstream') || isWholeWord(bytes, at, 'endobj')) found.push(at)
  }
  return found
}

/** The first of `sorted` at or after `from`, or undefined. */
function firstFrom(sorted: readonly number[], from: number): number | undefined {
  let low = 0
  let high = sorted.length
  while (low < high) {
    const middle = (low + high) >>> 1
    if (sorted[middle]! < from) low = middle + 1
    else high = middle
  }
  return sorted[low]
}

/** Filters read in one chain, at most (PDFium sets no limit; no writer chains more than a few). */
const MAX_FILTERS = 16

/**
 * Every stream of the file with what PDFium decodes whole. Throws a PdfStreamSyntaxError when a stream's
 * dictionary cannot be read (PDFium would read it some way this reader cannot follow: refused, not guessed).
 */
export function findPdfStreams(bytes: Uint8Array, work?: PdfScanWork): PdfStream[] {
  const steps = findPdfStreamsInSlices(bytes, work)
  for (;;) {
    const step = steps.next()
    if (step.done) return step.value
  }
}

/**
 * A reader of the file in slices: it pauses (yields) between slices, and the caller's `next(bytes)` may hand it the
 * file's bytes anew (a WASM heap grown meanwhile replaces its view; `next()` keeps the view it has). No closure over
 * the bytes is taken: optimized code that inlined one may keep it, and its scope (a WASM heap), past the document
 * (docs/platform-limits.md, "No closure keeps a heap past its step").
 */
export type FileSlices<T> = Generator<void, T, Uint8Array | undefined>

/**
 * findPdfStreams in slices: pauses (yields) after about WORK_BYTES_PER_TURN of the file scanned and parsed (one call
 * over a large file's dictionaries is a long stretch), taking the file's bytes anew after each pause (FileSlices).
 */
export function* findPdfStreamsInSlices(bytes: Uint8Array, work?: PdfScanWork): FileSlices<PdfStream[]> {
  const streams: PdfStream[] = []
  const index = new ObjectIndex(bytes)
  const ownWork: PdfScanWork = work ?? { bytesParsed: 0, bytesFed: 0 }
  let keywords: number[] | undefined
  let sliceFrom = 0
  let parsedBefore = ownWork.bytesParsed + index.parsedBytes
  for (let at = bytes.indexOf(0x73); at >= 0; at = bytes.indexOf(0x73, at + 1)) {
    if (at - sliceFrom + ownWork.bytesParsed + index.parsedBytes - parsedBefore >= WORK_BYTES_PER_TURN) {
      bytes = (yield) ?? bytes
      index.bytes = bytes
      sliceFrom = at
      parsedBefore = ownWork.bytesParsed + index.parsedBytes
    }
    if (!spells(bytes, at, 'stream') || isRegular(bytes[at + 6])) continue
    let before = at - 1
    while (before >= 0 && isWhite(bytes[before]!)) before--
    if (bytes[before] !== 0x3e || bytes[before - 1] !== 0x3e) continue // `endstream`, or a word in text
    const found = streamDictionary(bytes, before + 1, ownWork)
    if (!found) throw new PdfStreamSyntaxError(`the dictionary of the stream at byte ${at} cannot be read`)
    const { dictionary, object, generation } = found
    // The data begins after the keyword's end of line: CR LF or LF by the standard; a lone CR, spaces before the
    // line end, or none at all by some writers. Every reading is measured.
    let lineEnd = at + 6
    while (lineEnd < bytes.length && bytes[lineEnd] === 0x20) lineEnd++
    const starts = new Set([at + 6])
    if (bytes[lineEnd] === 0x0d) starts.add(bytes[lineEnd + 1] === 0x0a ? lineEnd + 2 : lineEnd + 1).add(lineEnd + 1)
    else if (bytes[lineEnd] === 0x0a) starts.add(lineEnd + 1)
    const [first] = [...starts].sort((a, b) => b - a)
    const byLength = lengthEnd(bytes, first!, dictionary.get('Length'))
    let end = typeof byLength === 'number' ? byLength : bytes.length
    let rawEnd = end
    if (typeof byLength !== 'number') {
      keywords ??= endKeywords(bytes)
      const keyword = firstFrom(keywords, Math.min(...starts))
      // PDFium takes the end of line before the keyword off too: CR LF, else one CR or LF.
      rawEnd =
        keyword === undefined
          ? at + 6
          : keyword -
            (bytes[keyword - 2] === 0x0d && bytes[keyword - 1] === 0x0a
              ? 2
              : bytes[keyword - 1] === 0x0d || bytes[keyword - 1] === 0x0a
                ? 1
                : 0)
      if (byLength === 'unverified') end = rawEnd
    }
    const isImage = nameOf(dictionary.get('Subtype')) === 'Image'
    const type = nameOf(dictionary.get('Type'))
    const params = asArray(index.resolve(dictionary.get('DecodeParms')))
    const named = asArray(index.resolve(dictionary.get('Filter')))
    // One object may hold a long array that every stream names: never more than the limit is looked at.
    if (named.length > MAX_FILTERS)
      throw new PdfStreamSyntaxError(
        `the stream at byte ${at} names ${named.length} filters; at most ${MAX_FILTERS} are read`,
      )
    // A loop, not a closure over `index`: optimized code that inlined such a closure would keep the index, and the
    // file's bytes in a WASM heap it reads, past the document (PixelRows, engines/png/encode.ts).
    const chain: (PdfValue | undefined)[] = []
    for (const filter of named) chain.push(index.resolve(filter))
    const filters: string[] = []
    const earlyChange: number[] = []
    let isWhole = true
    for (const [position, filter] of chain.entries()) {
      // PDFium skips a /Crypt filter and decodes the rest (the document's own handler has decrypted the stream).
      if (nameOf(filter) === 'Crypt') continue
      const name = WHOLE_FILTERS[nameOf(filter) ?? '']
      if (!name) {
        isWhole = false
        break // an image codec or an unknown filter: PDFium decodes no further here
      }
      filters.push(name)
      const param = index.resolve(params[position])
      earlyChange.push(param instanceof Map && param.get('EarlyChange') === 0 ? 0 : 1)
    }
    // An image's last filter decodes line by line only when it is the chain's very last (a /Crypt after it is not).
    const last = WHOLE_FILTERS[nameOf(chain.at(-1)) ?? '']
    if (isImage && last && IMAGE_LINE_FILTERS.has(last) && isWhole) {
      filters.pop()
      earlyChange.pop()
    }
    streams.push({
      object,
      generation,
      starts: [...starts],
      end,
      filters,
      earlyChange,
      isStructure: type === 'ObjStm' || type === 'XRef',
      dictionary,
      rawEnd,
    })
  }
  ownWork.bytesParsed += index.parsedBytes
  return streams
}

/** Where a filter's output goes, a piece at a time (a piece is valid only during the call). */
export interface Sink {
  write(piece: Uint8Array): void
  end(): void
  /** The filter takes no more input (its end-of-data, or an error): the rest of the file is not fed. */
  readonly isDone?: boolean
}

const PIECE_BYTES = 64 * 1024

/** Gathers bytes into pieces of PIECE_BYTES for the next sink. */
class Output {
  // Made at the first byte: thousands of streams that decode to nothing allocate nothing.
  private buffer: Uint8Array | undefined
  private length = 0
  constructor(private readonly next: Sink) {}
  push(byte: number): void {
    this.buffer ??= new Uint8Array(PIECE_BYTES)
    this.buffer[this.length++] = byte
    if (this.length === PIECE_BYTES) this.flush()
  }
  /** Bytes copied in runs: an LZW entry is up to 4096 bytes, and a call a byte would cost more than the decoding. */
  pushAll(bytes: Uint8Array): void {
    this.buffer ??= new Uint8Array(PIECE_BYTES)
    for (let offset = 0; offset < bytes.length; ) {
      const count = Math.min(bytes.length - offset, PIECE_BYTES - this.length)
      this.buffer.set(bytes.subarray(offset, offset + count), this.length)
      this.length += count
      offset += count
      if (this.length === PIECE_BYTES) this.flush()
    }
  }
  flush(): void {
    if (this.length > 0) this.next.write(this.buffer!.subarray(0, this.length))
    this.length = 0
  }
}

function flateSink(next: Sink): Sink {
  const inflator = new pako.Inflate({ chunkSize: PIECE_BYTES })
  inflator.onData = (piece) => next.write(piece)
  // pako keeps err/ended state: a corrupt or finished zlib stream takes nothing more (PDFium keeps what it had).
  const state = inflator as unknown as { err: number; ended: boolean }
  return {
    write(piece) {
      if (!state.err && !state.ended) inflator.push(piece, false)
    },
    end() {
      if (!state.err && !state.ended) inflator.push(new Uint8Array(), true)
      next.end()
    },
    get isDone() {
      return Boolean(state.err || state.ended)
    },
  }
}

/** A filter that reads its input a byte at a time: `take` answers false at the filter's end of data. */
function byteFilter(next: Sink, take: (byte: number, out: Output) => boolean, finish?: (out: Output) => void): Sink {
  const out = new Output(next)
  let ended = false
  return {
    get isDone() {
      return ended
    },
    write(piece) {
      for (let i = 0; i < piece.length && !ended; i++) ended = !take(piece[i]!, out)
      out.flush()
    },
    end() {
      if (!ended) finish?.(out)
      out.flush()
      next.end()
    },
  }
}

/** PDF's LZW (ISO 32000-1 §7.4.4): 9–12-bit codes, 256 clears, 257 ends, EarlyChange 1 by default. */
function lzwSink(next: Sink, earlyChange: number): Sink {
  const prefix = new Int16Array(4096).fill(-1)
  const suffix = new Uint8Array(4096)
  const lengths = new Uint16Array(4096)
  const entry = new Uint8Array(4096)
  for (let i = 0; i < 256; i++) {
    suffix[i] = i
    lengths[i] = 1
  }
  let nextCode = 258
  let codeBits = 9
  let previous = -1
  let bits = 0
  let bitCount = 0
  const emit = (code: number, out: Output): void => {
    const length = lengths[code]!
    for (let i = length - 1, c = code; i >= 0; i--, c = prefix[c]!) entry[i] = suffix[c]!
    if (length < 16) for (let i = 0; i < length; i++) out.push(entry[i]!)
    else out.pushAll(entry.subarray(0, length))
  }
  const addEntry = (first: number) => {
    prefix[nextCode] = previous
    suffix[nextCode] = first
    lengths[nextCode] = lengths[previous]! + 1
    nextCode++
  }
  /** False at the end of data: code 257, or a code no table holds (PDFium stops there too). */
  const code = (value: number, out: Output): boolean => {
    if (value === 256) {
      nextCode = 258
      codeBits = 9
      previous = -1
      return true
    }
    if (value === 257 || (previous < 0 && value > 255) || value > nextCode || (value === nextCode && nextCode >= 4096))
      return false
    if (previous >= 0 && nextCode < 4096) {
      // KwKwK (the code being defined): the previous entry and its own first byte.
      let first = value < nextCode ? value : previous
      while (prefix[first]! >= 0) first = prefix[first]!
      addEntry(suffix[first]!)
    }
    emit(value, out)
    previous = value
    if (nextCode + earlyChange >= 1 << codeBits && codeBits < 12) codeBits++
    return true
  }
  return byteFilter(next, (byte, out) => {
    bits = ((bits << 8) | byte) & 0xffffff
    bitCount += 8
    while (bitCount >= codeBits) {
      bitCount -= codeBits
      if (!code((bits >>> bitCount) & ((1 << codeBits) - 1), out)) return false
    }
    return true
  })
}

/** ASCIIHexDecode: pairs of hex digits up to `>`, white space skipped, an odd last digit followed by 0. */
function asciiHexSink(next: Sink): Sink {
  let high = -1
  const finish = (out: Output) => {
    if (high >= 0) out.push(high << 4)
  }
  return byteFilter(
    next,
    (byte, out) => {
      if (byte === 0x3e) {
        finish(out)
        return false
      }
      const value = hexValue(byte)
      if (value < 0) return true // white space (other bytes are errors PDFium skips too)
      if (high < 0) high = value
      else {
        out.push((high << 4) | value)
        high = -1
      }
      return true
    },
    finish,
  )
}

/**
 * ASCII85Decode (ISO 32000-1 §7.4.3): groups of five digits '!'..'u' for four bytes, `z` for four zeros, white
 * space ignored, `~>` ends; a short last group. Any other byte is an error, and the data end there, as in PDFium's
 * A85Decode (which also takes a `z` inside a group: four zeros, the group dropped). Skipping such bytes instead read
 * thousands of streams without a /Length to the end of the file, each.
 */
function ascii85Sink(next: Sink): Sink {
  const group: number[] = []
  const finish = (out: Output) => {
    if (group.length > 1) {
      const count = group.length - 1
      while (group.length < 5) group.push(84)
      const value = group.reduce((sum, digit) => sum * 85 + digit, 0)
      for (let i = 0; i < count; i++) out.push((value >>> (24 - 8 * i)) & 0xff)
    }
    group.length = 0
  }
  return byteFilter(
    next,
    (byte, out) => {
      if (isWhite(byte)) return true
      if (byte === 0x7a) {
        group.length = 0
        for (let i = 0; i < 4; i++) out.push(0)
        return true
      }
      if (byte < 0x21 || byte > 0x75) {
        finish(out) // `~` of `~>`, or an error: the end of the data either way
        return false
      }
      group.push(byte - 0x21)
      if (group.length === 5) finish(out)
      return true
    },
    finish,
  )
}

/** RunLengthDecode: a length byte n, then n + 1 literal bytes (n < 128) or one byte 257 − n times; 128 ends. */
function runLengthSink(next: Sink): Sink {
  let literal = 0 // bytes of a literal run still to copy
  let repeat = 0 // the length byte of a repeat run whose byte is next, else 0
  return byteFilter(next, (byte, out) => {
    if (literal > 0) {
      out.push(byte)
      literal--
    } else if (repeat > 0) {
      for (let i = 0; i < 257 - repeat; i++) out.push(byte)
      repeat = 0
    } else if (byte === 128) return false
    else if (byte < 128) literal = byte + 1
    else repeat = byte
    return true
  })
}

/** Decrypts the data before the first filter (its isDone is the filter's: a finished filter takes no more). */
function decryptingSink(decryptor: StreamDecryptor, next: Sink): Sink {
  return {
    write(piece) {
      const plain = decryptor.update(piece)
      if (plain.length > 0) next.write(plain)
    },
    end() {
      const plain = decryptor.final()
      if (plain.length > 0 && !next.isDone) next.write(plain)
      next.end()
    },
    get isDone() {
      return next.isDone
    },
  }
}

class BudgetExceeded extends Error {
  constructor(readonly limit: 'stream' | 'document') {
    super(limit)
  }
}

/** Counts a filter's output against the stream's and the document's budgets, then passes it on. */
function countingSink(next: Sink | undefined, maxStreamBytes: number, total: { bytes: number; max: number }): Sink {
  let bytes = 0
  return {
    write(piece) {
      bytes += piece.length
      total.bytes += piece.length
      if (bytes > maxStreamBytes) throw new BudgetExceeded('stream')
      if (total.bytes > total.max) throw new BudgetExceeded('document')
      next?.write(piece)
    },
    end: () => next?.end(),
  }
}

function filterSink(filter: string, next: Sink, earlyChange: number): Sink {
  switch (filter) {
    case 'FlateDecode':
      return flateSink(next)
    case 'LZWDecode':
      return lzwSink(next, earlyChange)
    case 'ASCIIHexDecode':
      return asciiHexSink(next)
    case 'ASCII85Decode':
      return ascii85Sink(next)
    default:
      return runLengthSink(next)
  }
}

/** RFC 1950: deflate (CM 8) with a window of at most 32 KiB, and a header check that divides by 31. */
const isZlibHeader = (cmf = 0, flg = 0) => (cmf & 0x0f) === 8 && cmf >> 4 <= 7 && (cmf * 256 + flg) % 31 === 0

/**
 * Input fed to the first filter at a time, at most. Once a stream is seen to expand, the next piece is smaller:
 * sized from the output per input byte so far to give about OUTPUT_PIECE_BYTES. So one piece of a bomb never
 * decodes to much more than that. Deflate expands up to 1032:1, LZW up to ~2700:1 (12-bit codes for 4096-byte
 * entries): 1–2.6 MiB for a KiB.
 */
const INPUT_PIECE_BYTES = 1024
const MIN_INPUT_PIECE_BYTES = 16
const OUTPUT_PIECE_BYTES = 128 * 1024

/**
 * Bytes read and decoded between two pauses of measurePdfStreams. A bomb is measured up to its budget in slices,
 * with a turn of the event loop between them.
 */
export const WORK_BYTES_PER_TURN = 256 * 1024

/** The next input piece: about OUTPUT_PIECE_BYTES of output at the rate the stream has shown so far. */
function nextPieceBytes(inputBytes: number, outputBytes: number): number {
  if (outputBytes <= inputBytes) return INPUT_PIECE_BYTES
  return Math.max(
    MIN_INPUT_PIECE_BYTES,
    Math.min(INPUT_PIECE_BYTES, Math.floor((OUTPUT_PIECE_BYTES * inputBytes) / outputBytes)),
  )
}

/**
 * Bytes all the streams of one call may feed their filters, taking for each stream its longest reading: twice the
 * file and a little more. Streams that do not overlap feed at most the file; only data read past where a stream
 * ends (a /Length that names an object and a filter that never ends) passes it, and such a file is refused.
 */
const fedLimit = (fileBytes: number) => 2 * fileBytes + 64 * 1024

/** A reader of streams' decoded data besides the count: `open` gives a sink for each reading of a stream it wants. */
export interface StreamObserver {
  wants(stream: PdfStream): boolean
  open(stream: PdfStream): Sink
}

const overlapping = (maxFed: number) =>
  new PdfStreamSyntaxError(
    `its streams' data overlap: read as PDFium may read them, they run past ${maxFed} bytes in all (twice the file)`,
  )

/**
 * Runs each stream's filter chain, counting every filter's output and keeping none. Returns the bytes counted.
 * Throws a PdfStreamTooLargeError as soon as one stream or all of them (with `alreadyBytes` counted before) pass
 * the budget. Throws a PdfStreamSyntaxError when the streams together feed their filters more than fedLimit, so
 * the work is linear in the file: at most fedLimit for each reading of a stream, and its output within the budget.
 * Pauses (yields) after every WORK_BYTES_PER_TURN of work, taking the file's bytes anew after each (FileSlices).
 */
export function* measurePdfStreams(
  bytes: Uint8Array,
  streams: readonly PdfStream[],
  budget: StreamBudget,
  alreadyBytes = 0,
  decryptions: readonly PdfDecryption[] = [],
  scanWork?: PdfScanWork,
  observer?: StreamObserver,
): FileSlices<number> {
  const maxFed = fedLimit(bytes.length)
  let fed = 0 // each measured stream's longest reading, added up
  const total = { bytes: alreadyBytes, max: budget.maxTotalBytes }
  let work = 0
  let counted = total.bytes
  // An encrypted document's streams are read as they are and decrypted with each key the document opens with:
  // PDFium leaves some streams as they are (cross-reference streams, /Identity, clear metadata).
  const readings = [undefined, ...decryptions]
  for (const stream of streams) {
    if (stream.filters.length === 0) {
      // Data without filters is only read by an observer: as it is, and decrypted with each key.
      if (!observer?.wants(stream)) continue
      let longest = 0
      for (const [start, decryption] of stream.starts.flatMap((start) =>
        readings.map((decryption) => [start, decryption] as const),
      )) {
        const reader = observer.open(stream)
        const sink = decryption
          ? decryptingSink(decryption.forStream(stream.object, stream.generation), reader)
          : reader
        for (let at = start; at < stream.rawEnd; ) {
          const end = Math.min(stream.rawEnd, at + PIECE_BYTES)
          if (fed + Math.max(longest, end - start) > maxFed) throw overlapping(maxFed)
          sink.write(bytes.subarray(at, end))
          longest = Math.max(longest, end - start)
          work += end - at
          at = end
          if (work >= WORK_BYTES_PER_TURN) {
            work = 0
            bytes = (yield) ?? bytes
          }
        }
        sink.end()
      }
      fed += longest
      continue
    }
    // Each reading of where the data starts (and with which key) is measured; the largest counts (the others fail
    // at once).
    let largest = 0
    let longest = 0
    for (const [start, decryption] of stream.starts.flatMap((start) =>
      readings.map((decryption) => [start, decryption] as const),
    )) {
      // A zlib stream that does not start with a zlib header is refused by PDFium's inflate at once: so here.
      if (!decryption && stream.filters[0] === 'FlateDecode' && !isZlibHeader(bytes[start], bytes[start + 1])) continue
      const before = total.bytes
      let sink: Sink = countingSink(
        observer?.wants(stream) ? observer.open(stream) : undefined,
        budget.maxStreamBytes,
        total,
      )
      for (let i = stream.filters.length - 1; i >= 0; i--) {
        sink = filterSink(stream.filters[i]!, sink, stream.earlyChange[i]!)
        if (i > 0) sink = countingSink(sink, budget.maxStreamBytes, total)
      }
      if (decryption) sink = decryptingSink(decryption.forStream(stream.object, stream.generation), sink)
      try {
        let piece = INPUT_PIECE_BYTES
        for (let at = start; at < stream.end && !sink.isDone; ) {
          const end = Math.min(stream.end, at + piece)
          if (fed + Math.max(longest, end - start) > maxFed) throw overlapping(maxFed)
          if (scanWork) scanWork.bytesFed += end - at
          sink.write(bytes.subarray(at, end))
          longest = Math.max(longest, end - start)
          const output = Math.abs(total.bytes - counted)
          work += end - at + output
          counted = total.bytes
          piece = nextPieceBytes(end - at, output)
          at = end
          if (work >= WORK_BYTES_PER_TURN) {
            work = 0
            bytes = (yield) ?? bytes
          }
        }
        sink.end()
      } catch (error) {
        if (!(error instanceof BudgetExceeded)) throw error
        const what = stream.object ? `object ${stream.object}'s stream` : 'a stream'
        if (error.limit === 'stream')
          throw new PdfStreamTooLargeError(
            `${what} decodes to more than ${budget.maxStreamBytes} bytes`,
            'stream',
            budget.maxStreamBytes,
          )
        throw new PdfStreamTooLargeError(
          `the PDF's streams decode to more than ${budget.maxTotalBytes} bytes`,
          'document',
          budget.maxTotalBytes,
        )
      }
      largest = Math.max(largest, total.bytes - before)
      total.bytes = before
    }
    total.bytes += largest
    fed += longest
  }
  return total.bytes - alreadyBytes
}
