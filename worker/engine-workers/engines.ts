// Where the consumer Worker's steps and drawings run: the converters with heavy engines in their family's engine
// Worker (service bindings), Office, HTML and Markdown (HTTP calls to the sidecar) and audio (Workers AI) in the
// consumer itself.
import type { Config } from '../config'
import { audioToText } from '../converters/audio-to-text'
import { imageToPngInfo } from '../converters/catalog/image-to-png'
import { pdfToPngInfo, pdfToTextInfo } from '../converters/catalog/pdf'
import { textToPngInfo } from '../converters/catalog/text-to-png'
import type { ConversionInput, Converter } from '../converters/converter'
import { htmlToPdf } from '../converters/html-to-pdf'
import { officeToPdf } from '../converters/office-to-pdf'
import type { PreviewParams } from '../previews/params'
import { remoteConverter, renderRemotely } from './client'
import type { EngineService, PreviewKindDrawn } from './protocol'

/** What the pipeline and the preview drawing ask of the conversion engines, wherever they run. */
export interface Engines {
  /** The converter named on a job step, with its work. */
  converter(name: string): Converter | undefined
  /** A preview of the input, drawn and encoded. */
  renderPreview(
    kind: PreviewKindDrawn,
    input: ConversionInput,
    params: PreviewParams,
    settings: Config,
  ): Promise<Uint8Array>
}

/** The consumer Worker's bindings to the engine Workers (wrangler.consumer.toml [[services]]). */
export interface EngineBindings {
  readonly PDF_ENGINE: EngineService
  readonly IMAGE_ENGINE: EngineService
  readonly TEXT_ENGINE: EngineService
}

/** The settings a preview drawing reads: the image and PDF limits (a text preview reads none). */
const PREVIEW_SETTINGS = [
  'IMAGE_MAX_BYTES',
  'IMAGE_MAX_PIXELS',
  'IMAGE_MAX_SIDE',
  ...(pdfToPngInfo.settings ?? []),
] as const

export function remoteEngines(env: EngineBindings): Engines {
  const converters = new Map<string, Converter>(
    [
      officeToPdf as Converter,
      htmlToPdf as Converter,
      audioToText as Converter,
      remoteConverter(pdfToPngInfo, env.PDF_ENGINE, true),
      remoteConverter(pdfToTextInfo, env.PDF_ENGINE, false),
      remoteConverter(imageToPngInfo, env.IMAGE_ENGINE, false),
      remoteConverter(textToPngInfo, env.TEXT_ENGINE, true),
    ].map((converter) => [converter.name, converter]),
  )
  const drawers: Record<PreviewKindDrawn, EngineService> = {
    pdf: env.PDF_ENGINE,
    image: env.IMAGE_ENGINE,
    text: env.TEXT_ENGINE,
  }
  return {
    converter: (name) => converters.get(name),
    renderPreview: (kind, input, params, settings) => {
      const wanted = Object.fromEntries(PREVIEW_SETTINGS.map((key) => [key, settings[key]]))
      return renderRemotely(drawers[kind], kind, input, params, wanted)
    },
  }
}
