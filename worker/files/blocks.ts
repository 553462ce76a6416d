// Upload bytes read in turns from a small ring of reused blocks. workerd hands a request body to JavaScript in
// 4 KiB reads unless asked for more; a BYOB reader's readAtLeast fills a whole block natively. A fresh block per
// read would make as many short-lived bytes as the upload, which V8 frees late (docs/benchmarks.md, "Files").
// Two blocks: the one the caller holds, and the next one, filled from the socket meanwhile.
import { ApiError } from '../errors'

/**
 * Bytes in turns. A view answered by read() is the caller's until its next read() or cancel(), when its memory may
 * be filled again. So a caller awaits every write of a view before reading on, and copies what it keeps.
 * read() answers undefined at the end (and again after it).
 */
export interface BlockSource {
  read(): Promise<Uint8Array | undefined>
  cancel(reason?: unknown): Promise<void>
}

export const BLOCK_BYTES = 512 * 1024
/** Each read waits for at least this much (but the last): fewer, bigger turns of JavaScript. */
const BLOCK_MIN_BYTES = 128 * 1024

/** A body that breaks off (the client went away, or sent less than its Content-Length) is a client error. */
const incomplete = (cause: unknown) =>
  new ApiError('UPLOAD_INCOMPLETE', { message: 'the request body ended before its declared length', cause })

/**
 * A request body as blocks of up to BLOCK_BYTES from two reused buffers. A stream without BYOB reads (one made
 * in JavaScript) is answered chunk by chunk as it comes, its chunks not reused.
 */
export function readRequestBody(body: ReadableStream<Uint8Array>): BlockSource {
  let reader: ReadableStreamBYOBReader
  try {
    reader = body.getReader({ mode: 'byob' })
  } catch {
    return readChunks(body, incomplete)
  }
  const fill = (buffer: ArrayBuffer) => {
    const filling = reader.readAtLeast(BLOCK_MIN_BYTES, new Uint8Array(buffer))
    // Heard when awaited by read(); a fill nobody awaits (after cancel) must not be an unhandled rejection.
    filling.catch(() => {})
    return filling
  }
  let filling: ReturnType<typeof fill> | undefined = fill(new ArrayBuffer(BLOCK_BYTES))
  /** The buffer of the view the caller holds: free again at its next read(). */
  let held: ArrayBuffer | undefined
  const read = async (): Promise<Uint8Array | undefined> => {
    if (!filling) return undefined
    const released = held
    held = undefined
    let result: Awaited<ReturnType<typeof fill>>
    try {
      result = await filling
    } catch (error) {
      filling = undefined
      throw incomplete(error)
    }
    const { done, value } = result
    // readAtLeast transferred the buffer it was given: the view's buffer is the same memory under a new name.
    filling = done ? undefined : fill(released ?? new ArrayBuffer(BLOCK_BYTES))
    if (!value || value.byteLength === 0) return filling ? read() : undefined
    held = value.buffer
    return value
  }
  return {
    read,
    async cancel(reason) {
      filling = undefined
      await reader.cancel(reason).catch(() => {})
    },
  }
}

/**
 * A stream's chunks as they come (each is the caller's to keep); `describe` turns a failed read into the error heard.
 */
export function readChunks(
  stream: ReadableStream<Uint8Array>,
  describe: (error: unknown) => unknown = (error) => error,
): BlockSource {
  const reader = stream.getReader()
  let ended = false
  return {
    async read() {
      if (ended) return undefined
      try {
        const { done, value } = await reader.read()
        if (done) ended = true
        return value
      } catch (error) {
        ended = true
        throw describe(error)
      }
    },
    async cancel(reason) {
      ended = true
      await reader.cancel(reason).catch(() => {})
    },
  }
}

/** The source with `head` answered first (bytes already read from it, still valid until its next read). */
export function prependBlock(head: Uint8Array | undefined, source: BlockSource): BlockSource {
  let first = head && head.byteLength > 0 ? head : undefined
  return {
    async read() {
      if (!first) return source.read()
      const block = first
      first = undefined
      return block
    },
    cancel: (reason) => source.cancel(reason),
  }
}

export function concatBytes(a: Uint8Array, b: Uint8Array): Uint8Array {
  const joined = new Uint8Array(a.length + b.length)
  joined.set(a)
  joined.set(b, a.length)
  return joined
}
