// The one registry of converters: "what does `.ext` become, and who does it". It holds each converter's info
// (worker/converters/catalog/), never its engines: the API Worker chooses converters from it and bundles no engine;
// the consumer Worker finds the work by name (worker/converters/runnable.ts). Two converters claiming one source
// extension (or sniffed type) is a programming error, refused when the module loads (so at start-up, and in tests).
import { z } from '@hono/zod-openapi'
import { audioToTextInfo } from './catalog/audio-to-text'
import { htmlToPdfInfo } from './catalog/html-to-pdf'
import { imageToPngInfo } from './catalog/image-to-png'
import { officeToPdfInfo } from './catalog/office-to-pdf'
import { pdfToPngInfo, pdfToTextInfo } from './catalog/pdf'
import { textToPngInfo } from './catalog/text-to-png'
import type { Config } from '../config'
import type { ErrorCode } from '../errors'
import { acceptsWithExtension, settingsFor, type ConverterInfo, type OptionValues } from './converter'

/** Every converter of the service; each converter adds its info here with one line. */
const CONVERTERS: readonly ConverterInfo[] = [
  officeToPdfInfo,
  htmlToPdfInfo,
  pdfToPngInfo,
  pdfToTextInfo,
  imageToPngInfo,
  textToPngInfo,
  audioToTextInfo,
]

/**
 * Types too generic to choose a converter alone (any zip, any OLE2 file, any CSV): a converter may read them
 * under its extensions (.docm is a plain zip to the sniffer), but a file named otherwise never goes to it by them.
 */
const GENERIC_TYPES = new Set(['application/zip', 'application/x-ole-storage', 'text/csv', 'text/plain'])

export interface Registry {
  readonly byExtension: ReadonlyMap<string, ConverterInfo>
  readonly byContentType: ReadonlyMap<string, ConverterInfo>
}

/**
 * Indexes the default chain's converters by extension and by sniffed type; throws when two claim the same one,
 * or when two converters (on request or not) turn one extension into the same target.
 */
export function buildRegistry(converters: readonly ConverterInfo[]): Registry {
  const byExtension = new Map<string, ConverterInfo>()
  const byContentType = new Map<string, ConverterInfo>()
  const byTarget = new Map<string, ConverterInfo>()
  const claim = (index: Map<string, ConverterInfo>, key: string, converter: ConverterInfo) => {
    const claimed = index.get(key)
    if (claimed) throw new Error(`converters ${claimed.name} and ${converter.name} both claim ${key}`)
    index.set(key, converter)
  }
  for (const converter of converters) {
    for (const extension of converter.from) claim(byTarget, `${extension} → ${converter.to}`, converter)
    if (converter.onRequest) continue
    for (const extension of converter.from) claim(byExtension, extension, converter)
    for (const contentType of converter.accepts ?? [])
      if (!GENERIC_TYPES.has(contentType)) claim(byContentType, contentType, converter)
  }
  const options = new Map<string, ConverterInfo>()
  for (const converter of converters) {
    for (const extension of Object.keys(converter.refusals?.sources ?? {})) {
      const claimed = byExtension.get(extension)
      if (claimed) throw new Error(`converter ${converter.name} refuses ${extension}, which ${claimed.name} claims`)
    }
    for (const name of Object.keys(converter.options?.fields ?? {})) claim(options, `option ${name}`, converter)
  }
  return { byExtension, byContentType }
}

const converters: ConverterInfo[] = [...CONVERTERS]
let registry = buildRegistry(CONVERTERS)

/**
 * Adds a converter at run time (the tests' chain converters, whole: info and work); refuses an extension or type
 * that is already claimed, exactly as the start-up check does.
 */
export function registerConverter(converter: ConverterInfo): void {
  registry = buildRegistry([...converters, converter])
  converters.push(converter)
}

/** The converter for a lower-case extension with its dot (".docx"), if any. */
export function converterFor(extension: string): ConverterInfo | undefined {
  return registry.byExtension.get(extension.toLowerCase())
}

export type ConverterChoice =
  | { readonly converter: ConverterInfo; readonly refusal?: undefined }
  | { readonly converter?: undefined; readonly refusal: string; readonly code: RefusalCode }

/** The error table's codes for a file no converter takes: nothing converts its kind (415), or not this file (422). */
export type RefusalCode = Extract<ErrorCode, 'UNSUPPORTED_FORMAT' | 'NOT_CONVERTIBLE'>

/**
 * The converter for a stored file: by its extension when a converter claims it and reads its sniffed type; by the
 * sniffed type when no converter claims or refuses the extension. Otherwise why not: NOT_CONVERTIBLE for an empty
 * file, for bytes the extension's converter does not read and for an extension a converter refuses;
 * UNSUPPORTED_FORMAT when nothing converts the kind of file. An extension whose converter refuses the bytes is refused outright, never converted
 * by another converter's reading of them.
 */
export function converterForFile(file: {
  readonly name: string
  readonly extension: string
  readonly contentType: string
  readonly size?: number
}): ConverterChoice {
  const extension = file.extension.toLowerCase()
  const byExtension = registry.byExtension.get(extension)
  if (file.size === 0 && (byExtension || registry.byContentType.has(file.contentType)))
    return { refusal: `"${file.name}" is empty: there is nothing to convert`, code: 'NOT_CONVERTIBLE' }
  if (byExtension) {
    if (acceptsWithExtension(byExtension, file.contentType)) return { converter: byExtension }
    const types = byExtension.accepts?.join(', ')
    return {
      refusal: `"${file.name}" is named ${extension} but its content is ${file.contentType}; ${byExtension.name} reads only ${types}`,
      code: 'NOT_CONVERTIBLE',
    }
  }
  const refused = refusalFor(extension)
  if (refused) return { refusal: `"${file.name}" cannot be converted: ${refused}`, code: 'NOT_CONVERTIBLE' }
  const byContentType = registry.byContentType.get(file.contentType)
  if (byContentType) return { converter: byContentType }
  // UNSUPPORTED_FORMAT (415) names what is accepted (RFC 9110 §15.5.16: the server "MAY ... indicate which content types are accepted").
  return {
    refusal: `no converter accepts ${extension || 'files without an extension'}; these extensions convert: ${[...registry.byExtension.keys()].sort().join(', ')}`,
    code: 'UNSUPPORTED_FORMAT',
  }
}

/** Why a converter refuses a lower-case extension with its dot (".wma"), when one does. */
export function refusalFor(extension: string): string | undefined {
  const lower = extension.toLowerCase()
  const sources = converters.map((converter) => converter.refusals?.sources)
  return sources.find((reasons) => reasons && Object.hasOwn(reasons, lower))?.[lower]
}

/** Every converter that reads this stored file, the default one first (the first link of any chain from it). */
function convertersReading(file: { readonly extension: string; readonly contentType: string }): ConverterInfo[] {
  const extension = file.extension.toLowerCase()
  const claiming = converters.filter((converter) => converter.from.includes(extension))
  if (claiming.length > 0) return claiming.filter((converter) => acceptsWithExtension(converter, file.contentType))
  if (refusalFor(extension)) return []
  return converters.filter((converter) => converter.accepts?.includes(file.contentType))
}

/**
 * The converters that read an extension: a chain's later links, whose inputs are named by the converter that made
 * them.
 */
function stepsFrom(extension: string): readonly ConverterInfo[] {
  return converters.filter((converter) => converter.from.includes(extension))
}

/**
 * The converter that starts the shortest chain from this file to `target` (".txt"), or why there is none: the
 * reason a converter of the file's kind gives for that target (images and OCR), else that nothing reaches it.
 */
export function converterToward(
  file: { readonly name: string; readonly extension: string; readonly contentType: string },
  target: string,
): ConverterChoice {
  const wanted = target.toLowerCase()
  const first = convertersReading(file)
  const seen = new Set<string>([file.extension.toLowerCase()])
  let frontier = first.map((converter) => ({ start: converter, at: converter.to }))
  while (frontier.length > 0) {
    const found = frontier.find((entry) => entry.at === wanted)
    if (found) return { converter: found.start }
    const next: typeof frontier = []
    for (const entry of frontier) {
      if (seen.has(entry.at)) continue
      seen.add(entry.at)
      for (const converter of stepsFrom(entry.at)) next.push({ start: entry.start, at: converter.to })
    }
    frontier = next
  }
  const reason = first.map((converter) => converter.refusals?.targets?.[wanted]).find(Boolean)
  if (reason) return { refusal: `"${file.name}" cannot be converted to ${wanted}: ${reason}`, code: 'NOT_CONVERTIBLE' }
  const choice = converterForFile(file)
  if (!choice.converter) return choice
  return {
    refusal: `no chain of converters turns ${file.extension || 'this file'} into ${wanted}`,
    code: 'NOT_CONVERTIBLE',
  }
}

/** The chains from a lower-case extension with its dot, leaving out `skipped` converters: the extensions they reach
 * (nearest first) and the converters they run. */
function walkChains(
  extension: string,
  skipped: ReadonlySet<ConverterInfo> = new Set(),
): { targets: string[]; converters: Set<ConverterInfo> } {
  const start = extension.toLowerCase()
  const targets: string[] = []
  const used = new Set<ConverterInfo>()
  let frontier = [start]
  while (frontier.length > 0) {
    const next: string[] = []
    for (const at of frontier) {
      for (const converter of stepsFrom(at)) {
        if (skipped.has(converter)) continue
        used.add(converter)
        if (converter.to === start || targets.includes(converter.to)) continue
        targets.push(converter.to)
        next.push(converter.to)
      }
    }
    frontier = next
  }
  return { targets, converters: used }
}

/** Every extension some chain reaches from a lower-case extension with its dot, nearest first. */
export function reachableTargets(extension: string): string[] {
  return walkChains(extension).targets
}

/** Why the converter cannot run here (a provider that is not configured), naming what to set; undefined when it can. */
export async function unavailableReason(
  converter: ConverterInfo,
  config: Config,
  ai: Ai | undefined,
): Promise<string | undefined> {
  return converter.unavailable?.(settingsFor(converter, config), { ai })
}

/**
 * The targets of an extension that cannot be made here, each with the reason: every chain to them runs a converter
 * that is not configured (audio → text with no transcription provider). Empty when every target can be made; only
 * converters with a condition are asked, and only those a chain from the extension runs.
 */
export async function unavailableTargets(
  extension: string,
  config: Config,
  ai: Ai | undefined,
): Promise<Record<string, string>> {
  const { targets, converters } = walkChains(extension)
  const reasons = new Map<ConverterInfo, string>()
  for (const converter of converters) {
    const reason = await unavailableReason(converter, config, ai)
    if (reason) reasons.set(converter, reason)
  }
  if (reasons.size === 0) return {}
  const stillReached = new Set(walkChains(extension, new Set(reasons.keys())).targets)
  const reason = [...new Set(reasons.values())].join('; ')
  return Object.fromEntries(targets.filter((target) => !stillReached.has(target)).map((target) => [target, reason]))
}

/**
 * The options a job may carry (`options` of POST /files/:id/convert): every converter's fields, each optional, an
 * unknown one refused, and each converter's rule across its fields. Built from the service's converters once.
 */
export const JobOptionsRequest = z
  .strictObject(Object.assign({}, ...CONVERTERS.map((converter) => converter.options?.fields ?? {})))
  .partial()
  .superRefine((options, ctx) => {
    for (const converter of CONVERTERS) {
      const refusal = converter.options?.refuse?.(options)
      if (refusal) ctx.addIssue({ code: 'custom', message: refusal })
    }
  })

/** The longest text a job keeps for one option, whichever converter declares it. */
export const OPTION_MAX_CHARS = Math.max(0, ...CONVERTERS.map((converter) => converter.options?.storedMaxChars ?? 0))

/** The options whose values are secrets (sealed in D1, never shown, wiped when the job ends), from every converter. */
export const SECRET_OPTIONS: readonly string[] = CONVERTERS.flatMap((converter) => converter.options?.secrets ?? [])

/**
 * A request's options (checked by JobOptionsRequest) as a job keeps them for a source of this extension, each
 * converter storing its own; or why the source cannot take one of them.
 */
export function storedJobOptions(
  extension: string,
  options: Readonly<Record<string, unknown>>,
): { readonly options: OptionValues } | { readonly refusal: string } {
  let stored: { readonly options: OptionValues } = { options: options as OptionValues }
  for (const converter of CONVERTERS) {
    const result = converter.options?.store?.(extension.toLowerCase(), stored.options)
    if (result && 'refusal' in result) return result
    if (result) stored = result
  }
  return stored
}

/** A converter by its name, as stored on a job step. */
export function converterNamed(name: string): ConverterInfo | undefined {
  return converters.find((converter) => converter.name === name)
}

export function allConverters(): readonly ConverterInfo[] {
  return converters
}
