// Transcription providers: Workers AI against a stand-in binding answering each model's documented shape, and
// the OpenAI-compatible client against the loopback whisper.cpp stand-in.
import { env } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { openAiTranscriber, transcriptionUrl } from '../../worker/engines/transcribe/openai'
import { joinTranscripts, toWebVtt } from '../../worker/engines/transcribe/transcript'
import {
  normaliseWorkersAi,
  workersAiErrorCode,
  workersAiTranscriber,
} from '../../worker/engines/transcribe/workers-ai'

/** Output of @cf/openai/whisper-large-v3-turbo as documented (workers-types Ai_Cf_Openai_Whisper_Large_V3_Turbo_Output). */
const TURBO_OUTPUT = {
  transcription_info: { language: 'en', language_probability: 0.98, duration: 2.8, duration_after_vad: 2.6 },
  text: 'Hello there. General Kenobi.',
  word_count: 4,
  segments: [
    {
      start: 0,
      end: 1.2,
      text: ' Hello there.',
      temperature: 0,
      avg_logprob: -0.2,
      compression_ratio: 0.8,
      no_speech_prob: 0.01,
      words: [{ word: 'Hello', start: 0, end: 0.5 }],
    },
    {
      start: 1.2,
      end: 2.8,
      text: ' General Kenobi.',
      temperature: 0,
      avg_logprob: -0.3,
      compression_ratio: 0.8,
      no_speech_prob: 0.02,
      words: [],
    },
  ],
  vtt: 'WEBVTT\n\n…',
}

/** Output of @cf/openai/whisper and whisper-tiny-en (Ai_Cf_Openai_Whisper_Output). */
const WORDS_OUTPUT = {
  text: 'Hello there. General Kenobi.',
  word_count: 4,
  words: [
    { word: 'Hello', start: 0, end: 0.4 },
    { word: 'there.', start: 0.4, end: 1.1 },
    { word: 'General', start: 1.3, end: 1.9 },
    { word: 'Kenobi.', start: 1.9, end: 2.7 },
  ],
  vtt: 'WEBVTT\n\n…',
}

function standInAi(answer: (model: string, input: any) => unknown) {
  const calls: Array<{ model: string; input: any }> = []
  const ai = {
    async run(model: string, input: unknown) {
      calls.push({ model, input })
      return answer(model, input)
    },
  } as unknown as Ai
  return { ai, calls }
}

const audio = {
  parts: [new Uint8Array([1, 2]), new Uint8Array([3, 250])],
  filename: 'clip.mp3',
  contentType: 'audio/mpeg',
}

describe('workers-ai transcriber', () => {
  it('sends base64 to whisper-large-v3-turbo and keeps its segments and language', async () => {
    const { ai, calls } = standInAi(() => TURBO_OUTPUT)
    const transcript = await workersAiTranscriber(ai, '@cf/openai/whisper-large-v3-turbo').transcribe(audio)
    expect(calls[0]).toEqual({ model: '@cf/openai/whisper-large-v3-turbo', input: { audio: 'AQID+g==' } })
    expect(transcript).toEqual({
      text: 'Hello there. General Kenobi.',
      language: 'en',
      segments: [
        { start: 0, end: 1.2, text: 'Hello there.' },
        { start: 1.2, end: 2.8, text: 'General Kenobi.' },
      ],
    })
  })

  it.each(['@cf/openai/whisper', '@cf/openai/whisper-tiny-en'])(
    'sends a byte array to %s and makes sentences of its words',
    async (model) => {
      const { ai, calls } = standInAi(() => WORDS_OUTPUT)
      const transcript = await workersAiTranscriber(ai, model).transcribe(audio)
      expect(calls[0]!.input).toEqual({ audio: [1, 2, 3, 250] })
      expect(transcript.segments).toEqual([
        { start: 0, end: 1.1, text: 'Hello there.' },
        { start: 1.3, end: 2.7, text: 'General Kenobi.' },
      ])
    },
  )

  it.each([
    [
      'Binding AI needs to be run remotely',
      false,
      'CONVERTER_MISCONFIGURED',
      'no transcription provider is available here',
    ],
    ['AiError: 3040: Capacity temporarily exceeded, please try again.', true, 'CONVERTER_UNAVAILABLE', 'Workers AI: '],
    [
      'AiError: 3036: You have used up your daily free allocation of 10,000 neurons.',
      true,
      'CONVERTER_UNAVAILABLE',
      'Workers AI: ',
    ],
    [
      '4006: you have used up your daily free allocation of 10,000 neurons',
      true,
      'CONVERTER_UNAVAILABLE',
      'Workers AI: ',
    ],
    ['AiError: 3007: Request timeout', true, 'CONVERTER_UNAVAILABLE', 'Workers AI: '],
    ['AiError: 3008: Request was aborted', true, 'CONVERTER_UNAVAILABLE', 'Workers AI: '],
    [
      "AiError: 5006: Error: required properties at '/' are 'audio'",
      false,
      'CONVERSION_FAILED',
      'Workers AI: AiError: 5006',
    ],
    ['AiError: 5004: Invalid data type for base64 input: object', false, 'CONVERSION_FAILED', 'Workers AI: '],
    ['AiError: 3003: Request is missing headers or body: body', false, 'CONVERSION_FAILED', 'Workers AI: '],
    ['AiError: 3006: Request is too large', false, 'FILE_TOO_LARGE', 'Workers AI: '],
    ['AiError: 5007: No such model @cf/openai/whisperx or task', false, 'CONVERTER_MISCONFIGURED', 'Workers AI: '],
    ['AiError: 3042: The model name is invalid', false, 'CONVERTER_MISCONFIGURED', 'Workers AI: '],
    ['AiError: 3023: Service unavailable for account', false, 'CONVERTER_MISCONFIGURED', 'Workers AI: '],
    // Without a documented code, an HTTP status in the message decides; with neither, it is transient.
    ['InferenceUpstreamError: 500 Internal', true, 'CONVERTER_UNAVAILABLE', 'Workers AI: '],
    ['AiError: 400 Bad input: audio is not decodable', false, 'CONVERSION_FAILED', 'Workers AI: AiError: 400'],
    ['AiError: 9999: something new', true, 'CONVERTER_UNAVAILABLE', 'Workers AI: '],
  ])('maps "%s" to retryable=%s, code %s', async (message, retryable, code, start) => {
    const { ai } = standInAi(() => {
      throw new Error(message)
    })
    const failure = await workersAiTranscriber(ai, '@cf/openai/whisper-large-v3-turbo')
      .transcribe(audio)
      .catch((error) => error)
    expect(failure).toMatchObject({ name: 'TranscriptionError', retryable, code })
    expect(failure.message.startsWith(start)).toBe(true)
  })

  it.each([
    ['AiError: 3040: Capacity temporarily exceeded', 3040],
    ['3036: Account limited', 3036],
    ['InferenceUpstreamError: 500 Internal', undefined],
    ['took 2024 ms', undefined],
  ])('reads the documented code in "%s"', (message, code) => {
    expect(workersAiErrorCode(message)).toBe(code)
  })

  it('normalises a text-only answer', () => {
    expect(normaliseWorkersAi('@cf/openai/whisper', { text: ' hi ' })).toEqual({ text: 'hi', segments: [] })
  })
})

describe('openai-compatible transcriber (whisper.cpp stand-in)', () => {
  const transcriber = openAiTranscriber({ url: env.WHISPER_URL, apiKey: 'k-123', model: 'whisper-1' })

  it('asks for verbose_json and keeps the segments', async () => {
    const transcript = await transcriber.transcribe({ ...audio, filename: 'clip.wav' })
    expect(transcript).toEqual({
      text: 'The quick brown fox. Jumps over the lazy dog.',
      language: 'english',
      segments: [
        { start: 0, end: 1.4, text: 'The quick brown fox.' },
        { start: 1.4, end: 3.1, text: 'Jumps over the lazy dog.' },
      ],
    })
    const requests = (await (await fetch(`${env.WHISPER_URL}/requests`)).json()) as Array<{
      authorization: string
      fields: Record<string, string>
      file: { size: number }
    }>
    expect(requests.at(-1)).toMatchObject({
      authorization: 'Bearer k-123',
      fields: { model: 'whisper-1', response_format: 'verbose_json' },
      file: { size: 4 },
    })
  })

  it('spans a plain json answer over the audio', async () => {
    const transcript = await transcriber.transcribe({ ...audio, filename: 'clip.json.wav', durationSeconds: 2.5 })
    expect(transcript.segments).toEqual([{ start: 0, end: 2.5, text: 'The quick brown fox. Jumps over the lazy dog.' }])
  })

  it.each([
    ['reject.wav', false, 'answered 400: Invalid file format.'],
    ['busy.wav', true, 'answered 503: server busy'],
  ])('maps %s to retryable=%s', async (filename, retryable, message) => {
    await expect(transcriber.transcribe({ ...audio, filename })).rejects.toMatchObject({
      name: 'TranscriptionError',
      retryable,
      message: expect.stringMatching(/^the transcription server at http:.* /),
    })
    await expect(transcriber.transcribe({ ...audio, filename })).rejects.toMatchObject({
      message: expect.stringContaining(message),
    })
  })

  it('treats an unreachable server as transient', async () => {
    const failure = await openAiTranscriber({ url: 'http://127.0.0.1:9', model: 'whisper-1' })
      .transcribe(audio)
      .catch((error) => error)
    expect(failure).toMatchObject({ retryable: true })
  })

  it.each([
    ['http://127.0.0.1:8080', 'http://127.0.0.1:8080/v1/audio/transcriptions'],
    ['http://h/v1', 'http://h/v1/audio/transcriptions'],
    ['https://api.openai.com/v1/audio/transcriptions', 'https://api.openai.com/v1/audio/transcriptions'],
  ])('finds the endpoint from %s', (base, url) => {
    expect(transcriptionUrl(base)).toBe(url)
  })
})

describe('joining chunks', () => {
  it('shifts each chunk by its start and writes WebVTT', () => {
    const joined = joinTranscripts([
      { startSeconds: 0, transcript: { text: 'One.', segments: [{ start: 0, end: 1, text: 'One.' }], language: 'en' } },
      {
        startSeconds: 300.5,
        transcript: { text: ' Two --> three. ', segments: [{ start: 0.25, end: 2, text: ' Two --> three. ' }] },
      },
    ])
    expect(joined).toEqual({
      text: 'One. Two --> three.',
      language: 'en',
      segments: [
        { start: 0, end: 1, text: 'One.' },
        { start: 300.75, end: 302.5, text: 'Two --> three.' },
      ],
    })
    expect(toWebVtt(joined)).toBe(
      'WEBVTT\n\n1\n00:00:00.000 --> 00:00:01.000\nOne.\n\n2\n00:05:00.750 --> 00:05:02.500\nTwo -> three.\n',
    )
  })
})
