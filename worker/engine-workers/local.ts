// Every engine in the caller's own isolate: for the tests' single Worker and the benches, never a deployed Worker
// (each engine family is a Worker of its own there: engines.ts, and AVIF is encoded in the AVIF Worker: avif.ts).
import { runnableConverter } from '../converters/runnable'
import { encodeAvif } from '../engines/image/avif-encode'
import type { AvifEncoder } from '../previews/encode'
import type { Engines } from './engines'
import { renderImagePreview } from './image'
import { renderPdfPreview } from './pdf'
import { renderTextPreview } from './text'

const renderers = { pdf: renderPdfPreview, image: renderImagePreview, text: renderTextPreview }

/** The engines here, AVIF encoded by `avif` (the tests' single Worker: its AVIF_ENGINE binding, through RPC). */
export function localEnginesWith(avif: AvifEncoder): Engines {
  return {
    converter: runnableConverter,
    renderPreview: (kind, input, params, settings) => renderers[kind](input, params, settings, avif),
  }
}

/** The engines here, AVIF too. */
export const localEngines: Engines = localEnginesWith((image) => encodeAvif(image))
