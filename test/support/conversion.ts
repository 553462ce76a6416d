// Builds converter inputs and contexts from in-memory bytes, for converter and engine tests in workerd.
import { env } from 'cloudflare:test'
import { loadConfig, type Config } from '../../worker/config'
import {
  ConversionError,
  settingsFor,
  type ConversionContext,
  type ConversionInput,
  type ConversionOutput,
  type Converter,
} from '../../worker/converters/converter'

export function inputFromBytes(
  name: string,
  bytes: Uint8Array,
  contentType = 'application/octet-stream',
): ConversionInput {
  const extension = name.includes('.') ? name.slice(name.lastIndexOf('.')).toLowerCase() : ''
  return {
    name,
    extension,
    contentType,
    size: bytes.byteLength,
    stream: () => new Blob([bytes]).stream(),
    bytes: async (maxBytes) => {
      if (bytes.byteLength > maxBytes)
        throw new ConversionError(`file is larger than ${maxBytes} bytes`, { code: 'FILE_TOO_LARGE' })
      return bytes
    },
  }
}

/** A context with every setting (the converter reads its own), overridden by `settings`. */
export function testContext(
  overrides: Partial<Omit<ConversionContext, 'settings'>> & { settings?: Partial<Config> } = {},
): ConversionContext<keyof Config> {
  const { settings, ...rest } = overrides
  return { jobId: 'test-job', settings: { ...loadConfig(env), ...settings }, options: {}, ...rest }
}

export async function outputBytes(output: ConversionOutput): Promise<Uint8Array> {
  if (output.body instanceof Uint8Array) return output.body
  return new Uint8Array(await new Response(output.body).arrayBuffer())
}

/**
 * Runs the converter to the end and answers all its outputs (the pipeline stores them one at a time instead).
 * Like the pipeline, it hands the converter only the settings it lists.
 */
export async function convertAll(
  converter: Converter,
  input: ConversionInput,
  ctx: ConversionContext,
): Promise<ConversionOutput[]> {
  const outputs: ConversionOutput[] = []
  for await (const output of converter.convert(input, {
    ...ctx,
    settings: settingsFor(converter, ctx.settings as Config),
  }))
    outputs.push(output)
  return outputs
}

/** Limits for decoding the tests' own outputs and fixtures (the converters use the configured ones). */
export const TEST_IMAGE_LIMITS = { maxPixels: 40_000_000, maxSide: 20_000 }
