// Audio → transcript: a .txt (the text) and a .vtt (the same with timestamps, WebVTT) as sibling outputs.
// WAV and MP3 longer than one provider call are cut at sample/frame boundaries and transcribed in parallel
// (a few at a time), then joined in order with shifted timestamps; other formats go whole.
import { AudioFormatError, probeAudio, splitAudio, type AudioChunk } from '../engines/audio/split'
import { transcriberFor } from '../engines/transcribe/provider'
import { joinTranscripts, toWebVtt, wordCount } from '../engines/transcribe/transcript'
import { ConversionError, type Converter } from './converter'

/** Audio bytes per provider call: well inside Workers AI's request size once base64-encoded. */
export const CHUNK_BYTES = 4 * 1024 * 1024
/** Provider calls in flight at once, to stay inside Workers AI's rate limits. */
const PARALLEL_CALLS = 3

const CONTENT_TYPES: Record<string, string> = {
  '.mp3': 'audio/mpeg',
  '.wav': 'audio/wav',
  '.m4a': 'audio/mp4',
  '.ogg': 'audio/ogg',
  '.flac': 'audio/flac',
  '.webm': 'audio/webm',
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

export const audioToText: Converter = {
  name: 'audio-to-text',
  from: Object.keys(CONTENT_TYPES),
  to: '.txt',
  async convert(input, ctx) {
    const { AUDIO_MAX_BYTES, AUDIO_MAX_SECONDS } = ctx.config
    // The provider takes whole files (or chunks of them): AUDIO_MAX_BYTES bounds what is read.
    const bytes = await input.bytes(AUDIO_MAX_BYTES)
    const transcriber = transcriberFor(ctx.config, ctx.ai)
    const format = input.extension === '.wav' ? 'wav' : input.extension === '.mp3' ? 'mp3' : undefined
    let chunks: AudioChunk[]
    if (format) {
      try {
        const info = probeAudio(bytes, format)
        if (info.durationSeconds > AUDIO_MAX_SECONDS) {
          throw new ConversionError(`the audio is ${Math.round(info.durationSeconds)} s long; the limit is ${AUDIO_MAX_SECONDS} s (AUDIO_MAX_SECONDS)`)
        }
        chunks = splitAudio(bytes, format, CHUNK_BYTES)
      } catch (error) {
        if (error instanceof AudioFormatError) throw new ConversionError(`the ${format.toUpperCase()} file cannot be read: ${error.message}`, { status: 422 })
        throw error
      }
    } else {
      if (bytes.byteLength > CHUNK_BYTES) {
        throw new ConversionError(`${input.extension} audio over ${CHUNK_BYTES} bytes cannot be split here: convert it to MP3 or WAV`, { status: 422 })
      }
      chunks = [{ bytes, startSeconds: 0, durationSeconds: 0 }]
    }
    const contentType = CONTENT_TYPES[input.extension] ?? input.contentType
    const parts = await inParallel(chunks, PARALLEL_CALLS, async (chunk) => ({
      startSeconds: chunk.startSeconds,
      transcript: await transcriber.transcribe(
        { bytes: chunk.bytes, filename: input.name, contentType, durationSeconds: chunk.durationSeconds || undefined },
        ctx.signal,
      ),
    }))
    const transcript = joinTranscripts(parts)
    const durationSeconds = chunks.reduce((sum, chunk) => sum + chunk.durationSeconds, 0)
    const metadata = { word_count: wordCount(transcript.text), language: transcript.language ?? null, duration_seconds: Math.round(durationSeconds * 100) / 100 || null }
    const encoder = new TextEncoder()
    return [
      { index: 0, total: 2, extension: '.txt', contentType: 'text/plain', body: encoder.encode(transcript.text ? `${transcript.text}\n` : ''), metadata },
      { index: 1, total: 2, extension: '.vtt', contentType: 'text/vtt', body: encoder.encode(toWebVtt(transcript)), metadata },
    ]
  },
}
