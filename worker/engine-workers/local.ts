// Every engine in the caller's own isolate: for the tests' single Worker and the benches, never a deployed Worker
// (each engine family is a Worker of its own there: engines.ts, and AVIF is encoded in the AVIF Worker: avif.ts).
import { runnableConverter } from '../converters/runnable'
import { encodeAvif } from '../engines/image/avif-encode'
import type { Engines } from './engines'
import { renderImagePreview } from './image'
import { renderPdfPreview } from './pdf'
import { renderTextPreview } from './text'

const renderers = { pdf: renderPdfPreview, image: renderImagePreview, text: renderTextPreview }

export const localEngines: Engines = {
  converter: runnableConverter,
  renderPreview: (kind, input, params, settings) =>
    renderers[kind](input, params, settings, (image) => encodeAvif(image)),
}
