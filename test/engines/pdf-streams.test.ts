// The PDF stream pre-scan (worker/engines/pdf-streams.ts) measures what a stream decodes to in slices, a pause of
// its generator between two (the converter gives the event loop a turn at each). A slice is bounded in work, not
// time: about WORK_BYTES_PER_TURN of input and output, plus at most one input piece's output, and an input piece is
// sized from the stream's expansion so far. So a bomb that expands 2700:1 (LZW's 12-bit codes for 4096-byte
// entries) pauses as often, per MiB it decodes, as one that does not expand.
import { describe, expect, it } from 'vitest'
import { findPdfStreams, measurePdfStreams, PdfStreamTooLargeError, WORK_BYTES_PER_TURN } from '../../worker/engines/pdf-streams'
import { pdfFlateBomb, pdfLzwBomb, pdfLzwSpaces } from '../hostile/corpus'

const MiB = 2 ** 20

/** Runs the pre-scan to its end, counting its pauses; answers them with its result or what it threw. */
function slices(bytes: Uint8Array, budget: { maxStreamBytes: number; maxTotalBytes: number }) {
  const steps = measurePdfStreams(() => bytes, findPdfStreams(bytes), budget)
  let pauses = 0
  for (;;) {
    let step: IteratorResult<void, number>
    try {
      step = steps.next()
    } catch (error) {
      return { pauses, error }
    }
    if (step.done) return { pauses, bytes: step.value }
    pauses++
  }
}

describe('the PDF stream pre-scan', () => {
  it.each([
    ['an LZW bomb (64 MiB of spaces in 50 KB: up to ~2700:1)', pdfLzwBomb],
    ['a Flate bomb (64 MiB of spaces in 64 KB: up to 1032:1)', pdfFlateBomb],
  ])('measures %s in slices of at most about WORK_BYTES_PER_TURN, then refuses it at the stream budget', async (_name, make) => {
    const budget = { maxStreamBytes: 24 * MiB, maxTotalBytes: 2 ** 40 }
    const { pauses, error } = slices(await make(), budget)
    expect(error).toBeInstanceOf(PdfStreamTooLargeError)
    // 24 MiB decoded: one pause per WORK_BYTES_PER_TURN, give or take one piece's output (≤ 128 KiB and a bit) a
    // slice. With 1 KiB pieces whatever the expansion, the LZW bomb paused 15 times (1.6 MiB a slice).
    expect(pauses).toBeGreaterThanOrEqual(budget.maxStreamBytes / (2 * WORK_BYTES_PER_TURN))
  })

  it('counts an LZW stream\'s output to the byte, entries of every length copied in runs', () => {
    // lzwRun's entries grow by a byte a code up to the 4096-entry table (~3800 bytes), then start again after a clear;
    // 15 and 16 bytes sit either side of the run copy. (A stream of a few bytes is also read from the byte after its
    // `stream` line's end, and the larger reading counts: not exact there, by design.)
    for (const count of [15, 16, 300, 5000, 3 * MiB + 17]) {
      expect(slices(pdfLzwSpaces(count), { maxStreamBytes: 2 ** 40, maxTotalBytes: 2 ** 40 }).bytes).toBe(count)
    }
  })
})
