// Inflating an image's compressed data (PNG's IDAT stream, a TIFF's Deflate strip) straight into the buffer its
// rows go to, with the runtime's native zlib (DecompressionStream) fed in small pieces and a turn of the event loop
// every WORK_BYTES_PER_TURN of output. One call over a 12 MP picture would hold every other request of the isolate
// (docs/platform-limits.md). The output stops at the target's size, so a bomb never inflates further.
import { inflateRawSync, inflateSync } from 'node:zlib'
import pako from 'pako'
import { workTurns, yieldToEventLoop } from '../event-loop'

/**
 * Input handed to the decompressor at a time, sized from the output each input byte made so far, so that a piece
 * makes about WORK_BYTES_PER_TURN. A bomb (Deflate expands at most 1032:1) goes in 1 KiB pieces, ~1 MiB each; a
 * photo's data in 64 KiB pieces (fewer turns).
 */
const MIN_PIECE_BYTES = 1024
const MAX_PIECE_BYTES = 64 * 1024
/** Output read from the decompressor at a time, into the one buffer it is read into. */
const READ_BYTES = 256 * 1024
/** Output between two turns of the event loop: a few milliseconds of inflating. */
export const WORK_BYTES_PER_TURN = 1024 * 1024

/**
 * Targets up to this size (a 1 MP screenshot's 3 MiB of rows) are inflated in one native call first, with the
 * output capped at the target's size. Piece by piece, a stream that small costs more in turns than in inflating
 * (docs/benchmarks.md, "Engine constants"). Data the one call cannot finish within the target (corrupt, truncated,
 * longer) goes the piecewise way, which says how far it got and why it stopped.
 */
const ONE_CALL_BYTES = 4 * 1024 * 1024

/** Deflate's largest expansion: 258 bytes from a length code and a distance code of 2 bits at best. */
const DEFLATE_MAX_RATIO = 1032

/** zlib's flush mode that hands out all the output so far (pako takes zlib's numbers). */
const Z_SYNC_FLUSH = 2

export interface Inflated {
  /** Bytes written to the target. */
  readonly length: number
  /** The data held more than the target takes (it was cut there). */
  readonly isCut: boolean
  /** Why the decompressor stopped before the end of the data (corrupt or truncated data), if it did. */
  readonly error?: Error
}

/**
 * Inflates `pieces` (one zlib or raw Deflate stream split anywhere) into `target`, from its start. The decompressor
 * works ahead of its reader (it inflates whatever it is given), so each input piece is given only once the output
 * of the ones before has been read: a bomb's output never piles up beyond one piece's.
 */
export async function inflateInto(
  pieces: readonly Uint8Array[],
  format: 'deflate' | 'deflate-raw',
  target: Uint8Array,
): Promise<Inflated> {
  if (target.length <= ONE_CALL_BYTES) {
    const whole = inflateWhole(pieces, format, target.length)
    if (whole instanceof Uint8Array) {
      target.set(whole)
      return { length: whole.length, isCut: false }
    }
    // Corrupt, cut short or larger than the target: at most the target, at once. A DecompressionStream has a fixed
    // cost to make and tear down, and a turn of the event loop a piece; a TIFF may have 20,000 such strips.
    return inflateSmall(pieces, format, target)
  }
  return inflateInPieces(pieces, format, target.length, (chunk, at) => target.set(chunk, at))
}

/**
 * Inflates `pieces` into `sink`, which takes each piece of output as it comes: a view valid during the call, at
 * `at` bytes from the start, at most `maxBytes` in all. For a reader that keeps only a band of the output (a PNG's
 * rows downscaled as they come) instead of a target for the whole of it. The inflating waits for a sink that
 * answers a promise; a sink that throws stops it (its error is the answer's).
 */
type Sink = (chunk: Uint8Array, at: number) => void | Promise<void>

export async function inflateToSink(
  pieces: readonly Uint8Array[],
  format: 'deflate' | 'deflate-raw',
  maxBytes: number,
  sink: Sink,
): Promise<Inflated> {
  if (maxBytes <= ONE_CALL_BYTES) {
    const target = new Uint8Array(maxBytes)
    const inflated = await inflateInto(pieces, format, target)
    try {
      await sink(target.subarray(0, inflated.length), 0)
    } catch (error) {
      return { ...inflated, error: inflated.error ?? (error as Error) }
    }
    return inflated
  }
  return inflateInPieces(pieces, format, maxBytes, sink)
}

/**
 * The whole stream inflated in one native call; 'larger' when it inflates to more than `limit` bytes (a bomb, or
 * data after the rows), 'failed' when it is corrupt or ends early.
 */
function inflateWhole(
  pieces: readonly Uint8Array[],
  format: 'deflate' | 'deflate-raw',
  limit: number,
): Uint8Array | 'larger' | 'failed' {
  const input = pieces.length === 1 ? pieces[0]! : concat(pieces)
  try {
    const output = (format === 'deflate' ? inflateSync : inflateRawSync)(input, { maxOutputLength: Math.max(1, limit) })
    return output.length <= limit ? output : 'larger'
  } catch (error) {
    return error instanceof RangeError ? 'larger' : 'failed'
  }
}

/**
 * A stream the one call could not finish within a small target, inflated with pako, synchronously (the one call's
 * bound: at most the target). Pieces are flushed one by one, so what precedes a fault is kept as the piecewise way
 * keeps it. A piece is at most 1 KiB of input, and at most what inflates, at Deflate's largest ratio (1032:1), to
 * what the target still takes plus 1 KiB (one byte at the least). So a bomb inflates at most 2 KiB past the target.
 */
function inflateSmall(pieces: readonly Uint8Array[], format: 'deflate' | 'deflate-raw', target: Uint8Array): Inflated {
  const inflator = new pako.Inflate({ raw: format === 'deflate-raw', chunkSize: 64 * 1024 })
  let length = 0
  let isCut = false
  inflator.onData = (chunk) => {
    const taken = Math.min(chunk.length, target.length - length)
    target.set(chunk.subarray(0, taken), length)
    length += taken
    if (taken < chunk.length) isCut = true
  }
  const input = new PieceReader(pieces)
  while (!isCut && !inflator.err && !inflator.ended) {
    const piece = input.read(
      Math.max(1, Math.min(MIN_PIECE_BYTES, Math.floor((target.length - length + 1024) / DEFLATE_MAX_RATIO))),
    )
    if (!piece) break
    inflator.push(piece, Z_SYNC_FLUSH)
  }
  if (isCut) return { length, isCut }
  if (inflator.err) return { length, isCut, error: new Error(inflator.msg || `inflate error ${inflator.err}`) }
  return inflator.ended
    ? { length, isCut }
    : { length, isCut, error: new Error('the compressed data end before their end (truncated)') }
}

function concat(pieces: readonly Uint8Array[]): Uint8Array {
  const whole = new Uint8Array(pieces.reduce((sum, piece) => sum + piece.length, 0))
  let at = 0
  for (const piece of pieces) {
    whole.set(piece, at)
    at += piece.length
  }
  return whole
}

/**
 * The pieces read as one stream, `size` bytes at a time: a view when the bytes lie in one piece, a copy when they
 * span several. Each read is a write and a turn of the event loop, so a PNG of a million one-byte IDAT chunks makes
 * as few reads as one of a single chunk, not a million.
 */
class PieceReader {
  private index = 0
  private at = 0
  constructor(private readonly pieces: readonly Uint8Array[]) {}

  read(size: number): Uint8Array | undefined {
    while (this.index < this.pieces.length && this.at >= this.pieces[this.index]!.length) {
      this.index++
      this.at = 0
    }
    const piece = this.pieces[this.index]
    if (!piece) return undefined
    if (piece.length - this.at >= size) {
      this.at += size
      return piece.subarray(this.at - size, this.at)
    }
    const out = new Uint8Array(size)
    let length = 0
    while (length < size && this.index < this.pieces.length) {
      const current = this.pieces[this.index]!
      const taken = Math.min(size - length, current.length - this.at)
      out.set(current.subarray(this.at, this.at + taken), length)
      length += taken
      this.at += taken
      if (this.at >= current.length) {
        this.index++
        this.at = 0
      }
    }
    return out.subarray(0, length)
  }
}

async function inflateInPieces(
  pieces: readonly Uint8Array[],
  format: 'deflate' | 'deflate-raw',
  maxBytes: number,
  sink: Sink,
): Promise<Inflated> {
  const stream = new DecompressionStream(format)
  const writer = stream.writable.getWriter()
  // Read into one buffer, handed back and forth (a BYOB reader). The decompressor's own chunks would each be a new
  // ArrayBuffer: garbage the size of the picture's rows, held until a collection.
  const reader = stream.readable.getReader({ mode: 'byob' })
  let buffer = new ArrayBuffer(READ_BYTES)
  const turn = workTurns(WORK_BYTES_PER_TURN)
  let length = 0
  let made = 0
  let given = 0
  let isCut = false
  let error: Error | undefined
  /** The reader waits for output: everything inflated so far has been read. */
  let isWaiting = false
  const reading = (async () => {
    try {
      for (;;) {
        isWaiting = true
        const { done, value } = await reader.read(new Uint8Array(buffer))
        isWaiting = false
        if (done) return
        buffer = value.buffer as ArrayBuffer
        made += value.length
        const taken = Math.min(value.length, maxBytes - length)
        if (taken > 0) await sink(value.subarray(0, taken), length)
        length += taken
        if (taken < value.length) {
          isCut = true
          await reader.cancel()
          return
        }
        await turn(value.length)
      }
    } catch (failure) {
      error ??= failure as Error
    }
  })()
  const isStopped = () => isCut || error !== undefined
  try {
    const input = new PieceReader(pieces)
    while (!isStopped()) {
      // Before any output, the worst: a bomb's ratio.
      const ratio = given === 0 ? 1032 : Math.max(1, made / given)
      const next = input.read(
        Math.min(MAX_PIECE_BYTES, Math.max(MIN_PIECE_BYTES, Math.floor(WORK_BYTES_PER_TURN / ratio))),
      )
      if (!next) break
      given += next.length
      await writer.write(next)
      // A macrotask turn lets the reader take what the piece made; it is waiting again once all is read.
      do await yieldToEventLoop()
      while (!isWaiting && !isStopped())
    }
    if (!isStopped()) await writer.close()
  } catch (failure) {
    // The reader's cancel (a cut) fails the writes too; otherwise the data itself is wrong.
    if (!isCut) error ??= failure as Error
  }
  if (isStopped()) await writer.abort().catch(() => undefined)
  await reading
  return { length, isCut, ...(error && !isCut ? { error } : {}) }
}
