// Any OpenAI-compatible POST /v1/audio/transcriptions (whisper.cpp's server, speaches, LocalAI, OpenAI). Asks
// for verbose_json (segments with timestamps); servers that answer plain json get one segment over the audio.
import { type AudioForTranscription, type Transcriber, type Transcript, TranscriptionError } from './transcript'

interface OpenAiResponse {
  text?: string
  language?: string
  duration?: number
  segments?: Array<{ start?: number; end?: number; text?: string }>
}

export function transcriptionUrl(base: string): string {
  const url = new URL(base)
  if (!url.pathname.endsWith('/audio/transcriptions'))
    url.pathname = `${url.pathname.replace(/\/$/, '').replace(/\/v1$/, '')}/v1/audio/transcriptions`
  return url.toString()
}

export function normaliseOpenAi(body: OpenAiResponse, durationSeconds?: number): Transcript {
  const text = (body.text ?? '').trim()
  const segments = body.segments?.length
    ? body.segments.map((segment) => ({
        start: segment.start ?? 0,
        end: segment.end ?? segment.start ?? 0,
        text: (segment.text ?? '').trim(),
      }))
    : text
      ? [{ start: 0, end: body.duration ?? durationSeconds ?? 0, text }]
      : []
  return { text, segments, language: body.language }
}

/** OpenAI's documented upload limit is 25 MB; whisper.cpp's server and speaches take at least that. */
export const OPENAI_CHUNK_BYTES = 24 * 1024 * 1024

export function openAiTranscriber(options: {
  url: string
  apiKey?: string
  model: string
  timeoutMs?: number
  chunkBytes?: number
}): Transcriber {
  const endpoint = transcriptionUrl(options.url)
  return {
    name: `openai-compatible ${endpoint}`,
    maxChunkBytes: options.chunkBytes ?? OPENAI_CHUNK_BYTES,
    async transcribe(audio: AudioForTranscription, signal?: AbortSignal) {
      const form = multipartForm(
        { model: options.model, response_format: 'verbose_json' },
        { name: audio.filename, type: audio.contentType, parts: audio.parts },
      )
      let response: Response
      try {
        response = await fetch(endpoint, {
          method: 'POST',
          body: form.body,
          headers: {
            'content-type': form.contentType,
            ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
          },
          signal: signal ?? AbortSignal.timeout(options.timeoutMs ?? 600_000),
        })
      } catch (error) {
        throw new TranscriptionError(
          `the transcription server at ${endpoint} cannot be reached: ${(error as Error)?.message ?? error}`,
          { retryable: true, cause: error },
        )
      }
      const text = await response.text()
      if (!response.ok) {
        let reason = text.slice(0, 500)
        try {
          const parsed = JSON.parse(text) as { error?: { message?: string } | string; message?: string }
          reason = (typeof parsed.error === 'string' ? parsed.error : parsed.error?.message) ?? parsed.message ?? reason
        } catch {}
        const transient = response.status === 429 || response.status >= 500
        throw new TranscriptionError(`the transcription server at ${endpoint} answered ${response.status}: ${reason}`, {
          retryable: transient,
          reason: transient ? undefined : reason,
        })
      }
      try {
        return normaliseOpenAi(JSON.parse(text) as OpenAiResponse, audio.durationSeconds)
      } catch {
        // response_format=text servers: the body is the transcript.
        return normaliseOpenAi({ text }, audio.durationSeconds)
      }
    },
  }
}

/** A name or filename in a multipart/form-data header, as the HTML standard encodes it: `"`, CR and LF escaped. */
const quoted = (value: string) => `"${value.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A')}"`

/**
 * A multipart/form-data body (RFC 7578) of the file and the fields, streamed from the file's parts as they are
 * through a FixedLengthStream, so the request has a Content-Length as FormData's would. No copy of the audio:
 * FormData and File would copy a chunk twice.
 */
function multipartForm(
  fields: Record<string, string>,
  file: { name: string; type: string; parts: readonly Uint8Array[] },
): { body: ReadableStream<Uint8Array>; contentType: string } {
  const boundary = `edgefloor-${crypto.randomUUID()}`
  const encoder = new TextEncoder()
  const pieces = [
    encoder.encode(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename=${quoted(file.name)}\r\nContent-Type: ${file.type}\r\n\r\n`,
    ),
    ...file.parts,
    encoder.encode(
      `\r\n${Object.entries(fields)
        .map(
          ([name, value]) =>
            `--${boundary}\r\nContent-Disposition: form-data; name=${quoted(name)}\r\n\r\n${value}\r\n`,
        )
        .join('')}--${boundary}--\r\n`,
    ),
  ]
  const stream = new FixedLengthStream(pieces.reduce((sum, piece) => sum + piece.byteLength, 0))
  const writer = stream.writable.getWriter()
  // A request that fails (the server unreachable) cancels the stream: the writes then fail, and that is all.
  writer.closed.catch(() => undefined)
  // Written as the request reads them: not awaited here, or the first write would wait for a reader that never comes.
  void (async () => {
    for (const piece of pieces) await writer.write(piece)
    await writer.close()
  })().catch((error) => writer.abort(error).catch(() => undefined))
  return { body: stream.readable, contentType: `multipart/form-data; boundary=${boundary}` }
}
