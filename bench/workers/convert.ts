// Bench entry: the API Worker, plus routes in the same isolate: one runs a converter on the POSTed bytes and
// answers how many outputs and bytes it made (and the most bytes held at once); two compare our PNG encoder with
// @jsquash/png on the pixels of a converter's outputs; two put and get raw R2 objects (the baseline of bench/files).
import { encode as encodeSquooshPng } from '@jsquash/png/codec/pkg/squoosh_png.js'
import { Hono } from 'hono'
import { loadConfig } from '../../worker/config'
import { ERRORS } from '../../worker/errors'
import {
  ConversionError,
  settingsFor,
  type ConversionContext,
  type ConversionInput,
  type ConversionOutput,
  type Converter,
} from '../../worker/converters/converter'
import { runnableConverter } from '../../worker/converters/runnable'
import { decodeImage } from '../../worker/engines/image/decode'
import { encodePngBytes, type RawImage } from '../../worker/engines/png/encode'
import worker from '../../worker/index'
import type { StepMessage } from '../../worker/queue'
import type { PreviewParams } from '../../worker/previews/params'
import { localEngines } from '../../worker/engine-workers/local'
import type { PreviewKindDrawn } from '../../worker/engine-workers/protocol'
import { readImageHeader } from '../../worker/engines/image/header'

/** The bench decodes its own PNG outputs. */
const OUTPUT_LIMITS = { maxPixels: 40_000_000, maxSide: 20_000 }

// Every WASM instance made in this isolate, to read the linear memory the engines grew to (it never shrinks,
// so its size after a conversion is the peak). Bench only: the Worker itself does not do this.
const instances: WebAssembly.Instance[] = []
// A Proxy, not a subclass: engines check `instanceof WebAssembly.Instance` and must keep getting true.
WebAssembly.Instance = new Proxy(WebAssembly.Instance, {
  construct(target, args) {
    const instance = Reflect.construct(target, args) as WebAssembly.Instance
    instances.push(instance)
    return instance
  },
})
const originalInstantiate = WebAssembly.instantiate
WebAssembly.instantiate = (async (source: WebAssembly.Module, imports?: WebAssembly.Imports) => {
  const result = await originalInstantiate(source, imports)
  instances.push(('instance' in result ? result.instance : result) as WebAssembly.Instance)
  return result
}) as typeof WebAssembly.instantiate

function wasmBytes(instance: WebAssembly.Instance): number {
  const memories = Object.values(instance.exports).filter(
    (value): value is WebAssembly.Memory => value instanceof WebAssembly.Memory,
  )
  return memories.reduce((sum, memory) => sum + memory.buffer.byteLength, 0)
}

const bench = new Hono<{ Bindings: Env }>()

function benchInput(name: string, bytes: Uint8Array): ConversionInput {
  return {
    name,
    extension: name.slice(name.lastIndexOf('.')).toLowerCase(),
    contentType: 'application/octet-stream',
    size: bytes.byteLength,
    stream: () => new Blob([bytes]).stream(),
    bytes: async () => bytes,
  }
}

/** Every output of the converter, part after part, as the pipeline would run them. */
async function* convertAll(
  converter: Converter,
  input: ConversionInput,
  context: ConversionContext,
): AsyncGenerator<ConversionOutput> {
  for await (const held of convertHeld(converter, input, context, false)) yield* held
}

/**
 * The outputs in the groups a consumer holds at once: one by one as converters yield them, or with `holdParts`
 * a whole part at a time, as when `convert` answered an array (the pipeline's memory before, for a before/after
 * figure from the same code).
 */
async function* convertHeld(
  converter: Converter,
  input: ConversionInput,
  context: ConversionContext,
  holdParts: boolean,
): AsyncGenerator<ConversionOutput[]> {
  const plan = converter.plan ? await converter.plan(input, context) : undefined
  for (const part of plan?.parts ?? [undefined]) {
    const held: ConversionOutput[] = []
    for await (const output of converter.convert(input, { ...context, part })) {
      if (!holdParts) yield [output]
      else held.push(output)
    }
    if (holdParts) yield held
  }
}

const bytesOf = async (output: ConversionOutput) =>
  output.body instanceof Uint8Array ? output.body : new Uint8Array(await new Response(output.body).arrayBuffer())

// ?hold=parts holds each part's outputs together (as the pipeline did); peakHeldBytes is the most output bytes
// alive at once in the consumer.
bench.post('/__bench/convert/:converter', async (c) => {
  const converter = runnableConverter(c.req.param('converter'))
  if (!converter) return c.json({ message: 'no such converter' }, 404)
  const input = benchInput(c.req.query('name') ?? 'input', new Uint8Array(await c.req.arrayBuffer()))
  let outputs = 0
  let outputBytes = 0
  let peakHeldBytes = 0
  try {
    for await (const held of convertHeld(
      converter,
      input,
      { jobId: 'bench', settings: settingsFor(converter, loadConfig(c.env)), options: {} },
      c.req.query('hold') === 'parts',
    )) {
      let heldBytes = 0
      for (const output of held) heldBytes += (await bytesOf(output)).byteLength
      outputs += held.length
      outputBytes += heldBytes
      peakHeldBytes = Math.max(peakHeldBytes, heldBytes)
    }
  } catch (error) {
    // A refused input answers as the API would (its 4xx and reason), without the dev server's error page.
    if (error instanceof ConversionError)
      return c.json({ message: error.message, code: error.code }, ERRORS[error.code].status)
    throw error
  }
  // Engines keep one instance per isolate and memory never shrinks: the largest heap so far is the peak.
  const peakWasmBytes = Math.max(0, ...instances.map(wasmBytes))
  return c.json({ outputs, bytes: outputBytes, peakWasmBytes, peakHeldBytes })
})

// The PNG encoders compared on the same pixels: the converter's outputs decoded once to RGBA and kept here, then
// each encoder encodes all of them per request (the client times the requests).
const PREPARED_PAGES = 3
let prepared: RawImage[] = []
bench.post('/__bench/png-encoders/prepare/:converter', async (c) => {
  const converter = runnableConverter(c.req.param('converter'))
  if (!converter) return c.json({ message: 'no such converter' }, 404)
  const input = benchInput(c.req.query('name') ?? 'input', new Uint8Array(await c.req.arrayBuffer()))
  prepared = []
  for await (const output of convertAll(converter, input, {
    jobId: 'bench',
    settings: settingsFor(converter, loadConfig(c.env)),
    options: {},
  })) {
    // Also initialises the Squoosh PNG module. A few pages only: 24 decoded A4 pages would be 200 MB.
    if (prepared.length < PREPARED_PAGES) prepared.push(await decodeImage(await bytesOf(output), OUTPUT_LIMITS))
  }
  return c.json({ images: prepared.length })
})
bench.post('/__bench/png-encoders/encode/:encoder', async (c) => {
  const encoder = c.req.param('encoder')
  let bytes = 0
  for (const image of prepared) {
    bytes +=
      encoder === 'ours'
        ? (await encodePngBytes(image)).byteLength
        : encodeSquooshPng(image.data as Uint8Array, image.width, image.height, 8).byteLength
  }
  return c.json({ images: prepared.length, bytes })
})

// The request alone: the POSTed bytes read and a JSON answer, as /__bench/convert does around a converter (the
// round trip bench/image-to-png subtracts to show a conversion's own time).
bench.post('/__bench/echo', async (c) => c.json({ bytes: (await c.req.arrayBuffer()).byteLength }))

// Raw R2 through the same isolate: the baseline of bench/files.
bench.put('/__bench/raw/:key', async (c) => {
  const length = Number(c.req.header('content-length'))
  const fixed = new FixedLengthStream(length)
  const piping = c.req.raw.body!.pipeTo(fixed.writable)
  await c.env.BUCKET.put(`bench/${c.req.param('key')}`, fixed.readable)
  await piping
  return c.body(null, 204)
})
// A preview drawn and encoded from the POSTed bytes, as GET /files/:id/preview makes one (without storing it).
bench.post('/__bench/preview/:kind', async (c) => {
  const config = loadConfig(c.env)
  const input = benchInput(c.req.query('name') ?? 'input', new Uint8Array(await c.req.arrayBuffer()))
  const side = Number(c.req.query('w') ?? 256)
  const params: PreviewParams = {
    width: side,
    height: side,
    fit: 'contain',
    format: (c.req.query('format') ?? 'webp') as PreviewParams['format'],
    page: 1,
  }
  const kind = c.req.param('kind') as PreviewKindDrawn
  const body = await localEngines.renderPreview(kind, input, params, config)
  const { width, height } = readImageHeader(body) ?? { width: 0, height: 0 }
  return c.json({ width, height, bytes: body.byteLength })
})

bench.get('/__bench/raw/:key', async (c) => {
  const object = await c.env.BUCKET.get(`bench/${c.req.param('key')}`)
  return object ? new Response(object.body, { headers: { 'content-length': String(object.size) } }) : c.body(null, 404)
})

export default {
  fetch(request, env, ctx) {
    return new URL(request.url).pathname.startsWith('/__bench/')
      ? bench.fetch(request, env, ctx)
      : worker.fetch(request, env, ctx)
  },
  // No queue handler: the benches call converters through /__bench, and wrangler.toml consumes no queue.
} satisfies ExportedHandler<Env, StepMessage>

export { RateLimiter } from '../../worker/index'
