// Audio → transcript: a .txt (the text) and a .vtt (the same with timestamps, WebVTT) as sibling outputs.
// The bytes must be the audio their extension says (magic numbers) before any provider is called. WAV and MP3
// larger than one provider call are cut at sample/frame boundaries and transcribed in parallel (a few at a
// time), then joined in order with shifted timestamps; other formats go whole.
import { audioContainer } from '../engines/audio/container'
import { AudioFormatError, probeAudio, splitAudio, type AudioChunk } from '../engines/audio/split'
import { checkAudioStructure } from '../engines/audio/structure'
import { transcriberFor } from '../engines/transcribe/provider'
import { joinTranscripts, toWebVtt, TranscriptionError, wordCount } from '../engines/transcribe/transcript'
import { AUDIO_FORMATS, audioToTextInfo } from './catalog/audio-to-text'
import {
  ConversionError,
  defineConverter,
  type ConversionContext,
  type ConversionInput,
  type ConversionOutput,
} from './converter'

/** Provider calls in flight at once, to stay inside Workers AI's rate limits. */
const PARALLEL_CALLS = 3

/**
 * Refuses bytes that are not the audio their extension names, or whose structure is cut, lying or implausible
 * (checkAudioStructure), so no provider is called for them.
 */
function checkContainer(input: ConversionInput, bytes: Uint8Array): void {
  const expected = AUDIO_FORMATS[input.extension]
  const found = audioContainer(bytes.subarray(0, 16))
  if (expected && found !== expected.container) {
    const what = found
      ? `its bytes are ${found.toUpperCase()} audio: rename it`
      : 'its first bytes are not an audio signature'
    throw new ConversionError(`"${input.name}" is not ${expected.label} audio (${what})`, { code: 'CONVERSION_FAILED' })
  }
  if (!found) return
  try {
    checkAudioStructure(bytes, found)
  } catch (error) {
    if (!(error instanceof AudioFormatError)) throw error
    throw new ConversionError(`the ${expected?.label ?? found.toUpperCase()} file cannot be read: ${error.message}`, {
      code: 'CONVERSION_FAILED',
      cause: error,
    })
  }
}

async function inParallel<T, R>(items: readonly T[], limit: number, run: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length)
  let next = 0
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const index = next++
      results[index] = await run(items[index]!)
    }
  })
  await Promise.all(workers)
  return results
}

export const audioToText = defineConverter({
  ...audioToTextInfo,
  async *convert(input, ctx) {
    try {
      yield* transcribeAudio(input, ctx)
    } catch (error) {
      throw error instanceof TranscriptionError ? toConversionError(error) : error
    }
  },
})

/** The provider's failure as the job tells it: its complaint about the audio, else what kind of trouble it had;
 * server addresses and setting names stay in the cause, for the log. */
function toConversionError(error: TranscriptionError): ConversionError {
  const options = { retryable: error.retryable, cause: error }
  if (error.retryable)
    return new ConversionError('the transcription service is unavailable', {
      ...options,
      code: error.code === 'CONVERTER_MISCONFIGURED' ? 'CONVERTER_MISCONFIGURED' : 'CONVERTER_UNAVAILABLE',
    })
  if (error.code === 'CONVERTER_MISCONFIGURED')
    return new ConversionError('no transcription service is configured, or it is misconfigured', {
      ...options,
      code: 'CONVERTER_MISCONFIGURED',
    })
  if (error.code === 'FILE_TOO_LARGE')
    return new ConversionError('the audio is too large for the transcription service', {
      ...options,
      code: 'FILE_TOO_LARGE',
    })
  return new ConversionError(`the transcription service refused the audio${error.reason ? `: ${error.reason}` : ''}`, {
    ...options,
    code: 'CONVERSION_FAILED',
  })
}

async function* transcribeAudio(
  input: ConversionInput,
  ctx: ConversionContext<NonNullable<typeof audioToTextInfo.settings>[number]>,
): AsyncGenerator<ConversionOutput> {
  const { AUDIO_MAX_BYTES, AUDIO_MAX_SECONDS } = ctx.settings
  // The provider takes whole files (or chunks of them): AUDIO_MAX_BYTES bounds what is read.
  const bytes = await input.bytes(AUDIO_MAX_BYTES)
  checkContainer(input, bytes)
  const transcriber = transcriberFor(ctx.settings, ctx.ai)
  const chunkBytes = transcriber.maxChunkBytes
  const format = input.extension === '.wav' ? 'wav' : input.extension === '.mp3' ? 'mp3' : undefined
  let chunks: AudioChunk[]
  if (format) {
    try {
      const info = probeAudio(bytes, format)
      if (info.durationSeconds > AUDIO_MAX_SECONDS) {
        throw new ConversionError(
          `the audio is ${Math.round(info.durationSeconds)} s long; the limit is ${AUDIO_MAX_SECONDS} s`,
        )
      }
      chunks = splitAudio(bytes, format, chunkBytes)
    } catch (error) {
      if (error instanceof AudioFormatError)
        throw new ConversionError(`the ${format.toUpperCase()} file cannot be read: ${error.message}`, {
          code: 'CONVERSION_FAILED',
        })
      throw error
    }
  } else {
    if (bytes.byteLength > chunkBytes) {
      throw new ConversionError(
        `${input.extension} audio over ${chunkBytes} bytes (one call to the transcription service) cannot be split here: convert it to MP3 or WAV`,
        { code: 'CONVERSION_FAILED' },
      )
    }
    chunks = [{ parts: [bytes], startSeconds: 0, durationSeconds: 0 }]
  }
  const contentType = AUDIO_FORMATS[input.extension]?.contentType ?? input.contentType
  const parts = await inParallel(chunks, PARALLEL_CALLS, async (chunk) => ({
    startSeconds: chunk.startSeconds,
    transcript: await transcriber.transcribe(
      { parts: chunk.parts, filename: input.name, contentType, durationSeconds: chunk.durationSeconds || undefined },
      ctx.signal,
    ),
  }))
  const transcript = joinTranscripts(parts)
  const durationSeconds = chunks.reduce((sum, chunk) => sum + chunk.durationSeconds, 0)
  const metadata = {
    word_count: wordCount(transcript.text),
    language: transcript.language ?? null,
    duration_seconds: Math.round(durationSeconds * 100) / 100 || null,
  }
  const encoder = new TextEncoder()
  yield {
    index: 0,
    total: 2,
    extension: '.txt',
    contentType: 'text/plain',
    body: encoder.encode(transcript.text ? `${transcript.text}\n` : ''),
    metadata,
  }
  yield {
    index: 1,
    total: 2,
    extension: '.vtt',
    contentType: 'text/vtt',
    body: encoder.encode(toWebVtt(transcript)),
    metadata,
  }
}
