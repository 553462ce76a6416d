// What the consumer Worker and an engine Worker say to each other over a service binding (Workers RPC). Each engine
// Worker bundles one family of engines (PDFium, the image codecs, the text renderer), so each starts with only its
// own WebAssembly and converts in an isolate (and a 128 MB heap) of its own. Errors cross as data: RPC keeps an
// error's message but not its class or fields, and a ConversionError's code and retry flag decide a job.
import type { Config } from '../config'
import {
  ConversionError,
  type ConversionErrorCode,
  type ConversionOutput,
  type ConversionPlan,
  type PartRange,
  type ResourceReader,
} from '../converters/converter'
import type { RawImage } from '../engines/png/encode'
import type { PreviewParams } from '../previews/params'

export interface WireError {
  readonly message: string
  readonly retryable: boolean
  /** Absent from an engine Worker deployed without error codes: the retry flag then chooses the default code. */
  readonly code?: ConversionErrorCode
}

export type WireResult<T> = { readonly value: T; readonly error?: undefined } | { readonly error: WireError }

/** A ConversionError as data; any other error is not the input's fault and is thrown on (the step is retried). */
export function toWireError(error: unknown): WireError {
  if (!(error instanceof ConversionError)) throw error
  return { message: error.message, retryable: error.retryable, code: error.code }
}

export function fromWire<T>(result: WireResult<T>): T {
  if (result.error)
    throw new ConversionError(result.error.message, { retryable: result.error.retryable, code: result.error.code })
  return result.value
}

export async function asWireResult<T>(work: () => Promise<T>): Promise<WireResult<T>> {
  try {
    return { value: await work() }
  } catch (error) {
    return { error: toWireError(error) }
  }
}

/** The input file as the engine Worker sees it; its bytes come from the consumer (`InputSource`) on demand. */
export interface WireInput {
  readonly name: string
  readonly extension: string
  readonly contentType: string
  readonly size: number
}

/** The consumer's side of the input (an RpcTarget): the stored file's bytes, read when the converter asks. */
export interface InputSource {
  stream(): Promise<ReadableStream<Uint8Array>>
  bytes(maxBytes: number): Promise<WireResult<Uint8Array>>
}

export interface WireContext {
  readonly jobId: string
  readonly settings: Partial<Config>
  readonly options: Readonly<Record<string, string | number | boolean>>
  readonly part?: PartRange
  readonly attempt?: number
}

/** Where the engine Worker puts each output, one at a time; false when the consumer wants no more. */
export interface OutputSink {
  put(output: ConversionOutput): Promise<boolean>
}

export type PreviewKindDrawn = 'image' | 'pdf' | 'text'

/** The methods every engine Worker's entrypoint has. */
export interface EngineService {
  plan(
    converter: string,
    input: WireInput,
    source: InputSource,
    context: WireContext,
    resources?: ResourceReader,
  ): Promise<WireResult<ConversionPlan>>
  convert(
    converter: string,
    input: WireInput,
    source: InputSource,
    context: WireContext,
    sink: OutputSink,
    resources?: ResourceReader,
  ): Promise<WireResult<null>>
  renderPreview(
    kind: PreviewKindDrawn,
    input: WireInput,
    source: InputSource,
    params: PreviewParams,
    settings: Partial<Config>,
  ): Promise<WireResult<Uint8Array>>
}

/**
 * The AVIF Worker's entrypoint (avif.ts): a drawing engine Worker hands it a preview's pixels (at most
 * AVIF_PREVIEW_MAX_SIDE a side: 4 MiB of RGBA) and it answers them encoded, or its refusal as data.
 */
export interface AvifService {
  encode(image: RawImage): Promise<WireResult<Uint8Array>>
}

/** A drawing engine Worker's binding to the AVIF Worker (wrangler.engine-{pdf,image,text}.toml [[services]]). */
export interface AvifBindings {
  readonly AVIF_ENGINE: AvifService
}
