// Inflating an image's compressed data (PNG's IDAT stream, a TIFF's Deflate strip) straight into the buffer its
// rows go to, with the runtime's native zlib (DecompressionStream) fed in small pieces and a turn of the event loop
// every WORK_BYTES_PER_TURN of output: a 12 MP picture is ~0.3–0.6 s of inflating, which one call would hold
// every other request of the isolate for. The output stops at the target's size, so a bomb never inflates further.
import { workTurns } from '../event-loop'

/**
 * Input handed to the decompressor at a time: Deflate expands at most 1032:1, so a bomb's piece makes at most
 * ~16 MiB of output before the next check of the target's size.
 */
const INPUT_PIECE_BYTES = 16 * 1024
/** Output between two turns of the event loop (a few milliseconds of inflating on an idle core). */
export const WORK_BYTES_PER_TURN = 1024 * 1024

export interface Inflated {
  /** Bytes written to the target. */
  readonly length: number
  /** The data held more than the target takes (it was cut there). */
  readonly isCut: boolean
  /** Why the decompressor stopped before the end of the data (corrupt or truncated data), if it did. */
  readonly error?: Error
}

/** Inflates `pieces` (one zlib or raw Deflate stream split anywhere) into `target`, from its start. */
export async function inflateInto(pieces: readonly Uint8Array[], format: 'deflate' | 'deflate-raw', target: Uint8Array): Promise<Inflated> {
  const stream = new DecompressionStream(format)
  const writer = stream.writable.getWriter()
  const reader = stream.readable.getReader()
  const turn = workTurns(WORK_BYTES_PER_TURN)
  let stopped = false
  // Writes wait for the reads below (backpressure); their failure is the reader's too, reported there.
  const writing = (async () => {
    for (const piece of pieces) {
      for (let at = 0; at < piece.length && !stopped; at += INPUT_PIECE_BYTES) await writer.write(piece.subarray(at, at + INPUT_PIECE_BYTES))
    }
    if (!stopped) await writer.close()
  })().catch(() => undefined)
  let length = 0
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return { length, isCut: false }
      const taken = Math.min(value.length, target.length - length)
      target.set(value.subarray(0, taken), length)
      length += taken
      if (taken < value.length) return { length, isCut: true }
      await turn(value.length)
    }
  } catch (error) {
    return { length, isCut: false, error: error as Error }
  } finally {
    stopped = true
    await reader.cancel().catch(() => undefined)
    await writing
  }
}
