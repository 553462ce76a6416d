// The transcription provider the settings choose: Workers AI in production, an OpenAI-compatible server for
// self-hosting and local runs.
import type { Config } from '../../config'
import { ConversionError } from '../../converters/converter'
import { openAiTranscriber } from './openai'
import type { Transcriber } from './transcript'
import { notConfigured, workersAiTranscriber } from './workers-ai'

export function transcriberFor(config: Config, ai: Ai | undefined): Transcriber {
  if (config.TRANSCRIBE_PROVIDER === 'workers-ai') return workersAiTranscriber(ai, config.TRANSCRIBE_MODEL)
  if (!config.TRANSCRIBE_URL) {
    throw new ConversionError(`TRANSCRIBE_PROVIDER=openai needs TRANSCRIBE_URL. ${notConfigured().message}`)
  }
  // Workers AI model ids mean nothing to other servers: whisper.cpp ignores the model, OpenAI wants whisper-1.
  const model = config.TRANSCRIBE_MODEL.startsWith('@cf/') ? 'whisper-1' : config.TRANSCRIBE_MODEL
  return openAiTranscriber({ url: config.TRANSCRIBE_URL, apiKey: config.TRANSCRIBE_API_KEY, model })
}
