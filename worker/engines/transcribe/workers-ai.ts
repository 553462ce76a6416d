// Workers AI Whisper through the AI binding. whisper-large-v3-turbo takes base64 audio and answers segments;
// @cf/openai/whisper and whisper-tiny-en take a byte array and answer words: both become a Transcript.
import {
  type AudioForTranscription,
  type Transcriber,
  type Transcript,
  TranscriptionError,
  type TranscriptSegment,
} from './transcript'
import { LOCAL_MODE } from './settings'

type TurboOutput = {
  text: string
  transcription_info?: { language?: string; duration?: number }
  segments?: Array<{ start?: number; end?: number; text?: string }>
}
type WordsOutput = { text: string; words?: Array<{ word?: string; start?: number; end?: number }> }

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
  if (takesBase64(model)) {
    const turbo = output as TurboOutput
    const segments = (turbo.segments ?? []).map((segment) => ({
      start: segment.start ?? 0,
      end: segment.end ?? segment.start ?? 0,
      text: (segment.text ?? '').trim(),
    }))
    return { text: turbo.text.trim(), segments, language: turbo.transcription_info?.language }
  }
  const words = output as WordsOutput
  return { text: words.text.trim(), segments: segmentsFromWords(words.words ?? []) }
}

/**
 * Audio bytes per call. whisper-large-v3-turbo takes base64 (4 MiB → 5.6 MB of JSON); whisper and whisper-tiny-en
 * take a JSON array of numbers, about 3.6 characters per byte, so 1 MiB of audio is already a 4 MB request.
 */
export function workersAiChunkBytes(model: string): number {
  return takesBase64(model) ? 4 * MiB : 1 * MiB
}

const MiB = 1024 * 1024
const takesBase64 = (model: string) => model.includes('whisper-large-v3-turbo')

export function workersAiTranscriber(ai: Ai | undefined, model: string, chunkBytes?: number): Transcriber {
  return {
    name: `workers-ai ${model}`,
    maxChunkBytes: chunkBytes ?? workersAiChunkBytes(model),
    async transcribe(audio: AudioForTranscription) {
      if (!ai) throw unavailable()
      // Its chunks are small (workersAiChunkBytes): joined into one array for the JSON.
      const bytes = new Uint8Array(await new Blob([...audio.parts]).arrayBuffer())
      const input = takesBase64(model) ? { audio: bytes.toBase64() } : { audio: [...bytes] }
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

/** Workers AI cannot run here (no binding, or local dev, where the binding only runs remotely). */
class WorkersAiUnavailable extends TranscriptionError {}

export const isWorkersAiUnavailable = (error: unknown): boolean => error instanceof WorkersAiUnavailable

const unavailable = () =>
  new WorkersAiUnavailable(
    'no transcription provider is available here: Workers AI runs only when deployed. Set TRANSCRIBE_PROVIDER=openai and TRANSCRIBE_URL to an OpenAI-compatible server (whisper.cpp, speaches, LocalAI, OpenAI)',
    { code: 'CONVERTER_MISCONFIGURED' },
  )

/**
 * Workers AI's documented error codes ("Errors" in the Workers AI platform docs), each with whether a later try
 * can succeed and the code a client sees. 5006 (the input does not match the model's schema) and 4006 (daily
 * free allocation used up) are not in that table but are what the binding answers in those cases.
 */
const ERROR_CODES: Record<number, { retryable: boolean; code?: TranscriptionError['code'] }> = {
  3007: { retryable: true }, // timeout
  3008: { retryable: true }, // aborted
  3036: { retryable: true }, // account limited: rate or daily allocation
  3040: { retryable: true }, // out of capacity
  4006: { retryable: true }, // daily free allocation used up
  3003: { retryable: false }, // incomplete request
  3006: { retryable: false, code: 'FILE_TOO_LARGE' }, // request too large
  5004: { retryable: false }, // invalid data (base64)
  5006: { retryable: false }, // input validation
  3023: { retryable: false, code: 'CONVERTER_MISCONFIGURED' }, // account blocked
  3039: { retryable: false, code: 'CONVERTER_MISCONFIGURED' }, // finetune missing files
  3041: { retryable: false, code: 'CONVERTER_MISCONFIGURED' }, // account not allowed for private model
  3042: { retryable: false, code: 'CONVERTER_MISCONFIGURED' }, // invalid model id
  5005: { retryable: false, code: 'CONVERTER_MISCONFIGURED' }, // LoRA unsupported
  5007: { retryable: false, code: 'CONVERTER_MISCONFIGURED' }, // no such model
  5016: { retryable: false, code: 'CONVERTER_MISCONFIGURED' }, // model terms not agreed
  5018: { retryable: false, code: 'CONVERTER_MISCONFIGURED' }, // account not allowed for private model
  5019: { retryable: false, code: 'CONVERTER_MISCONFIGURED' }, // deprecated SDK
}

/** The documented code in a binding error ("AiError: 3040: Capacity temporarily exceeded…"), if any. */
export function workersAiErrorCode(message: string): number | undefined {
  const code = /(?:^|[\s:])([345]\d{3}):/.exec(message)?.[1]
  return code ? Number(code) : undefined
}

function classify(error: unknown): TranscriptionError {
  const message = (error as Error)?.message ?? String(error)
  if (LOCAL_MODE.test(message)) return unavailable()
  const known = ERROR_CODES[workersAiErrorCode(message) ?? -1]
  if (known)
    return new TranscriptionError(`Workers AI: ${message}`, {
      ...known,
      reason: known.retryable ? undefined : message,
      cause: error,
    })
  // An undocumented code: an HTTP status in the message decides, else it is taken as transient.
  const status = /\b([45]\d\d)\b/.exec(message)?.[1]
  const permanent = status?.startsWith('4') === true && status !== '429' && status !== '408'
  return new TranscriptionError(`Workers AI: ${message}`, {
    retryable: !permanent,
    reason: permanent ? message : undefined,
    cause: error,
  })
}
