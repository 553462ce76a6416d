// An engine Worker's entrypoint: runs the converters and preview drawings of its family for the consumer Worker,
// which calls it through a service binding (protocol.ts). The input's bytes and the outputs' storage stay with the
// consumer: this Worker has no binding at all.
import { WorkerEntrypoint } from 'cloudflare:workers'
import type { Config } from '../config'
import type { ConversionContext, ConversionInput, Converter, ResourceReader } from '../converters/converter'
import type { AvifEncoder } from '../previews/encode'
import type { PreviewParams } from '../previews/params'
import {
  type AvifBindings,
  asWireResult,
  fromWire,
  type EngineService,
  type InputSource,
  type OutputSink,
  type PreviewKindDrawn,
  type WireContext,
  type WireInput,
  type WireResult,
} from './protocol'

/** Draws one preview: its pixels, encoded in the format asked (AVIF by `avif`). */
export type PreviewRenderer = (
  input: ConversionInput,
  params: PreviewParams,
  settings: Config,
  avif: AvifEncoder,
) => Promise<Uint8Array>

/** The input as a converter expects it, its bytes asked of the consumer's source. */
function remoteInput(input: WireInput, source: InputSource): ConversionInput {
  return {
    ...input,
    stream() {
      const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>()
      source
        .stream()
        .then((body) => body.pipeTo(writable))
        .catch((error) => writable.abort(error).catch(() => {}))
      return readable
    },
    async bytes(maxBytes) {
      return fromWire(await source.bytes(maxBytes))
    },
  }
}

function context(wire: WireContext, resources: ResourceReader | undefined): ConversionContext {
  return { ...wire, settings: wire.settings as Config, resources }
}

/** The entrypoint class of an engine Worker running these converters and drawing these kinds of preview. */
export function engineEntrypoint(
  converters: readonly Converter[],
  previews: Partial<Record<PreviewKindDrawn, PreviewRenderer>>,
) {
  const named = (name: string) => {
    const converter = converters.find((candidate) => candidate.name === name)
    if (!converter) throw new Error(`this engine Worker does not run ${name}`)
    return converter
  }
  return class EngineWorker extends WorkerEntrypoint<AvifBindings> implements EngineService {
    plan(name: string, input: WireInput, source: InputSource, wire: WireContext, resources?: ResourceReader) {
      const converter = named(name)
      return asWireResult(async () => {
        if (!converter.plan) throw new Error(`${name} does not plan`)
        return converter.plan(remoteInput(input, source), context(wire, resources))
      })
    }

    convert(
      name: string,
      input: WireInput,
      source: InputSource,
      wire: WireContext,
      sink: OutputSink,
      resources?: ResourceReader,
    ): Promise<WireResult<null>> {
      const converter = named(name)
      return asWireResult(async () => {
        for await (const output of converter.convert(remoteInput(input, source), context(wire, resources))) {
          if (!(await sink.put(output))) break
        }
        return null
      })
    }

    renderPreview(
      kind: PreviewKindDrawn,
      input: WireInput,
      source: InputSource,
      params: PreviewParams,
      settings: Partial<Config>,
    ) {
      const render = previews[kind]
      if (!render) throw new Error(`this engine Worker draws no ${kind} preview`)
      // AVIF in the AVIF Worker: its encoder's WASM and heap in an isolate of their own.
      const avif: AvifEncoder = async (image) => fromWire(await this.env.AVIF_ENGINE.encode(image))
      return asWireResult(() => render(remoteInput(input, source), params, settings as Config, avif))
    }
  }
}
