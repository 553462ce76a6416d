// The transcription provider the settings choose: Workers AI in production, an OpenAI-compatible server for
// self-hosting and local runs, or (auto, the default) whichever of the two runs here.
import type { Config } from '../../config'
import { openAiTranscriber } from './openai'
import type { TRANSCRIBE_SETTINGS } from './settings'
import { type Transcriber, TranscriptionError } from './transcript'
import { isWorkersAiUnavailable, workersAiTranscriber } from './workers-ai'

const NOT_CONFIGURED =
  'no transcription provider is available here: Workers AI runs only when deployed (TRANSCRIBE_PROVIDER=auto or workers-ai) and TRANSCRIBE_URL is not set. Set TRANSCRIBE_URL to an OpenAI-compatible server (whisper.cpp, speaches, LocalAI, OpenAI), or TRANSCRIBE_PROVIDER=openai with it'

export const noProvider = () => new TranscriptionError(NOT_CONFIGURED, { code: 'CONVERTER_MISCONFIGURED' })

type TranscribeSettings = Pick<Config, (typeof TRANSCRIBE_SETTINGS)[number]>

export function transcriberFor(config: TranscribeSettings, ai: Ai | undefined): Transcriber {
  const chunkBytes = config.AUDIO_CHUNK_BYTES || undefined
  if (config.TRANSCRIBE_PROVIDER === 'workers-ai') return workersAiTranscriber(ai, config.TRANSCRIBE_MODEL, chunkBytes)
  if (config.TRANSCRIBE_PROVIDER === 'openai') {
    if (!config.TRANSCRIBE_URL)
      throw new TranscriptionError(`TRANSCRIBE_PROVIDER=openai needs TRANSCRIBE_URL. ${NOT_CONFIGURED}`, {
        code: 'CONVERTER_MISCONFIGURED',
      })
    return openAiFrom(config, config.TRANSCRIBE_URL, chunkBytes)
  }
  return autoTranscriber(config, ai, chunkBytes)
}

function openAiFrom(config: TranscribeSettings, url: string, chunkBytes: number | undefined): Transcriber {
  // Workers AI model ids mean nothing to other servers: whisper.cpp ignores the model, OpenAI wants whisper-1.
  const model = config.TRANSCRIBE_MODEL.startsWith('@cf/') ? 'whisper-1' : config.TRANSCRIBE_MODEL
  return openAiTranscriber({ url, apiKey: config.TRANSCRIBE_API_KEY, model, chunkBytes })
}

/**
 * Bindings that answered they only run remotely: they answer so for the isolate's life, and each try logs an
 * uncaught error in local dev, so they are not tried again.
 */
const remoteOnly = new WeakSet<Ai>()

/**
 * Workers AI when the binding runs (deployed); when it is missing or answers that it only runs remotely (local
 * dev), the OpenAI-compatible server at TRANSCRIBE_URL; with neither, a failure that names the settings.
 */
function autoTranscriber(config: TranscribeSettings, ai: Ai | undefined, chunkBytes: number | undefined): Transcriber {
  const fallback = config.TRANSCRIBE_URL ? openAiFrom(config, config.TRANSCRIBE_URL, chunkBytes) : undefined
  if (!ai || remoteOnly.has(ai)) {
    if (!fallback) throw noProvider()
    return fallback
  }
  const workersAi = workersAiTranscriber(ai, config.TRANSCRIBE_MODEL, chunkBytes)
  return {
    name: fallback ? `${workersAi.name}, else ${fallback.name}` : workersAi.name,
    // Chunks cut for Workers AI fit the OpenAI-compatible server too (its limit is the larger one).
    maxChunkBytes: Math.min(workersAi.maxChunkBytes, fallback?.maxChunkBytes ?? Number.POSITIVE_INFINITY),
    async transcribe(audio, signal) {
      try {
        return await workersAi.transcribe(audio, signal)
      } catch (error) {
        if (!isWorkersAiUnavailable(error)) throw error
        remoteOnly.add(ai)
        if (!fallback) throw noProvider()
        return fallback.transcribe(audio, signal)
      }
    },
  }
}
