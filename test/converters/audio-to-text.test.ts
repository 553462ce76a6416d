// audio → transcript (.txt) and timed transcript (.vtt): chunking, providers, limits, and the chain to PNG.
import { describe, expect, it } from 'vitest'
import { audioToText, CHUNK_BYTES } from '../../worker/converters/audio-to-text'
import { probeAudio } from '../../worker/engines/audio/split'
import { speechMp3, speechWav } from '../fixtures/audio/speech'
import { call, callJson } from '../support/api'
import { signUp } from '../support/accounts'
import { inputFromBytes, outputBytes, testContext } from '../support/conversion'
import { uploaded } from '../support/files'

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
    const outputs = await audioToText.convert(inputFromBytes('speech.wav', speechWav), testContext())
    expect(outputs.map((output) => [output.index, output.total, output.extension])).toEqual([
      [0, 2, '.txt'],
      [1, 2, '.vtt'],
    ])
    expect(await text(outputs[0]!)).toBe('The quick brown fox. Jumps over the lazy dog.\n')
    expect(await text(outputs[1]!)).toBe('WEBVTT\n\n1\n00:00:00.000 --> 00:00:01.400\nThe quick brown fox.\n\n2\n00:00:01.400 --> 00:00:03.100\nJumps over the lazy dog.\n')
    expect(outputs[0]!.metadata).toMatchObject({ word_count: 9, language: 'english', duration_seconds: expect.closeTo(probeAudio(speechWav, 'wav').durationSeconds, 1) })
  })

  it('splits long audio into chunks, transcribes them in parallel and joins them in order', async () => {
    const calls: number[] = []
    const ai = {
      async run(_model: string, input: { audio: string }) {
        const size = atob(input.audio).length
        calls.push(size)
        // Answer out of order to prove the join does not depend on timing.
        await new Promise((resolve) => setTimeout(resolve, calls.length % 2 ? 30 : 1))
        return { text: `part of ${size} bytes.`, segments: [{ start: 0, end: 1, text: `part of ${size} bytes.` }], transcription_info: { language: 'en' } }
      },
    } as unknown as Ai
    const wav = silentWav(600) // 9.6 MB: three chunks
    const outputs = await audioToText.convert(inputFromBytes('long.wav', wav), testContext({ ai, settings: { TRANSCRIBE_PROVIDER: 'workers-ai' } }))
    expect(calls).toHaveLength(Math.ceil(wav.byteLength / CHUNK_BYTES))
    const vtt = await text(outputs[1]!)
    const starts = [...vtt.matchAll(/^(\d\d:\d\d:\d\d\.\d{3}) -->/gm)].map((match) => match[1])
    expect(starts[0]).toBe('00:00:00.000')
    expect(starts[1]).toMatch(/^00:04:2\d\.\d{3}$/) // the second chunk starts ~262 s in
    expect(outputs[0]!.metadata).toMatchObject({ language: 'en', duration_seconds: 600 })
  })

  it('refuses audio longer than AUDIO_MAX_SECONDS before calling anyone', async () => {
    await expect(audioToText.convert(inputFromBytes('speech.mp3', speechMp3), testContext({ settings: { AUDIO_MAX_SECONDS: 1 } }))).rejects.toMatchObject({
      retryable: false,
      message: expect.stringMatching(/^the audio is \d+ s long; the limit is 1 s \(AUDIO_MAX_SECONDS\)$/),
    })
  })

  it('refuses a format it cannot split when it is too long for one call', async () => {
    const big = new Uint8Array(CHUNK_BYTES + 1)
    await expect(audioToText.convert(inputFromBytes('long.m4a', big), testContext())).rejects.toMatchObject({ status: 422, message: expect.stringContaining('convert it to MP3 or WAV') })
  })

  it('refuses a broken WAV with a reason', async () => {
    await expect(audioToText.convert(inputFromBytes('bad.wav', new TextEncoder().encode('RIFF....WAVEjunkjunk')), testContext())).rejects.toMatchObject({
      retryable: false,
      message: expect.stringMatching(/^the WAV file cannot be read: /),
    })
  })

  it('says how to configure a provider when none is available, never a fake transcript', async () => {
    const local = { run: async () => Promise.reject(new Error('Binding AI needs to be run remotely')) } as unknown as Ai
    const failure = await audioToText.convert(inputFromBytes('speech.wav', speechWav), testContext({ ai: local, settings: { TRANSCRIBE_PROVIDER: 'workers-ai' } })).catch((error) => error)
    expect(failure).toMatchObject({ retryable: false, message: expect.stringContaining('TRANSCRIBE_PROVIDER=openai and TRANSCRIBE_URL') })
    const noUrl = await audioToText.convert(inputFromBytes('speech.wav', speechWav), testContext({ settings: { TRANSCRIBE_URL: undefined } })).catch((error) => error)
    expect(noUrl.message).toMatch(/^TRANSCRIBE_PROVIDER=openai needs TRANSCRIBE_URL/)
  })
})

describe('audio → txt → png through the pipeline', () => {
  it('makes the transcript, its WebVTT sibling and the transcript page, in chain order', async () => {
    const user = await signUp()
    const mp3 = await uploaded(user, 'memo.mp3', speechMp3)
    expect(mp3.content_type).toBe('audio/mpeg')
    const res = await callJson('POST', `/files/${mp3._id}/convert`, { token: user.token })
    expect(res.status).toBe(200)
    expect(res.body.map((file: { name: string }) => file.name)).toEqual(['memo (1 of 2).txt', 'memo (2 of 2).vtt', 'memo (1 of 2) (1 of 1).png'])
    const [txt, vtt, png] = res.body
    expect(txt).toMatchObject({ parent_file: mp3._id, content_type: 'text/plain', metadata: { word_count: 9, language: 'english' } })
    expect(vtt).toMatchObject({ parent_file: mp3._id, content_type: 'text/vtt' })
    expect(png.parent_file).toBe(txt._id)
    expect(await (await call('GET', `/files/${txt._id}/download`, { token: user.token })).text()).toBe('The quick brown fox. Jumps over the lazy dog.\n')
  })

  it('fails the job with the provider\'s reason on a permanent error', async () => {
    const user = await signUp()
    const clip = await uploaded(user, 'reject-me.wav', speechWav)
    const res = await callJson('POST', `/files/${clip._id}/convert`, { token: user.token })
    expect(res).toMatchObject({ status: 422, body: { message: 'audio-to-text on "reject-me.wav" failed: the transcription server answered 400: Invalid file format.' } })
  })
})
