// Workers AI Whisper through the AI binding. whisper-large-v3-turbo takes base64 audio and answers segments;
// @cf/openai/whisper and whisper-tiny-en take a byte array and answer words: both become a Transcript.
import { ConversionError } from '../../converters/converter'
import type { AudioForTranscription, Transcriber, Transcript, TranscriptSegment } from './transcript'

type TurboOutput = {
  text: string
  transcription_info?: { language?: string; duration?: number }
  segments?: Array<{ start?: number; end?: number; text?: string }>
}
type WordsOutput = { text: string; words?: Array<{ word?: string; start?: number; end?: number }> }

const LOCAL_MODE = /run remotely|remote resource|not supported in local/i

function toBase64(bytes: Uint8Array): string {
  let binary = ''
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
  return btoa(binary)
}

/** Words into caption-sized segments: a new one after a sentence end or every ~8 seconds. */
function segmentsFromWords(words: NonNullable<WordsOutput['words']>): TranscriptSegment[] {
  const segments: TranscriptSegment[] = []
  let current: { start: number; end: number; words: string[] } | undefined
  for (const word of words) {
    if (!word.word) continue
    const start = word.start ?? current?.end ?? 0
    const end = word.end ?? start
    current ??= { start, end, words: [] }
    current.words.push(word.word.trim())
    current.end = end
    if (/[.!?]$/.test(word.word.trim()) || current.end - current.start >= 8) {
      segments.push({ start: current.start, end: current.end, text: current.words.join(' ') })
      current = undefined
    }
  }
  if (current) segments.push({ start: current.start, end: current.end, text: current.words.join(' ') })
  return segments
}

export function normaliseWorkersAi(model: string, output: unknown): Transcript {
  if (model.includes('whisper-large-v3-turbo')) {
    const turbo = output as TurboOutput
    const segments = (turbo.segments ?? []).map((segment) => ({ start: segment.start ?? 0, end: segment.end ?? segment.start ?? 0, text: (segment.text ?? '').trim() }))
    return { text: turbo.text.trim(), segments, language: turbo.transcription_info?.language }
  }
  const words = output as WordsOutput
  return { text: words.text.trim(), segments: segmentsFromWords(words.words ?? []) }
}

export function workersAiTranscriber(ai: Ai | undefined, model: string): Transcriber {
  return {
    name: `workers-ai ${model}`,
    async transcribe(audio: AudioForTranscription) {
      if (!ai) throw notConfigured()
      const input = model.includes('whisper-large-v3-turbo') ? { audio: toBase64(audio.bytes) } : { audio: [...audio.bytes] }
      let output: unknown
      try {
        output = await (ai.run as (model: string, input: unknown) => Promise<unknown>)(model, input)
      } catch (error) {
        throw classify(error)
      }
      return normaliseWorkersAi(model, output)
    },
  }
}

export const notConfigured = () =>
  new ConversionError(
    'no transcription provider is available here: Workers AI runs only when deployed. Set TRANSCRIBE_PROVIDER=openai and TRANSCRIBE_URL to an OpenAI-compatible server (whisper.cpp, speaches, LocalAI, OpenAI)',
  )

function classify(error: unknown): ConversionError {
  const message = (error as Error)?.message ?? String(error)
  if (LOCAL_MODE.test(message)) return notConfigured()
  const status = /\b([45]\d\d)\b/.exec(message)?.[1]
  const permanent = status !== undefined && status.startsWith('4') && status !== '429'
  return new ConversionError(`Workers AI: ${message}`, { retryable: !permanent, cause: error })
}
