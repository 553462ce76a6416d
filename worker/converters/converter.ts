// The one interface every converter implements. A converter turns one stored file into one or more new
// files; it knows nothing of HTTP, queues or D1 (the pipeline does), only its input, its own settings (the keys
// it lists in `settings`, never the whole config with its secrets) and engines.
import type { ZodType } from 'zod'
import type { Config } from '../config'

// Converters and the engines' entry points fail alike; the class is a leaf so that engines throw it too.
export { ConversionError, type ConversionErrorCode } from '../conversion-error'

/** Option values as a job keeps them and a converter reads them (ctx.options). */
export type OptionValues = Record<string, string | number | boolean>

/**
 * The options a client may give a job for a converter (`options` of POST /files/:id/convert), declared by the
 * converter: the registry joins every converter's into the request's schema, so the pipeline names none of them.
 * A job's options are one set for its whole chain: every step reads them.
 */
export interface ConverterOptions {
  /** Each option by its name on the wire, with its type and limits. Each name is declared by one converter. */
  readonly fields: Readonly<Record<string, ZodType>>
  /** The longest text a job keeps for one option (a value kept as JSON text counts as that text). */
  readonly storedMaxChars: number
  /** The options whose values are secrets: sealed before they reach D1, never shown, wiped when the job ends. */
  readonly secrets?: readonly string[]
  /** Why these options cannot go together (a rule across fields), or undefined. */
  refuse?(options: Readonly<Record<string, unknown>>): string | undefined
  /**
   * The options as a job keeps them, for a source of this lower-case extension with its dot: this converter's
   * fields in their stored form (a JSON value as its text), the others as they came; or why the source cannot take
   * them (an option for another kind of document).
   */
  store?(
    extension: string,
    options: Readonly<Record<string, unknown>>,
  ): { readonly options: OptionValues } | { readonly refusal: string }
}

/** The source file of a conversion step. The bytes come from storage on demand. */
export interface ConversionInput {
  readonly name: string // file name with extension, e.g. "report.docx"
  readonly extension: string // lower-case with the dot: ".docx"
  readonly contentType: string // sniffed MIME type
  readonly size: number // bytes
  /** A fresh stream of the bytes (each call reads storage again). */
  stream(): ReadableStream<Uint8Array>
  /**
   * The whole file in memory, for engines that need it (WASM decoders). Throws a permanent ConversionError
   * when the file is larger than maxBytes, before reading anything.
   */
  bytes(maxBytes: number): Promise<Uint8Array>
}

/** A slice of a step, for converters that fan out (PDF pages): outputs [start, end) of `total`. */
export interface PartRange {
  readonly start: number
  readonly end: number
}

/** Read-only files under one prefix of the file store (the converter's `…_PREFIX` setting), never user files. */
export interface ResourceReader {
  /** Up to `limit` objects under the prefix. */
  list(limit: number): Promise<Array<{ readonly key: string; readonly size: number }>>
  /** An object's bytes; undefined when it is gone or outside the prefix. */
  read(key: string): Promise<ArrayBuffer | undefined>
}

export interface ConversionContext<K extends keyof Config = keyof Config> {
  readonly jobId: string
  /** The converter's own settings: only the keys it lists in `settings`. */
  readonly settings: Pick<Config, K>
  /** Options given by the client in the convert request (e.g. { landscape: true, password: "…" }). */
  readonly options: Readonly<OptionValues>
  /** Set when the pipeline runs one part of a step that `plan` split. */
  readonly part?: PartRange
  /** Bindings an engine may need; only what exists in this runtime. */
  readonly ai?: Ai
  /** The sidecar Container's stub (GOTENBERG_CONTAINER), when the Worker has one: Gotenberg's routes go through it. */
  readonly gotenberg?: { fetch(request: Request): Promise<Response> }
  /** Resources stored under the converter's `…_PREFIX` setting (fallback fonts); absent when it lists none. */
  readonly resources?: ResourceReader
  readonly signal?: AbortSignal
  /** Which delivery of the step this is (1 on the first): converters may report it, never depend on it. */
  readonly attempt?: number
}

export interface ConversionOutput {
  /** Position among all outputs of the step, 0-based; "n of m" uses index + 1 and total. */
  readonly index: number
  readonly total: number
  readonly extension: string // ".png"
  readonly contentType: string // "image/png"
  readonly body: ReadableStream<Uint8Array> | Uint8Array
  /** Facts recorded on the new file record (e.g. { width, height, page }). */
  readonly metadata?: Readonly<Record<string, unknown>>
}

export interface ConversionPlan {
  /** Total number of outputs the step will produce. */
  readonly total: number
  /** How to split the step into messages; one part covers everything when absent. */
  readonly parts: readonly PartRange[]
  /** Facts recorded on the source record (e.g. { page_count: 12 }). */
  readonly sourceMetadata?: Readonly<Record<string, unknown>>
}

/** What a converter refuses, with reasons (lower-case extensions with the dot as keys). */
export interface Refusals {
  /**
   * Extensions of this converter's kind of input that it cannot take ({ '.wma': 'Windows Media Audio is not …' }):
   * a file with one is refused with 422 and that reason.
   */
  readonly sources?: Readonly<Record<string, string>>
  /** Targets no chain from this converter's inputs reaches ({ '.txt': 'reading text in images (OCR) is not supported' }). */
  readonly targets?: Readonly<Record<string, string>>
}

/**
 * What a converter reads and makes, and what it refuses: plain data, no engine behind it. The API Worker chooses
 * converters from these alone (worker/converters/catalog/), so it bundles no conversion engine.
 */
export interface ConverterInfo<K extends keyof Config = keyof Config> extends ConverterCapabilities<K> {
  readonly name: string
  /**
   * The settings the converter reads: the pipeline gives it these and no others (none when absent). A listed setting
   * named `…_PREFIX` names a prefix of the file store it reads resources under (ctx.resources, resourcePrefixSetting).
   */
  readonly settings?: readonly K[]
  /** Extensions with the dot, lower-case: ['.pdf']. */
  readonly from: readonly string[]
  /** Target extension with the dot: '.png'. */
  readonly to: string
}

/** What only some converters declare, each optional (docs/architecture.md, The Converter interface). */
export interface ConverterCapabilities<K extends keyof Config = keyof Config> {
  /**
   * The sniffed content types this converter reads ('image/jpeg'). A file whose extension no converter claims
   * converts here by its type (a JPEG named photo.bin); one with an extension in `from` must have a listed type (see
   * acceptsWithExtension). Without it, every type passes (text formats have no magic number).
   */
  readonly accepts?: readonly string[]
  /**
   * True for a converter that runs only when a client asks for its target (`to: ".txt"`), never in the default
   * chain; it may then share a source extension with the default converter of that extension.
   */
  readonly onRequest?: boolean
  /** What the converter says no to before any job starts, each with the reason a client is given. */
  readonly refusals?: Refusals
  /**
   * True when one output per source content is enough (a LibreOffice or Chromium run on the sidecar): a step finds
   * the output an earlier job's step of this converter made from the same content with the same options and takes
   * it instead of converting again, or waits while such a step is converting. For converters of one output.
   */
  readonly reusable?: boolean
  /**
   * Why the converter cannot run here, naming the setting to change (a provider that is not configured), or
   * undefined when it can. The API Worker asks before it starts a job (503 CONVERTER_NOT_CONFIGURED) and
   * GET /convert/:extension reports it; it sees the converter's own settings and the bindings, never an engine.
   */
  unavailable?(settings: Pick<Config, K>, bindings: { readonly ai?: Ai | undefined }): Promise<string | undefined>
  /** The options a job may carry for this converter. */
  readonly options?: ConverterOptions
}

/** A converter: its info and the work, which only the consumer Worker bundles (worker/converters/runnable.ts). */
export interface Converter<K extends keyof Config = keyof Config> extends ConverterInfo<K> {
  /** Optional: converters whose work splits (PDF pages) say how, after a cheap look at the input. */
  plan?(input: ConversionInput, ctx: ConversionContext<K>): Promise<ConversionPlan>
  /**
   * Converts the input (or ctx.part of it), yielding outputs one at a time: the pipeline stores each one before
   * it asks for the next, so a converter never holds more than the output it is making (`async *convert`).
   * Yielding nothing ends the chain here (e.g. a PNG that would not get smaller).
   */
  convert(input: ConversionInput, ctx: ConversionContext<K>): AsyncIterable<ConversionOutput>
}

/** A converter's info, its settings' keys inferred from its `settings` list. */
export function describeConverter<const K extends keyof Config>(info: ConverterInfo<K>): ConverterInfo<K> {
  return info
}

/** A converter, its settings' keys inferred from its `settings` list (so `ctx.settings` has exactly those). */
export function defineConverter<const K extends keyof Config>(converter: Converter<K>): Converter<K> {
  return converter
}

/** The slice of the configuration a converter listed, and nothing else. */
export function settingsFor<K extends keyof Config>(converter: ConverterInfo<K>, config: Config): Pick<Config, K> {
  return Object.fromEntries((converter.settings ?? []).map((key) => [key, config[key]])) as Pick<Config, K>
}

/** The setting naming the prefix of the file store a converter reads resources under: its listed `…_PREFIX` setting. */
export function resourcePrefixSetting<K extends keyof Config>(converter: ConverterInfo<K>): K | undefined {
  return converter.settings?.find((key) => key.endsWith('_PREFIX'))
}

/** Whether a file with one of the converter's extensions converts here, given the type sniffed from its bytes. */
export function acceptsWithExtension(converter: ConverterInfo, contentType: string): boolean {
  return converter.accepts === undefined || converter.accepts.includes(contentType)
}
