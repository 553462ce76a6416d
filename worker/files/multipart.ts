// A streaming multipart/form-data reader: the file part comes out in turns while the request body is still
// arriving, so an upload never sits whole in memory (Request.formData() would buffer it). Small text fields
// before the file are collected; whatever follows the file part is not read. The body is read in reused blocks
// (blocks.ts), and the file's bytes come out as views of those blocks, never copied: only the few bytes kept at
// a block's end (they could start the delimiter) are copied before the next block is read over them.
import { ApiError } from '../errors'
import { type BlockSource, concatBytes, readRequestBody } from './blocks'

export interface MultipartFile {
  readonly filename: string
  readonly contentType: string
  /** The file's bytes: views valid until the next read (BlockSource). */
  readonly blocks: BlockSource
}

export interface MultipartUpload {
  /** Text fields that came before the file part. */
  readonly fields: Readonly<Record<string, string>>
  readonly file: MultipartFile
}

const HEADER_MAX_BYTES = 16 * 1024
const FIELDS_MAX_BYTES = 64 * 1024
const encoder = new TextEncoder()
const bad = (message: string) => new ApiError('BAD_MULTIPART', { message })

export function multipartBoundary(contentType: string | undefined): string | undefined {
  if (!contentType || !/^multipart\/form-data\s*;/i.test(contentType)) return undefined
  const match = /;\s*boundary=(?:"([^"]{1,70})"|([^;\s]{1,70}))/i.exec(contentType)
  return match?.[1] ?? match?.[2]
}

function indexOf(haystack: Uint8Array, needle: Uint8Array, from = 0): number {
  const first = needle[0]!
  for (
    let i = haystack.indexOf(first, from);
    i >= 0 && i <= haystack.length - needle.length;
    i = haystack.indexOf(first, i + 1)
  ) {
    let j = 1
    while (j < needle.length && haystack[i + j] === needle[j]) j++
    if (j === needle.length) return i
  }
  return -1
}

/** A Content-Disposition parameter (RFC 6266: `name*=UTF-8''…` before `name=`). */
export function dispositionParam(header: string, name: string): string | undefined {
  const star = new RegExp(`;\\s*${name}\\*=(?:UTF-8|utf-8)''([^;]*)`).exec(header)
  if (star) {
    try {
      return decodeURIComponent(star[1]!)
    } catch {}
  }
  const match = new RegExp(`;\\s*${name}="((?:[^"\\\\]|\\\\.)*)"|;\\s*${name}=([^;\\s]*)`).exec(header)
  return match ? (match[1]?.replace(/\\(.)/g, '$1') ?? match[2]) : undefined
}

/**
 * Reads the body up to the part named `fieldName` and returns it as a stream. 400 for a body that is not
 * multipart, is malformed, or has no such part.
 */
export async function readMultipartFile(
  body: ReadableStream<Uint8Array> | null,
  contentType: string | undefined,
  fieldName = 'file',
): Promise<MultipartUpload> {
  const boundary = multipartBoundary(contentType)
  if (!boundary || !body) throw bad('expected a multipart/form-data body with the file in the field "file"')
  const source = readRequestBody(body)
  const delimiter = encoder.encode(`\r\n--${boundary}`)
  // The first boundary has no CRLF before it: pretend there was one.
  let buffer: Uint8Array = encoder.encode('\r\n')
  let ended = false

  /** More of the body after `buffer`, joined into a copy (the block under `buffer` is read over next). */
  const fill = async (): Promise<boolean> => {
    if (ended) return false
    const kept = buffer.slice()
    const value = await source.read()
    if (!value) {
      ended = true
      buffer = kept
      return false
    }
    buffer = kept.length === 0 ? value : concatBytes(kept, value)
    return true
  }

  /** Consumes everything up to and including the next delimiter; the bytes before it are discarded. */
  const skipToDelimiter = async (limit: number): Promise<Uint8Array> => {
    let at = indexOf(buffer, delimiter)
    while (at < 0) {
      if (buffer.length > limit + delimiter.length) throw bad('a form field is too large')
      if (!(await fill())) throw bad('the multipart body ended early')
      at = indexOf(buffer, delimiter)
    }
    const before = buffer.subarray(0, at)
    buffer = buffer.subarray(at + delimiter.length)
    return before
  }

  const fields: Record<string, string> = {}
  let fieldBytes = 0
  await skipToDelimiter(FIELDS_MAX_BYTES)
  for (;;) {
    while (buffer.length < 2 && (await fill()));
    if (buffer[0] === 0x2d && buffer[1] === 0x2d) break // "--": the closing boundary
    let headerEnd = indexOf(buffer, encoder.encode('\r\n\r\n'))
    while (headerEnd < 0) {
      if (buffer.length > HEADER_MAX_BYTES) throw bad('part headers are too large')
      if (!(await fill())) throw bad('the multipart body ended early')
      headerEnd = indexOf(buffer, encoder.encode('\r\n\r\n'))
    }
    const headers = new TextDecoder().decode(buffer.subarray(0, headerEnd)).split('\r\n').slice(1)
    buffer = buffer.subarray(headerEnd + 4)
    const header = (name: string) =>
      headers
        .find((line) => line.toLowerCase().startsWith(`${name}:`))
        ?.slice(name.length + 1)
        .trim()
    const disposition = header('content-disposition') ?? ''
    const name = dispositionParam(disposition, 'name')
    const filename = dispositionParam(disposition, 'filename')
    if (name === fieldName && filename !== undefined) {
      return {
        fields,
        file: { filename, contentType: header('content-type') ?? 'application/octet-stream', blocks: partBlocks() },
      }
    }
    const value = await skipToDelimiter(FIELDS_MAX_BYTES - fieldBytes)
    fieldBytes += value.length
    if (name && filename === undefined) fields[name] = new TextDecoder().decode(value)
  }
  throw bad('the multipart body has no file in the field "file"')

  /** The file part's bytes up to the delimiter; a body that ends before it is a 400. */
  function partBlocks(): BlockSource {
    let done = false
    const finish = async (fileBytes: Uint8Array) => {
      done = true
      // What follows the file part is not read.
      await source.cancel()
      return fileBytes.length > 0 ? fileBytes : undefined
    }
    const read = async (): Promise<Uint8Array | undefined> => {
      for (;;) {
        if (done) return undefined
        const at = indexOf(buffer, delimiter)
        if (at >= 0) return finish(buffer.subarray(0, at))
        // Everything but a tail that could be the start of the delimiter is file content.
        const safe = buffer.length - (delimiter.length - 1)
        if (safe > 0) {
          const fileBytes = buffer.subarray(0, safe)
          buffer = buffer.subarray(safe)
          return fileBytes
        }
        // The tail is copied: its block is read over by the next read.
        const kept = buffer.slice()
        const value = await source.read()
        if (!value) {
          done = true
          throw bad('the upload ended before the file was complete')
        }
        if (value.length < delimiter.length) {
          buffer = concatBytes(kept, value)
          continue
        }
        // Look for a delimiter that starts in the kept tail across the junction (a few bytes joined), then go on
        // with the new block itself, uncopied.
        const junction = indexOf(concatBytes(kept, value.subarray(0, delimiter.length - 1)), delimiter)
        if (junction >= 0 && junction < kept.length) return finish(kept.subarray(0, junction))
        buffer = value
        if (kept.length > 0) return kept
      }
    }
    return {
      read,
      cancel: async (reason) => {
        done = true
        await source.cancel(reason)
      },
    }
  }
}
