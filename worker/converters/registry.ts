// The one registry of converters: "what does `.ext` become, and who does it". Two converters claiming one
// source extension is a programming error, refused when the module loads (so at start-up, and in tests).
import { audioToText } from './audio-to-text'
import type { Converter } from './converter'
import { imageToPng } from './image-to-png'
import { officeToPdf } from './office-to-pdf'
import { pdfToPng } from './pdf-to-png'
import { textToPng } from './text-to-png'

/** Every converter of the service; each converter module adds itself here with one line. */
const CONVERTERS: readonly Converter[] = [officeToPdf, pdfToPng, imageToPng, textToPng, audioToText]

export function buildRegistry(converters: readonly Converter[]): ReadonlyMap<string, Converter> {
  const byExtension = new Map<string, Converter>()
  for (const converter of converters) {
    for (const extension of converter.from) {
      const claimed = byExtension.get(extension)
      if (claimed) throw new Error(`converters ${claimed.name} and ${converter.name} both claim ${extension}`)
      byExtension.set(extension, converter)
    }
  }
  for (const converter of converters) {
    for (const extension of Object.keys(converter.refuses ?? {})) {
      const claimed = byExtension.get(extension)
      if (claimed) throw new Error(`converter ${converter.name} refuses ${extension}, which ${claimed.name} claims`)
    }
  }
  return byExtension
}

const converters: Converter[] = [...CONVERTERS]
const registry = new Map(buildRegistry(CONVERTERS))

/**
 * Adds a converter at run time (the tests' chain converters); refuses an extension that is already claimed,
 * exactly as the start-up check does.
 */
export function registerConverter(converter: Converter): void {
  for (const [extension, claimed] of buildRegistry([...converters, converter])) registry.set(extension, claimed)
  converters.push(converter)
}

/** The converter for a lower-case extension with its dot (".docx"), if any. */
export function converterFor(extension: string): Converter | undefined {
  return registry.get(extension.toLowerCase())
}

/** Why a converter refuses a lower-case extension with its dot (".wma"), when one does. */
export function refusalFor(extension: string): string | undefined {
  const lower = extension.toLowerCase()
  return converters.find((converter) => converter.refuses && Object.hasOwn(converter.refuses, lower))?.refuses?.[lower]
}

/** A converter by its name, as stored on a job step. */
export function converterNamed(name: string): Converter | undefined {
  return converters.find((converter) => converter.name === name)
}

export function allConverters(): readonly Converter[] {
  return converters
}
