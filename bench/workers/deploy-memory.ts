// `npm run check:deploy`'s memory entry: the consumer Worker (its default export, so the bundle is its code) plus
// routes that run one converter or one preview on the POSTed bytes, through the same converters and preview
// functions the consumer's queue handler calls, and answer what the step made and the WASM memory it reached. The
// check sends every step to ONE isolate, one after another, and reads the process's peak memory between steps.
import { measureStep, liveWasmBytes } from './wasm-memories'
import { loadConfig } from '../../worker/config'
import consumer, { type ConsumerEnv } from '../../worker/consumer'
import type { QueueMessage } from '../../worker/queue'
import { ConversionError, settingsFor, type ConversionInput, type Converter } from '../../worker/converters/converter'
import { runnableConverter } from '../../worker/converters/runnable'
import { localEngines } from '../../worker/engine-workers/local'
import type { PreviewKindDrawn } from '../../worker/engine-workers/protocol'
import type { PreviewParams } from '../../worker/previews/params'
import type { PreviewKind } from '../../worker/files/preview-kind'
import { checkPreviewPage } from '../../worker/previews/pages'
import { ERRORS } from '../../worker/errors'

const STREAM_PIECE_BYTES = 64 * 1024

/**
 * The bytes as a stream of views, as R2 hands a stored file over in pieces: a Blob of them was a whole copy of the
 * input at each reading (5 MiB for a text preview that reads its first 64 KiB), which the deployed Worker never holds.
 */
function streamOf(bytes: Uint8Array): ReadableStream<Uint8Array> {
  let at = 0
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.byteLength) return controller.close()
      controller.enqueue(bytes.subarray(at, at + STREAM_PIECE_BYTES))
      at += STREAM_PIECE_BYTES
    },
  })
}

/**
 * The step's input: its bytes POSTed (read from the request only when a converter asks for the whole file, once), and
 * the address outside the isolate that streams them (check:deploy's loopback server). A stream is read as the engines
 * read R2: a fresh request each time, its body streamed, so the isolate holds only what the step keeps (a text
 * preview its first 64 KiB), not the whole file. Without an address (bench:cpu), the POSTed bytes are streamed too.
 */
function stepInput(name: string, request: Request, source: { url: string; size: number } | undefined): ConversionInput {
  let whole: Promise<Uint8Array> | undefined
  const posted = () => (whole ??= request.arrayBuffer().then((buffer) => new Uint8Array(buffer)))
  const size = source?.size ?? Number(request.headers.get('content-length'))
  return {
    name,
    extension: name.slice(name.lastIndexOf('.')).toLowerCase(),
    contentType: request.headers.get('content-type') ?? 'application/octet-stream',
    size,
    stream: () => {
      const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>()
      const body = source
        ? fetch(source.url).then((response) => {
            if (!response.ok || !response.body) throw new Error(`the check's input answered ${response.status}`)
            return response.body
          })
        : posted().then(streamOf)
      body.then((stream) => stream.pipeTo(writable)).catch((error: unknown) => writable.abort(error).catch(() => {}))
      return readable
    },
    bytes: async (maxBytes) => {
      if (size > maxBytes)
        throw new ConversionError(`"${name}" is larger than ${maxBytes} bytes`, { code: 'FILE_TOO_LARGE' })
      return posted()
    },
  }
}

/** A stream's length, read a chunk at a time as the pipeline's R2 upload reads it: never held whole. */
async function streamedBytes(stream: ReadableStream<Uint8Array>): Promise<number> {
  let bytes = 0
  for await (const chunk of stream) bytes += chunk.byteLength
  return bytes
}

/**
 * The outputs, part after part, each read and dropped before the next (the pipeline stores each one), up to
 * `maxOutputs`: a step's pages are made one at a time, so the first ones show its memory.
 */
async function convertAll(
  converter: Converter,
  input: ConversionInput,
  env: ConsumerEnv,
  maxOutputs: number,
): Promise<{ outputs: number; bytes: number }> {
  const context = { jobId: 'check-deploy', settings: settingsFor(converter, loadConfig(env)), options: {} }
  const plan = converter.plan ? await converter.plan(input, context) : undefined
  let outputs = 0
  let bytes = 0
  for (const part of plan?.parts ?? [undefined]) {
    for await (const output of converter.convert(input, { ...context, part })) {
      outputs++
      bytes += output.body instanceof Uint8Array ? output.body.byteLength : await streamedBytes(output.body)
      if (outputs >= maxOutputs) return { outputs, bytes }
    }
  }
  return { outputs, bytes }
}

/** As the API refuses before queueing (checkPreviewPage), then as the consumer draws (previews/draw.ts). */
async function drawPreview(
  kind: string,
  input: ConversionInput,
  params: PreviewParams,
  env: ConsumerEnv,
): Promise<{ outputs: number; bytes: number }> {
  checkPreviewPage(kind as PreviewKind, params)
  const config = loadConfig(env)
  return {
    outputs: 1,
    bytes: (await localEngines.renderPreview(kind as PreviewKindDrawn, input, params, config)).byteLength,
  }
}

async function runStep(request: Request, env: ConsumerEnv): Promise<Response> {
  const url = new URL(request.url)
  const [, route, what] = url.pathname.split('/')
  const name = url.searchParams.get('name') ?? 'input'
  // ?input=<address>&size=<bytes>: where the input streams from, outside the isolate (check:deploy).
  const inputUrl = url.searchParams.get('input')
  const input = stepInput(
    name,
    request,
    inputUrl ? { url: inputUrl, size: Number(url.searchParams.get('size')) } : undefined,
  )
  let step: () => Promise<{ outputs: number; bytes: number }>
  if (route === 'convert') {
    const converter = runnableConverter(what ?? '')
    if (!converter) return Response.json({ message: `no converter ${what}` }, { status: 404 })
    step = () => convertAll(converter, input, env, Number(url.searchParams.get('outputs') ?? Number.POSITIVE_INFINITY))
  } else if (route === 'preview') {
    const side = Number(url.searchParams.get('w') ?? 2048)
    const params: PreviewParams = {
      width: side,
      height: side,
      fit: url.searchParams.get('fit') === 'cover' ? 'cover' : 'contain',
      format: (url.searchParams.get('format') ?? 'webp') as PreviewParams['format'],
      page: 1,
    }
    step = () => drawPreview(what ?? '', input, params, env)
  } else {
    return Response.json({ message: 'not found' }, { status: 404 })
  }
  const { result, peakWasmBytes, wasmMemoryBytes } = await measureStep(async () => {
    try {
      return { ...(await step()), status: 200 }
    } catch (error) {
      if (!(error instanceof ConversionError)) throw error
      return { outputs: 0, bytes: 0, status: ERRORS[error.code].status, message: error.message }
    }
  })
  return Response.json({ ...result, peakWasmBytes, wasmMemoryBytes })
}

export default {
  ...consumer,
  async fetch(request, env) {
    if (request.method === 'GET')
      return Response.json({
        liveWasmBytes: await liveWasmBytes(),
        canCollect: typeof (globalThis as { gc?: unknown }).gc === 'function',
      })
    return runStep(request, env)
  },
} satisfies ExportedHandler<ConsumerEnv, QueueMessage>

// The consumer's Durable Object class (the sidecar's Container), which its config binds: part of its bundle.
export { GotenbergContainer } from '../../worker/consumer'
