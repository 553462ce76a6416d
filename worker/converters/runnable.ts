// The work of every converter, by name: what the consumer Worker runs for a step. Only the consumer imports this
// module (the API Worker chooses converters from their info in registry.ts and bundles no engine).
import { audioToText } from './audio-to-text'
import type { Converter } from './converter'
import { htmlToPdf } from './html-to-pdf'
import { imageToPng } from './image-to-png'
import { officeToPdf } from './office-to-pdf'
import { pdfToPng } from './pdf-to-png'
import { pdfToText } from './pdf-to-text'
import { converterNamed } from './registry'
import { textToPng } from './text-to-png'

/** Each converter of the registry's list, with its work; each converter adds itself here with one line. */
const RUNNABLE: ReadonlyMap<string, Converter> = new Map(
  [officeToPdf, htmlToPdf, pdfToPng, pdfToText, imageToPng, textToPng, audioToText].map((converter) => [
    converter.name,
    converter as Converter,
  ]),
)

const isRunnable = (converter: object | undefined): converter is Converter =>
  typeof (converter as Converter | undefined)?.convert === 'function'

/** The converter named on a job step, with its work: a built-in one, or one registered whole at run time (tests). */
export function runnableConverter(name: string): Converter | undefined {
  const registered = converterNamed(name)
  if (!registered) return undefined
  const runnable = RUNNABLE.get(name) ?? registered
  return isRunnable(runnable) ? runnable : undefined
}
