// PNG row filtering: the five filters and libpng's choice among them (smallest sum of the filtered bytes read as
// signed), in WebAssembly SIMD (filter.c, built into filter.wasm by `npm run build:wasm`). The five sums take one
// pass over the row with explicit 16-byte vectors, then only the chosen filter is written (speed against
// JavaScript: docs/benchmarks.md, "Engines: kept or removed"). The JavaScript version is the reference the tests
// compare against, and filters rows too wide for the module's bounded memory.
import filterWasm from './filter.wasm'

/** Rows filtered per call: enough to amortise the copies, bounded so the module's memory stays small. */
const MAX_BATCH_BYTES = 1024 * 1024
/** Wider rows than this are filtered in JavaScript: the module's memory holds ~8 of them. */
const MAX_WASM_STRIDE = 512 * 1024
const PAGE_BYTES = 65536

interface FilterExports {
  memory: WebAssembly.Memory
  __heap_base: WebAssembly.Global
  filter_rows(
    input: number,
    stride: number,
    rows: number,
    bpp: number,
    hasPrevious: number,
    scratch: number,
    output: number,
  ): void
}

// One instance per isolate; its memory only grows to the largest batch seen (≤ ~8 MiB, MAX_WASM_STRIDE).
let instance: FilterExports | undefined

/** Filters rows one batch at a time; `filter` answers the filtered bytes (filter byte + row, for each row). */
export interface RowFilter {
  /** How many rows a batch may hold. */
  readonly batchRows: number
  /** Where row `r` of the next batch is to be written (`stride` bytes). */
  row(r: number): Uint8Array
  /**
   * Filters the first `rows` rows written since the last call; the answer is a copy the caller may keep, written
   * into `into` when given (at least `rows × (stride + 1)` bytes: a buffer the caller reuses, no garbage a batch).
   */
  filter(rows: number, into?: Uint8Array): Uint8Array
}

export function rowFilter(stride: number, bpp: number): RowFilter {
  return stride > MAX_WASM_STRIDE ? jsRowFilter(stride, bpp) : wasmRowFilter(stride, bpp)
}

function wasmRowFilter(stride: number, bpp: number): RowFilter {
  const batchRows = Math.max(1, Math.min(32, Math.floor(MAX_BATCH_BYTES / stride)))
  instance ??= new WebAssembly.Instance(filterWasm, {}).exports as unknown as FilterExports
  const wasm = instance
  // Layout after the module's own data and stack: previous row, the batch's rows, a scratch row, the output.
  const previousAt = wasm.__heap_base.value as number
  const inputAt = previousAt + stride
  const scratchAt = inputAt + batchRows * stride
  const outputAt = scratchAt + stride
  const end = outputAt + batchRows * (stride + 1)
  if (end > wasm.memory.buffer.byteLength)
    wasm.memory.grow(Math.ceil((end - wasm.memory.buffer.byteLength) / PAGE_BYTES))
  // The row above the batch lives here, not in the module's memory: encoders running at once in one isolate
  // (two requests, or a page still streaming while the next starts) share that memory between their batches.
  let previous: Uint8Array | undefined
  const heap = () => new Uint8Array(wasm.memory.buffer)
  return {
    batchRows,
    row: (r) => heap().subarray(inputAt + r * stride, inputAt + (r + 1) * stride),
    filter(rows, into) {
      if (previous) heap().set(previous, previousAt)
      wasm.filter_rows(inputAt, stride, rows, bpp, previous ? 1 : 0, scratchAt, outputAt)
      const bytes = heap()
      const output = bytes.subarray(outputAt, outputAt + rows * (stride + 1))
      const filtered = into ? into.subarray(0, output.length) : output.slice()
      if (into) filtered.set(output)
      previous ??= new Uint8Array(stride)
      previous.set(bytes.subarray(inputAt + (rows - 1) * stride, inputAt + rows * stride))
      return filtered
    },
  }
}

function jsRowFilter(stride: number, bpp: number): RowFilter {
  let current: Uint8Array = new Uint8Array(stride)
  let previous: Uint8Array | undefined
  const candidates = Array.from({ length: 5 }, () => new Uint8Array(stride))
  return {
    batchRows: 1,
    row: () => current,
    filter(_, into) {
      const filtered = into ? into.subarray(0, stride + 1) : new Uint8Array(stride + 1)
      filterRow(current, previous, bpp, candidates, filtered)
      const spare = previous ?? new Uint8Array(stride)
      previous = current
      current = spare
      return filtered
    },
  }
}

/** The sum of a filtered row's bytes taken as signed (libpng's heuristic for choosing a filter). */
const signedWeight = (value: number) => (value < 128 ? value : 256 - value)

// One tight loop per filter type (a switch inside the byte loop cost more than the filtering itself). Each writes
// the filtered row into `target` and answers its weight, giving up once the weight reaches `limit` (a filter
// already found is at least as good). `previous` is all zeros on the first row.
function filterNone(row: Uint8Array, target: Uint8Array, limit: number): number {
  let score = 0
  for (let i = 0; i < row.length && score < limit; i++) {
    const value = row[i]!
    target[i] = value
    score += signedWeight(value)
  }
  return score
}

function filterSub(row: Uint8Array, bpp: number, target: Uint8Array, limit: number): number {
  let score = 0
  let i = 0
  for (; i < bpp && i < row.length; i++) {
    target[i] = row[i]!
    score += signedWeight(row[i]!)
  }
  for (; i < row.length && score < limit; i++) {
    const value = (row[i]! - row[i - bpp]!) & 0xff
    target[i] = value
    score += signedWeight(value)
  }
  return score
}

function filterUp(row: Uint8Array, previous: Uint8Array, target: Uint8Array, limit: number): number {
  let score = 0
  for (let i = 0; i < row.length && score < limit; i++) {
    const value = (row[i]! - previous[i]!) & 0xff
    target[i] = value
    score += signedWeight(value)
  }
  return score
}

function filterAverage(row: Uint8Array, previous: Uint8Array, bpp: number, target: Uint8Array, limit: number): number {
  let score = 0
  let i = 0
  for (; i < bpp && i < row.length; i++) {
    const value = (row[i]! - (previous[i]! >> 1)) & 0xff
    target[i] = value
    score += signedWeight(value)
  }
  for (; i < row.length && score < limit; i++) {
    const value = (row[i]! - ((row[i - bpp]! + previous[i]!) >> 1)) & 0xff
    target[i] = value
    score += signedWeight(value)
  }
  return score
}

function filterPaeth(row: Uint8Array, previous: Uint8Array, bpp: number, target: Uint8Array, limit: number): number {
  let score = 0
  let i = 0
  // With no left neighbour (a = c = 0) the Paeth predictor is the byte above.
  for (; i < bpp && i < row.length; i++) {
    const value = (row[i]! - previous[i]!) & 0xff
    target[i] = value
    score += signedWeight(value)
  }
  for (; i < row.length && score < limit; i++) {
    const a = row[i - bpp]!
    const b = previous[i]!
    const c = previous[i - bpp]!
    // p = a + b − c; |p − a| = |b − c|, |p − b| = |a − c|, |p − c| = |a + b − 2c|
    const pa = Math.abs(b - c)
    const pb = Math.abs(a - c)
    const pc = Math.abs(a + b - c - c)
    const predictor = pa <= pb && pa <= pc ? a : pb <= pc ? b : c
    const value = (row[i]! - predictor) & 0xff
    target[i] = value
    score += signedWeight(value)
  }
  return score
}

/** Writes the best-filtered row (filter byte first) into `out`; `candidates` holds 5 scratch rows. */
export function filterRow(
  row: Uint8Array,
  previous: Uint8Array | undefined,
  bpp: number,
  candidates: Uint8Array[],
  out: Uint8Array,
): void {
  let best = 0
  let bestScore = filterNone(row, candidates[0]!, Number.POSITIVE_INFINITY)
  const consider = (filter: number, score: number) => {
    if (score < bestScore) {
      bestScore = score
      best = filter
    }
  }
  consider(1, filterSub(row, bpp, candidates[1]!, bestScore))
  // On the first row Up and Paeth equal None and Sub: only those two are tried.
  if (previous) consider(2, filterUp(row, previous, candidates[2]!, bestScore))
  consider(3, filterAverage(row, previous ?? candidates[4]!.fill(0), bpp, candidates[3]!, bestScore))
  if (previous) consider(4, filterPaeth(row, previous, bpp, candidates[4]!, bestScore))
  out[0] = best
  out.set(candidates[best]!.subarray(0, row.length), 1)
}
