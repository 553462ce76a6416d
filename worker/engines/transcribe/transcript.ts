// The one shape every transcription provider is normalised to, joining the transcripts of consecutive chunks
// (timestamps shifted by each chunk's start), and WebVTT from it.
import type { ErrorCode } from '../../errors'

/**
 * A provider's failure. Its message may name the server or a setting: for the log. `reason` is the provider's
 * own complaint about the audio, fit for the client; `retryable` and `code` (of the error table) say what the
 * pipeline does with it.
 */
export class TranscriptionError extends Error {
  override readonly name = 'TranscriptionError'
  readonly retryable: boolean
  readonly code: Extract<
    ErrorCode,
    'FILE_TOO_LARGE' | 'CONVERSION_FAILED' | 'CONVERTER_MISCONFIGURED' | 'CONVERTER_UNAVAILABLE'
  >
  readonly reason: string | undefined

  constructor(
    message: string,
    options: { retryable?: boolean; code?: TranscriptionError['code']; reason?: string; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause })
    this.retryable = options.retryable ?? false
    this.code = options.code ?? (this.retryable ? 'CONVERTER_UNAVAILABLE' : 'CONVERSION_FAILED')
    this.reason = options.reason
  }
}

export interface TranscriptSegment {
  readonly start: number
  readonly end: number
  readonly text: string
}

export interface Transcript {
  readonly text: string
  readonly segments: readonly TranscriptSegment[]
  readonly language?: string
}

export interface AudioForTranscription {
  /** The file in parts, sent one after another (a chunk's header and a view of the whole file's data). */
  readonly parts: readonly Uint8Array[]
  readonly filename: string
  readonly contentType: string
  /** Seconds, when known: a provider without timestamps then spans its text over them. */
  readonly durationSeconds?: number
}

export interface Transcriber {
  readonly name: string
  /** The largest audio (bytes) one call takes: longer WAV and MP3 are cut into chunks of at most this. */
  readonly maxChunkBytes: number
  transcribe(audio: AudioForTranscription, signal?: AbortSignal): Promise<Transcript>
}

export function joinTranscripts(
  parts: ReadonlyArray<{ readonly startSeconds: number; readonly transcript: Transcript }>,
): Transcript {
  const segments = parts.flatMap(({ startSeconds, transcript }) =>
    transcript.segments.map((segment) => ({
      start: segment.start + startSeconds,
      end: segment.end + startSeconds,
      text: segment.text.trim(),
    })),
  )
  const text = parts
    .map(({ transcript }) => transcript.text.trim())
    .filter(Boolean)
    .join(' ')
  return {
    text,
    segments: segments.filter((segment) => segment.text),
    language: parts.find(({ transcript }) => transcript.language)?.transcript.language,
  }
}

function timestamp(seconds: number): string {
  const ms = Math.round(seconds * 1000)
  const pad = (value: number, width = 2) => String(value).padStart(width, '0')
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)}.${pad(ms % 1000, 3)}`
}

export function toWebVtt(transcript: Transcript): string {
  const cues = transcript.segments.map(
    (segment, i) =>
      `${i + 1}\n${timestamp(segment.start)} --> ${timestamp(segment.end)}\n${segment.text.replace(/-->/g, '->')}`,
  )
  return `WEBVTT\n\n${cues.join('\n\n')}${cues.length ? '\n' : ''}`
}

export function wordCount(text: string): number {
  return text.split(/\s+/).filter(Boolean).length
}
