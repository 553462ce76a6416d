// The PDF stream pre-scan (worker/engines/pdf-streams.ts) measures what a stream decodes to in slices, a pause of
// its generator between two (the converter gives the event loop a turn at each). A slice is bounded in work, not
// time: about WORK_BYTES_PER_TURN of input and output, plus at most one input piece's output, and an input piece is
// sized from the stream's expansion so far. So a bomb that expands 2700:1 (LZW's 12-bit codes for 4096-byte
// entries) pauses as often, per MiB it decodes, as one that does not expand.
import { describe, expect, it } from 'vitest'
import {
  findPdfStreams,
  findPdfStreamsInSlices,
  measurePdfStreams,
  type PdfScanWork,
  PdfStreamSyntaxError,
  PdfStreamTooLargeError,
  WORK_BYTES_PER_TURN,
} from '../../worker/engines/pdf-streams'
import {
  pdfAscii85ToEnd,
  pdfFlateBomb,
  pdfLongWord,
  pdfLzwBomb,
  pdfLzwSpaces,
  pdfRunLengthToEnd,
  pdfSharedIndirectParams,
} from '../hostile/corpus'

const MiB = 2 ** 20

/** Runs the pre-scan to its end, counting its pauses; answers them with its result or what it threw. */
function slices(bytes: Uint8Array, budget: { maxStreamBytes: number; maxTotalBytes: number }) {
  const steps = measurePdfStreams(bytes, findPdfStreams(bytes), budget)
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
  ])(
    'measures %s in slices of at most about WORK_BYTES_PER_TURN, then refuses it at the stream budget',
    async (_name, make) => {
      const budget = { maxStreamBytes: 24 * MiB, maxTotalBytes: 2 ** 40 }
      const { pauses, error } = slices(await make(), budget)
      expect(error).toBeInstanceOf(PdfStreamTooLargeError)
      // 24 MiB decoded: one pause per WORK_BYTES_PER_TURN, give or take one piece's output (≤ 128 KiB and a bit) a
      // slice. With 1 KiB pieces whatever the expansion, the LZW bomb paused 15 times (1.6 MiB a slice).
      expect(pauses).toBeGreaterThanOrEqual(budget.maxStreamBytes / (2 * WORK_BYTES_PER_TURN))
    },
  )

  it("counts an LZW stream's output to the byte, entries of every length copied in runs", () => {
    // lzwRun's entries grow by a byte a code up to the 4096-entry table (~3800 bytes), then start again after a clear;
    // 15 and 16 bytes sit either side of the run copy. (A stream of a few bytes is also read from the byte after its
    // `stream` line's end, and the larger reading counts: not exact there, by design.)
    for (const count of [15, 16, 300, 5000, 3 * MiB + 17]) {
      expect(slices(pdfLzwSpaces(count), { maxStreamBytes: 2 ** 40, maxTotalBytes: 2 ** 40 }).bytes).toBe(count)
    }
  })
})

/** ASCII85 (ISO 32000-1 §7.4.3) of whole groups of four bytes, as an encoder writes it (no `z`). */
function ascii85(bytes: Uint8Array): string {
  let out = ''
  for (let at = 0; at < bytes.length; at += 4) {
    let value = ((bytes[at]! << 24) | (bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!) >>> 0
    const digits: string[] = []
    for (let i = 0; i < 5; i++, value = Math.floor(value / 85)) digits.unshift(String.fromCharCode(0x21 + (value % 85)))
    out += digits.join('')
  }
  return out
}

/** The pre-scan run to its end, its work counted; what it threw, or the bytes it measured. */
function scanned(bytes: Uint8Array, budget = { maxStreamBytes: 2 ** 40, maxTotalBytes: 2 ** 40 }) {
  const work: PdfScanWork = { bytesParsed: 0, bytesFed: 0 }
  try {
    const steps = measurePdfStreams(bytes, findPdfStreams(bytes, work), budget, 0, [], work)
    for (;;) {
      const step = steps.next()
      if (step.done) return { work, bytes: step.value }
    }
  } catch (error) {
    return { work, error }
  }
}

const text = (value: string) => new TextEncoder().encode(value)

describe("the PDF pre-scan's work, linear in the file (issue 29)", () => {
  it('parses an object that thousands of stream dictionaries name once: at most the file, not streams × object', () => {
    for (const [streams, paramsBytes] of [
      [1500, 87_500],
      [6000, 350_000],
    ] as const) {
      const bytes = pdfSharedIndirectParams(streams, paramsBytes)
      const { work, error } = scanned(bytes)
      expect(error).toBeUndefined()
      // Parsed once, each stream's own dictionary besides: within the file (re-parsed per stream: 6000 × 350 KB = 2.1 GB).
      expect(work.bytesParsed).toBeLessThan(bytes.length)
      expect(work.bytesParsed).toBeGreaterThan(paramsBytes)
    }
  })

  it('finds the streams in slices: a pause after about WORK_BYTES_PER_TURN of the file scanned and parsed', () => {
    const bytes = pdfSharedIndirectParams(6000, 350_000)
    const work: PdfScanWork = { bytesParsed: 0, bytesFed: 0 }
    const steps = findPdfStreamsInSlices(bytes, work)
    let pauses = 0
    let step = steps.next()
    for (; !step.done; step = steps.next()) pauses++
    expect(step.value).toHaveLength(6001)
    // About a megabyte scanned and half a megabyte parsed: 5 slices and a bit (one call before: 1.5 s of GET / in workerd).
    const slices = (bytes.length + work.bytesParsed) / WORK_BYTES_PER_TURN
    expect(pauses).toBeGreaterThanOrEqual(Math.floor(slices / 2))
    expect(pauses).toBeLessThanOrEqual(Math.ceil(slices))
  })

  it('ends ASCII85 data at a byte outside its alphabet (ISO 32000-1 §7.4.3: "any other characters shall cause an error"), as PDFium does', () => {
    const hello = text('Hello, world')
    const after = text('never decoded')
    const data = text(`${ascii85(hello)}v${ascii85(after)}~>`)
    const bytes = buildStreamPdf('/Filter /ASCII85Decode', data)
    expect(scanned(bytes).bytes).toBe(hello.length)
    // White space is skipped and `z` stands for four zeros (§7.4.3).
    expect(
      scanned(buildStreamPdf('/Filter /ASCII85Decode', text(`${ascii85(hello).replace(/(.{5})/g, '$1\n')} z~>`))).bytes,
    ).toBe(hello.length + 4)
  })

  it("reads 2000 ASCII85 streams without /Length whose data are bytes past 'u' once each, not each to the end of the file", () => {
    for (const streams of [500, 2000]) {
      const bytes = pdfAscii85ToEnd(streams, 1000)
      const { work, error } = scanned(bytes)
      expect(error).toBeUndefined()
      // Each stream's data end at its `endstream` and its first byte ends the ASCII85: about a piece a stream, two
      // readings (after `stream` and after its line end). To the end of the file: 2000 × 1 MB on average.
      expect(work.bytesFed).toBeLessThanOrEqual(streams * 2 * 1024)
    }
  })

  it("ends the data of a stream without a verified /Length at the first endstream or endobj, as PDFium's FindStreamEndPos", () => {
    const literal = Uint8Array.of(4, 1, 2, 3, 4, 5) // RunLength: 5 literal bytes, no end-of-data byte
    for (const length of ['', '/Length 3', '/Length 1000000']) {
      const bytes = buildStreamPdf(`${length} /Filter /RunLengthDecode`, literal)
      const [stream] = findPdfStreams(bytes).filter((found) => found.filters.length > 0)
      // The data end before the line end before `endstream` (PDFium takes that end of line off too).
      expect(stream!.end).toBe(Buffer.from(bytes).indexOf('\nendstream', stream!.starts[0]))
      // PDFium's 5 bytes; the reading from right after `stream` takes the line end for a length byte (6).
      expect(scanned(bytes).bytes).toBeGreaterThanOrEqual(5)
      expect(scanned(bytes).bytes).toBeLessThanOrEqual(6)
    }
  })

  it('refuses streams whose data overlap (a /Length that names an object, a filter that never ends) after feeding at most twice the file', () => {
    for (const streams of [250, 1000]) {
      const bytes = pdfRunLengthToEnd(streams, 1000)
      const { work, error } = scanned(bytes)
      expect(error).toBeInstanceOf(PdfStreamSyntaxError)
      expect((error as Error).message).toMatch(/streams' data overlap/)
      // Each of a stream's two readings (after `stream`, after its line end) within the limit and a piece; read to
      // the end of the file each, the streams would feed streams × 0.5 MB × 2.
      expect(work.bytesFed).toBeLessThanOrEqual(2 * (2 * bytes.length + 64 * 1024 + 1024))
    }
  })

  it('refuses a word of a megabyte of digits as a syntax error, in linear work (no stack overflow, no backtracking)', () => {
    const { work, error } = scanned(pdfLongWord(1_000_000))
    expect(error).toBeInstanceOf(PdfStreamSyntaxError)
    expect(work.bytesParsed).toBeLessThan(8 * 1_000_000 + 4096)
  })

  it('refuses a filter chain longer than 16 (one object may hold thousands of names that every stream names)', () => {
    const { error } = scanned(buildStreamPdf(`/Filter [${'/AHx '.repeat(17)}]`, text('>')))
    expect(error).toBeInstanceOf(PdfStreamSyntaxError)
    expect((error as Error).message).toMatch(/names 17 filters; at most 16/)
  })
})

/** A one-page PDF whose content stream has `dictionary` (no /Length unless it says) and `data`. */
function buildStreamPdf(dictionary: string, data: Uint8Array): Uint8Array {
  const head = text(
    `%PDF-1.7\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n2 0 obj\n<< /Type /Pages /Kids [3 0 R] /Count 1 >>\nendobj\n3 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 9 9] /Contents 4 0 R >>\nendobj\n4 0 obj\n<< ${dictionary} >>\nstream\n`,
  )
  const tail = text('\nendstream\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n')
  return Uint8Array.from([...head, ...data, ...tail])
}
