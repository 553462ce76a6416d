// The WebAssembly row filter (worker/engines/png/filter.c) against the JavaScript reference: the PNG
// specification's five filters (ISO/IEC 15948 §9.2: None, Sub, Up, Average, Paeth, with bytes left of the row and
// above the first row taken as 0) and libpng's heuristic choice, byte for byte, on rows of every kind.
import { describe, expect, it } from 'vitest'
import { filterRow, rowFilter } from '../../worker/engines/png/filter'

/** Deterministic pseudo-random bytes (xorshift), smooth or noisy: smooth rows favour Up/Paeth, noise None/Sub. */
function rows(count: number, stride: number, seed: number, smooth: boolean): Uint8Array[] {
  let state = seed
  const next = () => {
    state ^= state << 13
    state ^= state >>> 17
    state ^= state << 5
    return state >>> 0
  }
  return Array.from({ length: count }, (_, y) =>
    Uint8Array.from({ length: stride }, (_, x) => (smooth ? (x * 3 + y * 5 + (next() % 7)) & 0xff : next() & 0xff)),
  )
}

function referenceFilter(input: Uint8Array[], bpp: number): Uint8Array[] {
  const stride = input[0]!.length
  const candidates = Array.from({ length: 5 }, () => new Uint8Array(stride))
  return input.map((row, y) => {
    const out = new Uint8Array(stride + 1)
    filterRow(row, y > 0 ? input[y - 1] : undefined, bpp, candidates, out)
    return out
  })
}

function filteredByRowFilter(input: Uint8Array[], bpp: number): Uint8Array[] {
  const filter = rowFilter(input[0]!.length, bpp)
  const out: Uint8Array[] = []
  for (let first = 0; first < input.length; first += filter.batchRows) {
    const count = Math.min(filter.batchRows, input.length - first)
    for (let r = 0; r < count; r++) filter.row(r).set(input[first + r]!)
    const bytes = filter.filter(count)
    for (let r = 0; r < count; r++) out.push(bytes.slice(r * (input[0]!.length + 1), (r + 1) * (input[0]!.length + 1)))
  }
  return out
}

describe('PNG row filter', () => {
  const cases = [
    { bpp: 1, width: 1 },
    { bpp: 4, width: 1 },
    { bpp: 3, width: 2 },
    { bpp: 1, width: 17 },
    { bpp: 2, width: 33 },
    { bpp: 3, width: 100 },
    { bpp: 4, width: 257 },
    { bpp: 3, width: 4000 },
  ]
  for (const { bpp, width } of cases) {
    for (const smooth of [true, false]) {
      it(`matches the JavaScript filter byte for byte: ${bpp} bytes a pixel, ${width} pixels wide, ${smooth ? 'smooth' : 'noisy'} rows over batch boundaries`, () => {
        const input = rows(70, width * bpp, width * 31 + bpp, smooth)
        const ours = filteredByRowFilter(input, bpp)
        const reference = referenceFilter(input, bpp)
        expect(ours.length).toBe(reference.length)
        for (let y = 0; y < input.length; y++) expect(ours[y], `row ${y}`).toEqual(reference[y])
        if (smooth && input.length > 1) expect(new Set(ours.map((row) => row[0])).size).toBeGreaterThan(1)
      })
    }
  }

  it('keeps two encoders filtering at once apart (one isolate runs several conversions; they share the module)', () => {
    const first = rows(40, 300, 11, true)
    const second = rows(40, 300, 12, false)
    const filters = [rowFilter(300, 3), rowFilter(300, 3)]
    const out: Uint8Array[][] = [[], []]
    // Batch by batch, in turn: each batch overwrites the module's memory the other one used.
    for (let first_ = 0; first_ < 40; first_ += filters[0]!.batchRows) {
      for (const [k, input] of [first, second].entries()) {
        const count = Math.min(filters[k]!.batchRows, 40 - first_)
        for (let r = 0; r < count; r++) filters[k]!.row(r).set(input[first_ + r]!)
        const bytes = filters[k]!.filter(count)
        for (let r = 0; r < count; r++) out[k]!.push(bytes.slice(r * 301, (r + 1) * 301))
      }
    }
    expect(out[0]).toEqual(referenceFilter(first, 3))
    expect(out[1]).toEqual(referenceFilter(second, 3))
  })

  it('filters rows wider than the module holds in JavaScript, with the same bytes', () => {
    const input = rows(3, 600 * 1024, 7, true)
    const filter = rowFilter(input[0]!.length, 4)
    expect(filter.batchRows).toBe(1)
    expect(filteredByRowFilter(input, 4)).toEqual(referenceFilter(input, 4))
  })
})
