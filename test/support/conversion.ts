// Builds converter inputs and contexts from in-memory bytes, for converter and engine tests in workerd.
import { env } from 'cloudflare:test'
import { loadConfig, type Config } from '../../worker/config'
import { ConversionError, type ConversionContext, type ConversionInput, type ConversionOutput, type Converter } from '../../worker/converters/converter'

export function inputFromBytes(name: string, bytes: Uint8Array, contentType = 'application/octet-stream'): ConversionInput {
  const extension = name.includes('.') ? name.slice(name.lastIndexOf('.')).toLowerCase() : ''
  return {
    name,
    extension,
    contentType,
    size: bytes.byteLength,
    stream: () => new Blob([bytes]).stream(),
    bytes: async (maxBytes) => {
      if (bytes.byteLength > maxBytes) throw new ConversionError(`file is larger than ${maxBytes} bytes`, { status: 413 })
      return bytes
    },
  }
}

export function testContext(overrides: Partial<ConversionContext> & { settings?: Partial<Config> } = {}): ConversionContext {
  const { settings, ...rest } = overrides
  return { jobId: 'test-job', config: { ...loadConfig(env), ...settings }, options: {}, ...rest }
}

export async function outputBytes(output: ConversionOutput): Promise<Uint8Array> {
  if (output.body instanceof Uint8Array) return output.body
  return new Uint8Array(await new Response(output.body).arrayBuffer())
}

/** Runs the converter to the end and answers all its outputs (the pipeline stores them one at a time instead). */
export async function convertAll(converter: Converter, input: ConversionInput, ctx: ConversionContext): Promise<ConversionOutput[]> {
  const outputs: ConversionOutput[] = []
  for await (const output of converter.convert(input, ctx)) outputs.push(output)
  return outputs
}

/** Limits for decoding the tests' own outputs and fixtures (the converters use the configured ones). */
export const TEST_IMAGE_LIMITS = { maxPixels: 40_000_000, maxSide: 20_000 }
