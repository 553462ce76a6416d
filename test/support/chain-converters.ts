// Converters for pipeline tests, registered at run time in the test isolate (which also runs the queue
// consumer): a two-output step, a follow-up step, a converter that fans out into parts, one that fails for
// good, one that fails twice for transient reasons before it works, one that never works, one that fails
// until the test lets it work, one that pauses until the test releases it, and one that fails part-way through
// its outputs.
import { registerConverter, converterNamed } from '../../worker/converters/registry'
import { ConversionError, defineConverter, type Converter } from '../../worker/converters/converter'
import { until } from './until'

const text = (value: string) => new TextEncoder().encode(value)

const splitter: Converter = {
  name: 'test-split',
  from: ['.tsplit'],
  to: '.tpart',
  async *convert(input) {
    const body = new TextDecoder().decode(await input.bytes(1024))
    const halves = [body.slice(0, body.length / 2), body.slice(body.length / 2)]
    for (const [index, half] of halves.entries())
      yield {
        index,
        total: 2,
        extension: '.tpart',
        contentType: 'text/plain',
        body: text(half),
        metadata: { half: index },
      }
  },
}

const upper: Converter = {
  name: 'test-upper',
  from: ['.tpart'],
  to: '.tupper',
  async *convert(input) {
    const body = new TextDecoder().decode(await input.bytes(1024))
    yield { index: 0, total: 1, extension: '.tupper', contentType: 'text/plain', body: text(body.toUpperCase()) }
  },
}

/** One output per character, planned in parts of two. */
const fanOut: Converter = {
  name: 'test-fan',
  from: ['.tfan'],
  to: '.tchar',
  async plan(input) {
    const total = (await input.bytes(1024)).length
    const parts = []
    for (let start = 0; start < total; start += 2) parts.push({ start, end: Math.min(total, start + 2) })
    return { total, parts, sourceMetadata: { char_count: total } }
  },
  async *convert(input, ctx) {
    const bytes = await input.bytes(1024)
    const { start, end } = ctx.part ?? { start: 0, end: bytes.length }
    for (let index = start; index < end; index++) {
      yield {
        index,
        total: bytes.length,
        extension: '.tchar',
        contentType: 'text/plain',
        body: bytes.slice(index, index + 1),
      }
    }
  },
}

const broken: Converter = {
  name: 'test-broken',
  from: ['.tbroken'],
  to: '.tnever',
  // biome-ignore lint/correctness/useYield: fails before its first output
  async *convert() {
    throw new ConversionError('the input is corrupt at byte 3')
  },
}

/** Fails with a code of its own choosing, as an engine that knows the input is of a kind it cannot read does. */
const refusing: Converter = {
  name: 'test-refusing',
  from: ['.trefuse'],
  to: '.tnever',
  // biome-ignore lint/correctness/useYield: fails before its first output
  async *convert() {
    throw new ConversionError('the input is of a kind this engine cannot read', { code: 'UNSUPPORTED_FORMAT' })
  },
}

const flaky: Converter = {
  name: 'test-flaky',
  from: ['.tflaky'],
  to: '.tfixed',
  async *convert(_input, ctx) {
    if ((ctx.attempt ?? 1) < 3) throw new ConversionError('the engine is busy', { retryable: true })
    yield {
      index: 0,
      total: 1,
      extension: '.tfixed',
      contentType: 'text/plain',
      body: text(`worked on attempt ${ctx.attempt}`),
    }
  },
}

/** Never works: its messages end in the dead-letter queue. */
const stubborn: Converter = {
  name: 'test-stubborn',
  from: ['.tbusy'],
  to: '.tnever',
  // biome-ignore lint/correctness/useYield: never gets to its first output
  async *convert() {
    throw new ConversionError('the engine is busy', { retryable: true })
  },
}

/**
 * `held` sets `hasStarted` once it has read its input, then waits for the test to call `release()` (a flag the
 * test polls: a promise resolved from the consumer's request does not wake the test's).
 */
export const hold = { hasStarted: false, release: () => {}, released: Promise.resolve() }

export function resetHold(): void {
  hold.hasStarted = false
  hold.released = new Promise<void>((resolve) => {
    hold.release = resolve
  })
}

/** Resolves once `held` has read its input, or throws after a deadline. */
export async function heldHasStarted(): Promise<void> {
  await until('test-held starting', () => hold.hasStarted)
}

/** Copies its input, pausing in the middle: the test acts while a step is mid-conversion. */
const held: Converter = {
  name: 'test-held',
  from: ['.thold'],
  to: '.theld',
  async *convert(input) {
    const body = await input.bytes(1024)
    hold.hasStarted = true
    await hold.released
    yield { index: 0, total: 1, extension: '.theld', contentType: 'text/plain', body }
  },
}

/** Whether `gated` works; the test and the queue consumer share this isolate, so a test opens it. */
export const gate = { isOpen: false }

/** One output per byte, one part per byte; fails for good while the gate is closed. */
const gated: Converter = {
  name: 'test-gated',
  from: ['.tgate'],
  to: '.tgated',
  async plan(input) {
    const total = (await input.bytes(1024)).length
    return { total, parts: Array.from({ length: total }, (_, start) => ({ start, end: start + 1 })) }
  },
  async *convert(input, ctx) {
    if (!gate.isOpen) throw new ConversionError('the gate is closed')
    const bytes = await input.bytes(1024)
    const index = ctx.part?.start ?? 0
    yield {
      index,
      total: bytes.length,
      extension: '.tgated',
      contentType: 'text/plain',
      body: bytes.slice(index, index + 1),
    }
  },
}

/**
 * Four outputs, failing after the second: for good when the input says "permanent", for a transient reason on
 * the first delivery when it says "transient" (the second delivery then makes all four).
 */
const partway: Converter = {
  name: 'test-partway',
  from: ['.tpartway'],
  to: '.tpiece',
  async *convert(input, ctx) {
    const failure = new TextDecoder().decode(await input.bytes(1024)).trim()
    for (let index = 0; index < 4; index++) {
      if (index === 2 && failure === 'permanent') throw new ConversionError('piece 3 is corrupt')
      if (index === 2 && failure === 'transient' && (ctx.attempt ?? 1) < 2)
        throw new ConversionError('the engine is busy', { retryable: true })
      yield {
        index,
        total: 4,
        extension: '.tpiece',
        contentType: 'text/plain',
        body: text(`piece ${index + 1}, attempt ${ctx.attempt}`),
      }
    }
  },
}

/** Writes down the settings and the rest of the context the pipeline gave it. */
const nosy = defineConverter({
  name: 'test-settings',
  from: ['.tsettings'],
  to: '.tseen',
  settings: ['PDF_DPI'],
  async *convert(_input, ctx) {
    const given = Object.entries(ctx).flatMap(([key, value]) => (value === undefined ? [] : [key]))
    const seen = { settings: Object.keys(ctx.settings), context: given.sort() }
    yield { index: 0, total: 1, extension: '.tseen', contentType: 'application/json', body: text(JSON.stringify(seen)) }
  },
})

export function registerChainConverters(): void {
  for (const converter of [
    splitter,
    upper,
    fanOut,
    broken,
    refusing,
    flaky,
    stubborn,
    gated,
    held,
    partway,
    nosy,
  ] as Converter[])
    if (!converterNamed(converter.name)) registerConverter(converter)
}
