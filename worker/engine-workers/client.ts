// The consumer Worker's side of the engine Workers (protocol.ts): a converter whose work runs in its family's
// engine Worker, and a preview drawn there. The stored file's bytes and the outputs never leave the consumer's
// control: the engine Worker asks for the bytes and hands each output back before it makes the next.
import { RpcTarget } from 'cloudflare:workers'
import type { Config } from '../config'
import type {
  ConversionContext,
  ConversionInput,
  ConversionOutput,
  Converter,
  ConverterInfo,
  ResourceReader,
} from '../converters/converter'
import type { PreviewParams } from '../previews/params'
import {
  asWireResult,
  type EngineService,
  fromWire,
  type InputSource,
  type OutputSink,
  type PreviewKindDrawn,
  type WireContext,
  type WireInput,
} from './protocol'

class Source extends RpcTarget implements InputSource {
  constructor(private readonly input: ConversionInput) {
    super()
  }

  async stream() {
    return this.input.stream()
  }

  bytes(maxBytes: number) {
    return asWireResult(() => this.input.bytes(maxBytes))
  }
}

class Resources extends RpcTarget implements ResourceReader {
  constructor(private readonly reader: ResourceReader) {
    super()
  }

  list(limit: number) {
    return this.reader.list(limit)
  }

  read(key: string) {
    return this.reader.read(key)
  }
}

/**
 * Outputs handed over by the engine Worker, taken one at a time by the pipeline: `put` resolves once the pipeline
 * asks for the next output (it has stored this one), so the engine Worker never runs ahead.
 */
class Outputs extends RpcTarget implements OutputSink {
  /** Handed over but not yet taken: one output at most, then `undefined` once the engine Worker's call has ended. */
  private readonly ready: (ConversionOutput | undefined)[] = []
  private waiting: ((output: ConversionOutput | undefined) => void) | undefined
  private taken: ((more: boolean) => void) | undefined
  private stopped = false

  put(output: ConversionOutput): Promise<boolean> {
    if (this.stopped) return Promise.resolve(false)
    return new Promise((resolve) => {
      this.taken = resolve
      this.hand(output)
    })
  }

  end(): void {
    this.hand(undefined)
  }

  /** The next output (the previous one is stored), or undefined once the call has ended. */
  next(): Promise<ConversionOutput | undefined> {
    this.release(true)
    if (this.ready.length > 0) return Promise.resolve(this.ready.shift())
    return new Promise((resolve) => {
      this.waiting = resolve
    })
  }

  /** The pipeline wants no more outputs (it stopped on an error). */
  stop(): void {
    this.stopped = true
    this.release(false)
  }

  private hand(output: ConversionOutput | undefined): void {
    const waiting = this.waiting
    this.waiting = undefined
    if (waiting) waiting(output)
    else this.ready.push(output)
  }

  private release(more: boolean): void {
    const taken = this.taken
    this.taken = undefined
    taken?.(more)
  }
}

function wireInput(input: ConversionInput): WireInput {
  return { name: input.name, extension: input.extension, contentType: input.contentType, size: input.size }
}

function wireContext<K extends keyof Config>(ctx: ConversionContext<K>): WireContext {
  return { jobId: ctx.jobId, settings: ctx.settings, options: ctx.options, part: ctx.part, attempt: ctx.attempt }
}

/** A converter whose plan and work run in the engine Worker behind `engine`. */
export function remoteConverter<K extends keyof Config>(
  info: ConverterInfo<K>,
  engine: EngineService,
  plans: boolean,
): Converter<K> {
  const resources = (ctx: ConversionContext<K>) => (ctx.resources ? new Resources(ctx.resources) : undefined)
  return {
    ...info,
    plan: plans
      ? async (input, ctx) =>
          fromWire(await engine.plan(info.name, wireInput(input), new Source(input), wireContext(ctx), resources(ctx)))
      : undefined,
    async *convert(input, ctx) {
      const outputs = new Outputs()
      const call = engine
        .convert(info.name, wireInput(input), new Source(input), wireContext(ctx), outputs, resources(ctx))
        .finally(() => outputs.end())
      // Awaited after the outputs; observed here so that a pipeline stopping early leaves no unhandled rejection.
      call.catch(() => {})
      try {
        for (let output = await outputs.next(); output; output = await outputs.next()) yield output
      } finally {
        outputs.stop()
      }
      fromWire(await call)
    },
  }
}

/** A preview drawn in the engine Worker behind `engine`. */
export async function renderRemotely(
  engine: EngineService,
  kind: PreviewKindDrawn,
  input: ConversionInput,
  params: PreviewParams,
  settings: Partial<Config>,
): Promise<Uint8Array> {
  return fromWire(await engine.renderPreview(kind, wireInput(input), new Source(input), params, settings))
}
