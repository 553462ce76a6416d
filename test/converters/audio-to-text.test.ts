// audio → transcript (.txt) and timed transcript (.vtt): chunking, providers, limits, and the chain to PNG.
import { env } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { audioToText } from '../../worker/converters/audio-to-text'
import { loadConfig } from '../../worker/config'
import { audioContainer } from '../../worker/engines/audio/container'
import { probeAudio, splitAudio } from '../../worker/engines/audio/split'
import { OPENAI_CHUNK_BYTES } from '../../worker/engines/transcribe/openai'
import { workersAiChunkBytes } from '../../worker/engines/transcribe/workers-ai'
import { speechMp3, speechWav } from '../fixtures/audio/speech'
import { call, callJson } from '../support/api'
import { signUp } from '../support/accounts'
import { concatBytes } from '../support/bytes'
import { convertAll, inputFromBytes, outputBytes, testContext } from '../support/conversion'
import { uploaded } from '../support/files'

const TURBO = '@cf/openai/whisper-large-v3-turbo'

/** What the whisper.cpp stand-in received for one file name. */
async function standInRequests(name: string): Promise<Array<{ file: { name: string; size: number } }>> {
  return (await fetch(`${env.WHISPER_URL}/requests?file=${encodeURIComponent(name)}`)).json()
}

/** A stand-in AI binding answering as whisper-large-v3-turbo does, one segment per call over `seconds`. */
function turboAi(seconds: (input: { audio: string }) => number = () => 1) {
  const calls: Array<{ model: string; size: number }> = []
  const ai = {
    async run(model: string, input: { audio: string }) {
      const size = atob(input.audio).length
      calls.push({ model, size })
      const end = seconds(input)
      return {
        text: `part ${calls.length}.`,
        segments: [{ start: 0.5, end, text: `part ${calls.length}.` }],
        transcription_info: { language: 'en' },
      }
    },
  } as unknown as Ai
  return { ai, calls }
}

const unique = (name: string) => `${crypto.randomUUID().slice(0, 8)}-${name}`

const text = async (output: Parameters<typeof outputBytes>[0]) => new TextDecoder().decode(await outputBytes(output))

/** A silent 8 kHz 16-bit mono WAV of the given length. */
function silentWav(seconds: number): Uint8Array {
  const dataSize = seconds * 16_000
  const bytes = new Uint8Array(44 + dataSize)
  const view = new DataView(bytes.buffer)
  bytes.set(new TextEncoder().encode('RIFF'), 0)
  view.setUint32(4, 36 + dataSize, true)
  bytes.set(new TextEncoder().encode('WAVEfmt '), 8)
  view.setUint32(16, 16, true)
  view.setUint16(20, 1, true) // PCM
  view.setUint16(22, 1, true) // mono
  view.setUint32(24, 8000, true)
  view.setUint32(28, 16_000, true) // byte rate
  view.setUint16(32, 2, true) // block align
  view.setUint16(34, 16, true)
  bytes.set(new TextEncoder().encode('data'), 36)
  view.setUint32(40, dataSize, true)
  return bytes
}

describe('audio-to-text', () => {
  it('writes the transcript and its WebVTT from the configured provider', async () => {
    const outputs = await convertAll(audioToText, inputFromBytes('speech.wav', speechWav), testContext())
    expect(outputs.map((output) => [output.index, output.total, output.extension])).toEqual([
      [0, 2, '.txt'],
      [1, 2, '.vtt'],
    ])
    expect(await text(outputs[0]!)).toBe('The quick brown fox. Jumps over the lazy dog.\n')
    expect(await text(outputs[1]!)).toBe(
      'WEBVTT\n\n1\n00:00:00.000 --> 00:00:01.400\nThe quick brown fox.\n\n2\n00:00:01.400 --> 00:00:03.100\nJumps over the lazy dog.\n',
    )
    expect(outputs[0]!.metadata).toMatchObject({
      word_count: 9,
      language: 'english',
      duration_seconds: expect.closeTo(probeAudio(speechWav, 'wav').durationSeconds, 1),
    })
  })

  it('splits long audio into chunks, transcribes them in parallel and joins them in order', async () => {
    const calls: number[] = []
    const ai = {
      async run(_model: string, input: { audio: string }) {
        const size = atob(input.audio).length
        calls.push(size)
        // Answer out of order to prove the join does not depend on timing.
        await new Promise((resolve) => setTimeout(resolve, calls.length % 2 ? 30 : 1))
        return {
          text: `part of ${size} bytes.`,
          segments: [{ start: 0, end: 1, text: `part of ${size} bytes.` }],
          transcription_info: { language: 'en' },
        }
      },
    } as unknown as Ai
    const wav = silentWav(600) // 9.6 MB: three chunks
    const outputs = await convertAll(
      audioToText,
      inputFromBytes('long.wav', wav),
      testContext({ ai, settings: { TRANSCRIBE_PROVIDER: 'workers-ai' } }),
    )
    expect(calls).toHaveLength(Math.ceil(wav.byteLength / workersAiChunkBytes(TURBO)))
    const vtt = await text(outputs[1]!)
    const starts = [...vtt.matchAll(/^(\d\d:\d\d:\d\d\.\d{3}) -->/gm)].map((match) => match[1])
    expect(starts[0]).toBe('00:00:00.000')
    expect(starts[1]).toMatch(/^00:04:2\d\.\d{3}$/) // the second chunk starts ~262 s in
    expect(outputs[0]!.metadata).toMatchObject({ language: 'en', duration_seconds: 600 })
  })

  it('refuses audio longer than AUDIO_MAX_SECONDS before calling anyone', async () => {
    await expect(
      convertAll(
        audioToText,
        inputFromBytes('speech.mp3', speechMp3),
        testContext({ settings: { AUDIO_MAX_SECONDS: 1 } }),
      ),
    ).rejects.toMatchObject({
      retryable: false,
      message: expect.stringMatching(/^the audio is \d+ s long; the limit is 1 s$/),
    })
  })

  it('refuses a format it cannot split when it is too long for one call', async () => {
    const big = new Uint8Array(OPENAI_CHUNK_BYTES + 1)
    big.set([0, 0, 0, 0x20, ...new TextEncoder().encode('ftypM4A ')]) // an MP4 audio head
    await expect(convertAll(audioToText, inputFromBytes('long.m4a', big), testContext())).rejects.toMatchObject({
      code: 'CONVERSION_FAILED',
      message: expect.stringContaining('convert it to MP3 or WAV'),
    })
  })

  it('refuses a broken WAV with a reason', async () => {
    await expect(
      convertAll(
        audioToText,
        inputFromBytes('bad.wav', new TextEncoder().encode('RIFF....WAVEjunkjunk')),
        testContext(),
      ),
    ).rejects.toMatchObject({
      retryable: false,
      message: expect.stringMatching(/^the WAV file cannot be read: /),
    })
  })

  it('says how to configure a provider when none is available, never a fake transcript', async () => {
    const local = { run: async () => Promise.reject(new Error('Binding AI needs to be run remotely')) } as unknown as Ai
    const explicit = await convertAll(
      audioToText,
      inputFromBytes('speech.wav', speechWav),
      testContext({ ai: local, settings: { TRANSCRIBE_PROVIDER: 'workers-ai' } }),
    ).catch((error) => error)
    // The job says only that no service is configured; the settings to change are in the cause, for the log.
    const unconfigured = 'no transcription service is configured, or it is misconfigured'
    expect(explicit).toMatchObject({ retryable: false, code: 'CONVERTER_MISCONFIGURED', message: unconfigured })
    expect(explicit.cause.message).toContain('TRANSCRIBE_PROVIDER=openai and TRANSCRIBE_URL')
    const noUrl = await convertAll(
      audioToText,
      inputFromBytes('speech.wav', speechWav),
      testContext({ settings: { TRANSCRIBE_PROVIDER: 'openai', TRANSCRIBE_URL: undefined } }),
    ).catch((error) => error)
    expect(noUrl.message).toBe(unconfigured)
    expect(noUrl.cause.message).toMatch(/^TRANSCRIBE_PROVIDER=openai needs TRANSCRIBE_URL/)
    for (const ai of [local, undefined]) {
      const auto = await convertAll(
        audioToText,
        inputFromBytes('speech.wav', speechWav),
        testContext({ ai, settings: { TRANSCRIBE_PROVIDER: 'auto', TRANSCRIBE_URL: undefined } }),
      ).catch((error) => error)
      expect(auto).toMatchObject({ retryable: false, message: unconfigured })
      expect(auto.cause.message).toMatch(
        /^no transcription provider is available here: .*TRANSCRIBE_PROVIDER=auto .*Set TRANSCRIBE_URL/,
      )
    }
  })
})

describe('chunk sizes', () => {
  const bytesOf = (input: { audio: string | number[] }) =>
    typeof input.audio === 'string'
      ? Uint8Array.from(atob(input.audio), (c) => c.charCodeAt(0))
      : Uint8Array.from(input.audio)

  /** A stand-in AI binding of any model that records each chunk and answers one segment spanning it. */
  function spanningAi(model: string, format: 'wav' | 'mp3') {
    const chunks: Uint8Array[] = []
    const ai = {
      async run(_model: string, input: { audio: string | number[] }) {
        const bytes = bytesOf(input)
        chunks.push(bytes)
        const end = probeAudio(bytes, format).durationSeconds
        const text = `chunk ${chunks.length}.`
        const words = { text, words: [{ word: text, start: 0, end }] }
        return model.includes('turbo') ? { text, segments: [{ start: 0, end, text }] } : words
      },
    } as unknown as Ai
    return { ai, chunks }
  }

  const cueTimes = (vtt: string) =>
    [...vtt.matchAll(/^(\d\d):(\d\d):(\d\d\.\d{3}) --> (\d\d):(\d\d):(\d\d\.\d{3})$/gm)].map((m) => {
      const at = (h: string, mi: string, se: string) => Number(h) * 3600 + Number(mi) * 60 + Number(se)
      return [at(m[1]!, m[2]!, m[3]!), at(m[4]!, m[5]!, m[6]!)] as const
    })

  it('defaults: 4 MiB for whisper-large-v3-turbo (base64), 1 MiB for the byte-array models, 24 MiB for OpenAI-compatible servers, 32 MiB read at most', () => {
    expect(workersAiChunkBytes('@cf/openai/whisper-large-v3-turbo')).toBe(4 * 1024 * 1024)
    expect(workersAiChunkBytes('@cf/openai/whisper')).toBe(1024 * 1024)
    expect(workersAiChunkBytes('@cf/openai/whisper-tiny-en')).toBe(1024 * 1024)
    expect(OPENAI_CHUNK_BYTES).toBe(24 * 1024 * 1024)
    expect(loadConfig({ JWT_SECRET: 'x'.repeat(32) })).toMatchObject({
      AUDIO_MAX_BYTES: 32 * 1024 * 1024,
      AUDIO_CHUNK_BYTES: 0,
      TRANSCRIBE_PROVIDER: 'auto',
    })
  })

  it.each(['@cf/openai/whisper', '@cf/openai/whisper-tiny-en'])(
    'sends %s byte arrays of at most 1 MiB and joins their words in order',
    async (model) => {
      const { ai, chunks } = spanningAi(model, 'wav')
      const wav = silentWav(150) // 2.4 MB: three chunks
      const outputs = await convertAll(
        audioToText,
        inputFromBytes('long.wav', wav),
        testContext({ ai, settings: { TRANSCRIBE_PROVIDER: 'workers-ai', TRANSCRIBE_MODEL: model } }),
      )
      expect(chunks).toHaveLength(3)
      for (const chunk of chunks) expect(chunk.byteLength).toBeLessThanOrEqual(1024 * 1024)
      expect(await text(outputs[0]!)).toBe('chunk 1. chunk 2. chunk 3.\n')
      const cues = cueTimes(await text(outputs[1]!))
      expect(cues[0]![0]).toBe(0)
      expect(cues.at(-1)![1]).toBeCloseTo(150, 2)
    },
  )

  it('AUDIO_CHUNK_BYTES overrides the model default, and MP3 chunks are whole frames whose timestamps join without gaps', async () => {
    const { ai, chunks } = spanningAi(TURBO, 'mp3')
    const outputs = await convertAll(
      audioToText,
      inputFromBytes('speech.mp3', speechMp3),
      testContext({ ai, settings: { TRANSCRIBE_PROVIDER: 'workers-ai', AUDIO_CHUNK_BYTES: 3000 } }),
    )
    expect(chunks.length).toBeGreaterThanOrEqual(Math.ceil(speechMp3.byteLength / 3000))
    for (const chunk of chunks) {
      expect(chunk.byteLength).toBeLessThanOrEqual(3000)
      expect(audioContainer(chunk)).toBe('mp3')
    }
    const cues = cueTimes(await text(outputs[1]!))
    expect(cues).toHaveLength(chunks.length)
    // Each chunk's segment starts where the previous one ended: the shifted timestamps tile the whole audio.
    for (let i = 1; i < cues.length; i++) expect(cues[i]![0]).toBeCloseTo(cues[i - 1]![1], 2)
    expect(cues.at(-1)![1]).toBeCloseTo(probeAudio(speechMp3, 'mp3').durationSeconds, 2)
    expect(outputs[0]!.metadata).toMatchObject({
      duration_seconds: expect.closeTo(probeAudio(speechMp3, 'mp3').durationSeconds, 1),
    })
  })

  it('refuses audio over AUDIO_MAX_BYTES with 413 before reading it', async () => {
    const { ai, calls } = turboAi()
    const failure = await convertAll(
      audioToText,
      inputFromBytes('speech.wav', speechWav),
      testContext({ ai, settings: { AUDIO_MAX_BYTES: 1000 } }),
    ).catch((error) => error)
    expect(failure).toMatchObject({ code: 'FILE_TOO_LARGE', retryable: false })
    expect(calls).toEqual([])
  })
})

describe('TRANSCRIBE_PROVIDER=auto', () => {
  it('uses Workers AI when the binding runs, and never the server at TRANSCRIBE_URL', async () => {
    const { ai, calls } = turboAi()
    const name = unique('deployed.wav')
    const outputs = await convertAll(
      audioToText,
      inputFromBytes(name, speechWav),
      testContext({ ai, settings: { TRANSCRIBE_PROVIDER: 'auto' } }),
    )
    expect(calls).toEqual([
      { model: TURBO, size: concatBytes(...splitAudio(speechWav, 'wav', OPENAI_CHUNK_BYTES)[0]!.parts).byteLength },
    ])
    expect(await text(outputs[0]!)).toBe('part 1.\n')
    expect(await standInRequests(name)).toEqual([])
  })

  it('falls back to TRANSCRIBE_URL when the binding only runs remotely (local dev)', async () => {
    const name = unique('local.wav')
    const outputs = await convertAll(
      audioToText,
      inputFromBytes(name, speechWav),
      testContext({ ai: env.AI, settings: { TRANSCRIBE_PROVIDER: 'auto' } }),
    )
    expect(await text(outputs[0]!)).toBe('The quick brown fox. Jumps over the lazy dog.\n')
    expect(await standInRequests(name)).toMatchObject([
      { file: { name, size: concatBytes(...splitAudio(speechWav, 'wav', OPENAI_CHUNK_BYTES)[0]!.parts).byteLength } },
    ])
  })

  it('asks a binding that only runs remotely once, then goes straight to TRANSCRIBE_URL', async () => {
    let tries = 0
    const local = {
      run: async () => Promise.reject(new Error(`Binding AI needs to be run remotely (${++tries})`)),
    } as unknown as Ai
    const name = unique('twice.wav')
    for (let i = 0; i < 2; i++)
      await convertAll(
        audioToText,
        inputFromBytes(name, speechWav),
        testContext({ ai: local, settings: { TRANSCRIBE_PROVIDER: 'auto' } }),
      )
    expect(tries).toBe(1)
    expect(await standInRequests(name)).toHaveLength(2)
  })

  it('gives other Workers AI failures to the queue instead of falling back', async () => {
    const busy = {
      run: async () => Promise.reject(new Error('AiError: 3040: Capacity temporarily exceeded, please try again.')),
    } as unknown as Ai
    const name = unique('capacity.wav')
    const failure = await convertAll(
      audioToText,
      inputFromBytes(name, speechWav),
      testContext({ ai: busy, settings: { TRANSCRIBE_PROVIDER: 'auto' } }),
    ).catch((error) => error)
    expect(failure).toMatchObject({ retryable: true, message: 'the transcription service is unavailable' })
    expect(failure.cause.message).toBe('Workers AI: AiError: 3040: Capacity temporarily exceeded, please try again.')
    expect(await standInRequests(name)).toEqual([])
  })
})

describe('inputs refused before the model is called', () => {
  /** A WAV whose format chunk and data chunk say what the case needs, holding `held` bytes of samples. */
  const wav = (fields: {
    channels?: number
    rate?: number
    byteRate?: number
    align?: number
    bits?: number
    declared?: number
    held?: number
  }) => {
    const {
      channels = 1,
      rate = 8000,
      bits = 16,
      align = channels * (bits / 8),
      byteRate = rate * align,
      held = 1600,
    } = fields
    const bytes = silentWav(1).slice(0, 44 + held)
    const view = new DataView(bytes.buffer)
    view.setUint16(22, channels, true)
    view.setUint32(24, rate, true)
    view.setUint32(28, byteRate, true)
    view.setUint16(32, align, true)
    view.setUint16(34, bits, true)
    view.setUint32(40, fields.declared ?? held, true)
    return bytes
  }
  const concat = concatBytes
  const ascii = (value: string) => new TextEncoder().encode(value)
  // MPEG-1 Layer III, 128 kbit/s, 44.1 kHz: 417 bytes a frame.
  const mp3FrameHead = [0xff, 0xfb, 0x90, 0x00]

  it.each([
    [
      'lying.wav',
      'a data chunk declaring 4 GB in a 2 KB file',
      wav({ declared: 0xfffffff0 - 1 }),
      /data chunk declares 4294967279 bytes and the file holds 1600 \(truncated, or a lying header\)/,
    ],
    [
      'cut.wav',
      'a data chunk cut short',
      wav({ declared: 16_000, held: 100 }),
      /declares 16000 bytes and the file holds 100/,
    ],
    [
      'fast.wav',
      'an absurd sample rate',
      wav({ rate: 4_000_000_000 }),
      /declares 4000000000 samples a second \(1000 to 768000 are taken\)/,
    ],
    ['none.wav', 'no channels', wav({ channels: 0, align: 2 }), /declares 0 channels/],
    ['crowd.wav', '65535 channels', wav({ channels: 65535, align: 2 }), /declares 65535 channels/],
    [
      'long.wav',
      'a byte rate that makes 1 s of samples last 4 hours (AUDIO_MAX_SECONDS would not see it)',
      wav({ byteRate: 1 }),
      /contradicts itself/,
    ],
    ['silent.wav', 'a header and no samples', wav({ held: 0 }), /holds no samples/],
    [
      'cut.mp3',
      'an MP3 cut inside its first frame',
      concat(mp3FrameHead, new Uint8Array(100)),
      /ends inside its first MP3 frame \(truncated\)/,
    ],
    [
      'sync.mp3',
      'a frame sync followed by noise, not by a second frame',
      concat(mp3FrameHead, new Uint8Array(413), ascii('not another frame at all'), new Uint8Array(600)),
      /no MP3 frames found/,
    ],
    // RFC 9639 §8.1–8.2: "fLaC", then the STREAMINFO block (type 0, 34 bytes) first.
    [
      'cut.flac',
      'a FLAC cut inside STREAMINFO',
      concat(ascii('fLaC'), [0x80, 0, 0, 34], new Uint8Array(10)),
      /ends inside its STREAMINFO block/,
    ],
    [
      'zero.flac',
      'a FLAC STREAMINFO of 0 Hz',
      concat(ascii('fLaC'), [0x80, 0, 0, 34], new Uint8Array(34), new Uint8Array(16)),
      /declares 0 samples a second/,
    ],
    // RFC 3533 §6: version 0, the first page has the beginning-of-stream flag, its segment table, then its body.
    [
      'cut.ogg',
      'an Ogg cut inside its first page',
      concat(ascii('OggS'), [0, 2], new Uint8Array(20), [1, 255], new Uint8Array(10)),
      /ends inside its first page \(truncated\)/,
    ],
    // ISO/IEC 14496-12 §4.2: top-level boxes follow each other, each as long as its size says.
    [
      'cut.m4a',
      'an MP4 box running past the end',
      concat([0, 0, 0, 16], ascii('ftypM4A '), [0, 0, 0, 0], [0, 0, 0x10, 0], ascii('moov'), new Uint8Array(40)),
      /box "moov" at byte 16 declares 4096 bytes; the file ends first \(truncated\)/,
    ],
    // RFC 8794 §8.1: the EBML header element, its size a variable-length integer.
    [
      'cut.webm',
      'a WebM cut inside its EBML header',
      concat([0x1a, 0x45, 0xdf, 0xa3, 0x9f], ascii('webm')),
      /ends inside its EBML header/,
    ],
  ])('%s (%s) → 422 with the reason', async (name, _why, bytes, reason) => {
    const { ai, calls } = turboAi()
    const failure = await convertAll(audioToText, inputFromBytes(name, bytes), testContext({ ai })).catch(
      (error) => error,
    )
    expect(failure).toMatchObject({
      code: 'CONVERSION_FAILED',
      retryable: false,
      message: expect.stringMatching(reason),
    })
    expect(calls).toEqual([])
  })

  it.each([
    [
      'notes.mp3',
      new TextEncoder().encode('just some text, not audio'),
      '"notes.mp3" is not MP3 audio (its first bytes are not an audio signature)',
    ],
    ['song.wav', speechMp3, '"song.wav" is not WAV audio (its bytes are MP3 audio: rename it)'],
    ['clip.m4a', new Uint8Array(64), '"clip.m4a" is not M4A (MP4) audio (its first bytes are not an audio signature)'],
    ['clip.flac', speechWav, '"clip.flac" is not FLAC audio (its bytes are WAV audio: rename it)'],
    [
      'clip.ogg',
      new TextEncoder().encode('ID3 but ogg'),
      '"clip.ogg" is not Ogg audio (its bytes are MP3 audio: rename it)',
    ],
    [
      'clip.webm',
      new TextEncoder().encode('<html></html>'),
      '"clip.webm" is not WebM audio (its first bytes are not an audio signature)',
    ],
  ])('%s whose bytes are something else → 422', async (name, bytes, message) => {
    const { ai, calls } = turboAi()
    const failure = await convertAll(audioToText, inputFromBytes(name, bytes), testContext({ ai })).catch(
      (error) => error,
    )
    expect(failure).toMatchObject({ code: 'CONVERSION_FAILED', retryable: false, message })
    expect(calls).toEqual([])
  })

  it('a .mp3 upload that is not audio is refused with 422 before a job starts, and the whisper server never hears of it', async () => {
    const user = await signUp()
    const name = unique('memo.mp3')
    const fake = await uploaded(user, name, 'Dear diary, this is text.')
    const res = await callJson('POST', `/files/${fake._id}/convert`, { token: user.token })
    expect(res).toMatchObject({
      status: 422,
      body: {
        message: expect.stringContaining(
          `"${name}" is named .mp3 but its content is text/plain; audio-to-text reads only audio/mpeg`,
        ),
      },
    })
    expect((await callJson('GET', `/files/${fake._id}/jobs`, { token: user.token })).body).toEqual([])
    expect(await standInRequests(name)).toEqual([])
    const files = await callJson('GET', '/files', { token: user.token })
    expect(JSON.stringify(files.body)).toContain(fake._id) // the upload itself is kept
  })

  it('GET /convert/:extension says why a refused audio format is not accepted', async () => {
    const user = await signUp()
    expect((await callJson('GET', '/convert/wma', { token: user.token })).body).toMatchObject({
      extension: '.wma',
      accepted: false,
      to: null,
      reason:
        'Windows Media Audio is not audio the transcription providers take mp3, wav, m4a, ogg, flac and webm: convert it to MP3',
    })
    expect((await callJson('GET', '/convert/mp3', { token: user.token })).body).toMatchObject({
      extension: '.mp3',
      accepted: true,
      to: '.txt',
      targets: expect.arrayContaining(['.txt']),
    })
  })

  it.each([
    ['voice.wma', 'Windows Media Audio'],
    ['voice.aac', 'raw AAC (ADTS)'],
    ['voice.amr', 'AMR'],
    ['voice.aiff', 'AIFF'],
    ['voice.opus', 'a bare .opus file'],
    ['tune.mid', 'MIDI holds notes'],
  ])('%s is refused with 422 and its reason, and no job starts', async (file, reason) => {
    const user = await signUp()
    const name = unique(file)
    const upload = await uploaded(user, name, speechWav)
    const res = await callJson('POST', `/files/${upload._id}/convert`, { token: user.token })
    expect(res.status).toBe(422)
    expect(res.body).toMatchObject({
      code: 'NOT_CONVERTIBLE',
      message: expect.stringContaining(`"${name}" cannot be converted: ${reason}`),
    })
    expect((await callJson('GET', `/files/${upload._id}/jobs`, { token: user.token })).body).toEqual([])
    expect(await standInRequests(name)).toEqual([])
  })
})

describe('audio → txt → png through the pipeline', () => {
  it('makes the transcript, its WebVTT sibling and the transcript page, in chain order', async () => {
    const user = await signUp()
    const mp3 = await uploaded(user, 'memo.mp3', speechMp3)
    expect(mp3.content_type).toBe('audio/mpeg')
    const res = await callJson('POST', `/files/${mp3._id}/convert`, { token: user.token })
    expect(res.status).toBe(200)
    expect(res.body.map((file) => file.name)).toEqual(['memo (1 of 2)', 'memo (2 of 2)', 'memo (1 of 1)'])
    const [txt, vtt, png] = res.body
    expect(txt).toMatchObject({
      parent_file: mp3._id,
      content_type: 'text/plain',
      metadata: { word_count: 9, language: 'english' },
    })
    expect(vtt).toMatchObject({ parent_file: mp3._id, content_type: 'text/vtt' })
    expect(png!.parent_file).toBe(txt!._id)
    expect(await (await call('GET', `/files/${txt!._id}/download`, { token: user.token })).text()).toBe(
      'The quick brown fox. Jumps over the lazy dog.\n',
    )
  })

  it('retries a provider that answers 503 twice through the queue, and makes exactly one transcript', async () => {
    const user = await signUp()
    const name = unique('flaky.wav')
    const base = name.slice(0, -'.wav'.length)
    const clip = await uploaded(user, name, speechWav)
    const res = await callJson('POST', `/files/${clip._id}/convert`, { token: user.token })
    expect(res.status).toBe(200)
    expect(res.body.map((file) => file.name)).toEqual([`${base} (1 of 2)`, `${base} (2 of 2)`, `${base} (1 of 1)`])
    expect(await standInRequests(name)).toHaveLength(3) // 503, 503, then the transcript
    const [job] = (await callJson('GET', `/files/${clip._id}/jobs`, { token: user.token })).body
    expect(job!.steps.find((step) => step.source_file === clip._id)).toMatchObject({
      status: 'done',
      attempts: 3,
    })
    const all = (await callJson('GET', '/files', { token: user.token })).body
    const children = all.filter((file) => file.parent_file === clip._id)
    expect(children.map((file) => file.name).sort()).toEqual([`${base} (1 of 2)`, `${base} (2 of 2)`])
    expect(await (await call('GET', `/files/${res.body[0]!._id}/download`, { token: user.token })).text()).toBe(
      'The quick brown fox. Jumps over the lazy dog.\n',
    )
  }, 60_000)

  it("fails the job with the provider's reason on a permanent error", async () => {
    const user = await signUp()
    const clip = await uploaded(user, 'reject-me.wav', speechWav)
    const res = await callJson('POST', `/files/${clip._id}/convert`, { token: user.token })
    expect(res).toMatchObject({
      status: 422,
      body: {
        message:
          'audio-to-text on "reject-me.wav" failed: the transcription service refused the audio: Invalid file format.',
        code: 'CONVERSION_FAILED',
      },
    })
  })
})
