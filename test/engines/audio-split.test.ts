import { describe, expect, it } from 'vitest'
import { AudioFormatError, probeAudio, splitAudio } from '../../worker/engines/audio/split'
import { concatBytes } from '../support/bytes'
import { speechMp3, speechWav } from '../fixtures/audio/speech'

describe('audio probing and splitting', () => {
  it('measures WAV and MP3 durations', () => {
    // espeak-ng says the sentence in about three seconds; the MP3 adds encoder padding of a few frames.
    const wav = probeAudio(speechWav, 'wav').durationSeconds
    const mp3 = probeAudio(speechMp3, 'mp3').durationSeconds
    expect(wav).toBeGreaterThan(1.5)
    expect(wav).toBeLessThan(5)
    expect(Math.abs(mp3 - wav)).toBeLessThan(0.3)
  })

  it('cuts a WAV at sample boundaries into valid WAV files with their start times', () => {
    const chunks = splitAudio(speechWav, 'wav', 10_000)
    expect(chunks.length).toBe(5)
    let expectedStart = 0
    for (const chunk of chunks) {
      expect(chunk.startSeconds).toBeCloseTo(expectedStart, 6)
      expect(probeAudio(concatBytes(...chunk.parts), 'wav').durationSeconds).toBeCloseTo(chunk.durationSeconds, 6)
      expect(concatBytes(...chunk.parts).byteLength).toBeLessThanOrEqual(10_000)
      expectedStart += chunk.durationSeconds
    }
    expect(expectedStart).toBeCloseTo(probeAudio(speechWav, 'wav').durationSeconds, 6)
  })

  it('cuts an MP3 at frame boundaries', () => {
    const chunks = splitAudio(speechMp3, 'mp3', 3_000)
    expect(chunks.length).toBeGreaterThan(2)
    const total = chunks.reduce((sum, chunk) => sum + chunk.durationSeconds, 0)
    expect(total).toBeCloseTo(probeAudio(speechMp3, 'mp3').durationSeconds, 6)
    for (const chunk of chunks) {
      expect([concatBytes(...chunk.parts)[0], concatBytes(...chunk.parts)[1]! & 0xe0]).toEqual([0xff, 0xe0])
      expect(probeAudio(concatBytes(...chunk.parts), 'mp3').durationSeconds).toBeCloseTo(chunk.durationSeconds, 6)
    }
  })

  it('refuses what is not WAV or MP3', () => {
    const text = new TextEncoder().encode('certainly not audio, just words '.repeat(10))
    expect(() => probeAudio(text, 'wav')).toThrow(AudioFormatError)
    expect(() => probeAudio(text, 'mp3')).toThrow('no MP3 frames found')
  })
})
