// A streaming multipart/form-data reader: the file part comes out as a stream while the request body is still
// arriving, so an upload never sits whole in memory (Request.formData() would buffer it). Small text fields
// before the file are collected; whatever follows the file part is not read. The body is read in blocks of up to
// BLOCK_BYTES (workerd hands a request body over in 4 KiB reads: 25 600 JavaScript turns for 100 MiB, the cost of
// the upload path before), and the file's bytes come out as views of those blocks, never copied.
import { ApiError } from '../errors'

export interface MultipartFile {
  readonly filename: string
  readonly contentType: string
  readonly stream: ReadableStream<Uint8Array>
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

/** Reads of a request body: at least BLOCK_MIN_BYTES each (but the last), into fresh buffers of BLOCK_BYTES. */
const BLOCK_BYTES = 512 * 1024
const BLOCK_MIN_BYTES = 128 * 1024

/**
 * The same bytes in blocks of up to BLOCK_BYTES, read with a BYOB reader's readAtLeast (workerd fills the block
 * from the socket natively); a stream without BYOB reads (one made in JavaScript) is answered as it is.
 */
export function blockStream(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  let reader: ReadableStreamBYOBReader
  try {
    reader = body.getReader({ mode: 'byob' })
  } catch {
    return body
  }
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        // A body that breaks off (the client went away, or sent less than its Content-Length) is a client error.
        const { done, value } = await reader.readAtLeast(BLOCK_MIN_BYTES, new Uint8Array(BLOCK_BYTES)).catch((error) => {
          throw new ApiError('UPLOAD_INCOMPLETE', { message: 'the request body ended before its declared length', cause: error })
        })
        if (value && value.byteLength > 0) controller.enqueue(value)
        if (done) controller.close()
      },
      cancel: (reason) => reader.cancel(reason),
    },
    { highWaterMark: 0 },
  )
}

export function multipartBoundary(contentType: string | undefined): string | undefined {
  if (!contentType || !/^multipart\/form-data\s*;/i.test(contentType)) return undefined
  const match = /;\s*boundary=(?:"([^"]{1,70})"|([^;\s]{1,70}))/i.exec(contentType)
  return match?.[1] ?? match?.[2]
}

function indexOf(haystack: Uint8Array, needle: Uint8Array, from = 0): number {
  const first = needle[0]!
  for (let i = haystack.indexOf(first, from); i >= 0 && i <= haystack.length - needle.length; i = haystack.indexOf(first, i + 1)) {
    let j = 1
    while (j < needle.length && haystack[i + j] === needle[j]) j++
    if (j === needle.length) return i
  }
  return -1
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b
  const joined = new Uint8Array(a.length + b.length)
  joined.set(a)
  joined.set(b, a.length)
  return joined
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
export async function readMultipartFile(body: ReadableStream<Uint8Array> | null, contentType: string | undefined, fieldName = 'file'): Promise<MultipartUpload> {
  const boundary = multipartBoundary(contentType)
  if (!boundary || !body) throw bad('expected a multipart/form-data body with the file in the field "file"')
  const reader = blockStream(body).getReader()
  const delimiter = encoder.encode(`\r\n--${boundary}`)
  // The first boundary has no CRLF before it: pretend there was one.
  let buffer: Uint8Array = encoder.encode('\r\n')
  let ended = false

  const fill = async (): Promise<boolean> => {
    if (ended) return false
    const { done, value } = await reader.read()
    if (done) {
      ended = true
      return false
    }
    buffer = concat(buffer, value)
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
    const header = (name: string) => headers.find((line) => line.toLowerCase().startsWith(`${name}:`))?.slice(name.length + 1).trim()
    const disposition = header('content-disposition') ?? ''
    const name = dispositionParam(disposition, 'name')
    const filename = dispositionParam(disposition, 'filename')
    if (name === fieldName && filename !== undefined) {
      return { fields, file: { filename, contentType: header('content-type') ?? 'application/octet-stream', stream: partStream() } }
    }
    const value = await skipToDelimiter(FIELDS_MAX_BYTES - fieldBytes)
    fieldBytes += value.length
    if (name && filename === undefined) fields[name] = new TextDecoder().decode(value)
  }
  throw bad('the multipart body has no file in the field "file"')

  function partStream(): ReadableStream<Uint8Array> {
    let done = false
    const finish = async (controller: ReadableStreamDefaultController<Uint8Array>, fileBytes: Uint8Array) => {
      if (fileBytes.length > 0) controller.enqueue(fileBytes)
      done = true
      controller.close()
      await reader.cancel().catch(() => {})
    }
    return new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          for (;;) {
            if (done) return
            const at = indexOf(buffer, delimiter)
            if (at >= 0) return finish(controller, buffer.subarray(0, at))
            // Everything but a tail that could be the start of the delimiter is file content.
            const safe = buffer.length - (delimiter.length - 1)
            if (safe > 0) {
              controller.enqueue(buffer.subarray(0, safe))
              buffer = buffer.subarray(safe)
              return
            }
            const { done: ended, value } = await reader.read()
            if (ended) {
              done = true
              controller.error(bad('the upload ended before the file was complete'))
              return
            }
            if (value.length < delimiter.length) {
              buffer = concat(buffer, value)
              continue
            }
            // The kept tail is shorter than the delimiter: look for one starting in it across the junction (a few
            // bytes joined), then go on with the new block itself, uncopied.
            const junction = indexOf(concat(buffer, value.subarray(0, delimiter.length - 1)), delimiter)
            if (junction >= 0 && junction < buffer.length) return finish(controller, buffer.subarray(0, junction))
            if (buffer.length > 0) controller.enqueue(buffer)
            buffer = value
            return
          }
        },
        cancel: (reason) => reader.cancel(reason),
      },
      { highWaterMark: 0 },
    )
  }
}
