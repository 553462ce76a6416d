// Reading WAV and MP3 just enough to know their duration and to cut them into pieces at sample (WAV) or frame
// (MP3) boundaries, each a valid file with its start time, so long audio can be transcribed in parallel chunks
// and the timestamps joined back.
import { hasAscii } from '../../magic'

export interface AudioInfo {
  readonly format: 'wav' | 'mp3'
  readonly durationSeconds: number
}

export interface AudioChunk {
  /**
   * The chunk's file, in parts to send one after another: views of the whole file's bytes (a WAV chunk's data
   * behind a header of its own, an MP3 chunk's frames), so that splitting copies no audio.
   */
  readonly parts: readonly Uint8Array[]
  readonly startSeconds: number
  readonly durationSeconds: number
}

export class AudioFormatError extends Error {}

/** Sample rates outside these are not recordings any provider decodes (telephony is 8 kHz, studio 384 kHz). */
export const MIN_SAMPLE_RATE = 1000
export const MAX_SAMPLE_RATE = 768_000
/** More channels than this is not a recording of speech (7.1 is 8, third-order ambisonics 16). */
export const MAX_CHANNELS = 16

export function checkRate(sampleRate: number, channels: number, what: string): void {
  if (sampleRate < MIN_SAMPLE_RATE || sampleRate > MAX_SAMPLE_RATE)
    throw new AudioFormatError(
      `the ${what} declares ${sampleRate} samples a second (${MIN_SAMPLE_RATE} to ${MAX_SAMPLE_RATE} are taken)`,
    )
  if (channels < 1 || channels > MAX_CHANNELS)
    throw new AudioFormatError(`the ${what} declares ${channels} channels (1 to ${MAX_CHANNELS} are taken)`)
}

// ---- WAV --------------------------------------------------------------------------------------------------

/** WAVE_FORMAT_PCM, WAVE_FORMAT_IEEE_FLOAT, WAVE_FORMAT_EXTENSIBLE: frames of whole samples. */
const PCM_FORMATS = new Set([1, 3, 0xfffe])

interface WavLayout {
  readonly fmt: Uint8Array
  readonly dataOffset: number
  readonly dataSize: number
  readonly byteRate: number
  readonly blockAlign: number
}

function wavLayout(bytes: Uint8Array): WavLayout {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (!hasAscii(bytes, 0, 'RIFF') || !hasAscii(bytes, 8, 'WAVE')) throw new AudioFormatError('not a WAV file')
  let offset = 12
  let fmt: Uint8Array | undefined
  while (offset + 8 <= bytes.length) {
    const size = view.getUint32(offset + 4, true)
    if (hasAscii(bytes, offset, 'fmt ')) fmt = bytes.subarray(offset + 8, offset + 8 + size)
    if (hasAscii(bytes, offset, 'data')) {
      if (!fmt || fmt.length < 16) throw new AudioFormatError('the WAV file has no format chunk before its data')
      const format = new DataView(fmt.buffer, fmt.byteOffset, fmt.byteLength)
      const channels = format.getUint16(2, true)
      const sampleRate = format.getUint32(4, true)
      const byteRate = format.getUint32(8, true)
      const blockAlign = format.getUint16(12, true)
      const bitsPerSample = format.getUint16(14, true)
      if (byteRate === 0 || blockAlign === 0) throw new AudioFormatError('the WAV format chunk is invalid')
      checkRate(sampleRate, channels, 'WAV format chunk')
      // PCM, float and extensible: the duration is read from byteRate, so it must be what the samples take.
      if (
        PCM_FORMATS.has(format.getUint16(0, true)) &&
        (blockAlign !== channels * Math.ceil(bitsPerSample / 8) || byteRate !== sampleRate * blockAlign)
      ) {
        throw new AudioFormatError(
          `the WAV format chunk contradicts itself: ${channels} channels of ${bitsPerSample} bits at ${sampleRate} Hz are not ${blockAlign} bytes a frame and ${byteRate} bytes a second`,
        )
      }
      const held = bytes.length - offset - 8
      // A streamed WAV may declare 0 or 0xFFFFFFFF: the data then runs to the end of the file.
      const isStreamed = size === 0 || size === 0xffffffff
      if (!isStreamed && size > held)
        throw new AudioFormatError(
          `its data chunk declares ${size} bytes and the file holds ${held} (truncated, or a lying header)`,
        )
      const dataSize = isStreamed ? held : size
      if (dataSize < blockAlign) throw new AudioFormatError('the WAV file holds no samples')
      return { fmt, dataOffset: offset + 8, dataSize: dataSize - (dataSize % blockAlign), byteRate, blockAlign }
    }
    offset += 8 + size + (size % 2)
  }
  throw new AudioFormatError('the WAV file has no data chunk')
}

/** A WAV file of `data` (a view, not copied): its header, then the data itself. */
function wavFile(fmt: Uint8Array, data: Uint8Array): Uint8Array[] {
  const header = new Uint8Array(20 + fmt.length + 8)
  const view = new DataView(header.buffer)
  header.set([0x52, 0x49, 0x46, 0x46]) // RIFF
  view.setUint32(4, header.length + data.length - 8, true)
  header.set([0x57, 0x41, 0x56, 0x45, 0x66, 0x6d, 0x74, 0x20], 8) // WAVEfmt_
  view.setUint32(16, fmt.length, true)
  header.set(fmt, 20)
  header.set([0x64, 0x61, 0x74, 0x61], 20 + fmt.length) // data
  view.setUint32(24 + fmt.length, data.length, true)
  return [header, data]
}

// ---- MP3 --------------------------------------------------------------------------------------------------

const BITRATES_V1 = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
const BITRATES_V2 = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160]
const SAMPLE_RATES: Record<number, number[]> = {
  3: [44100, 48000, 32000],
  2: [22050, 24000, 16000],
  0: [11025, 12000, 8000],
}

interface Mp3Frame {
  readonly offset: number
  readonly length: number
  readonly seconds: number
}

/** The Layer III frame at `offset`, or undefined when there is none. */
function mp3Frame(bytes: Uint8Array, offset: number): Mp3Frame | undefined {
  if (offset + 4 > bytes.length || bytes[offset] !== 0xff || (bytes[offset + 1]! & 0xe0) !== 0xe0) return undefined
  const version = (bytes[offset + 1]! >> 3) & 3
  const layer = (bytes[offset + 1]! >> 1) & 3
  const bitrateIndex = bytes[offset + 2]! >> 4
  const rateIndex = (bytes[offset + 2]! >> 2) & 3
  const padding = (bytes[offset + 2]! >> 1) & 1
  if (version === 1 || layer !== 1 || bitrateIndex === 0 || bitrateIndex === 15 || rateIndex === 3) return undefined
  const sampleRate = SAMPLE_RATES[version]![rateIndex]!
  const bitrate = (version === 3 ? BITRATES_V1 : BITRATES_V2)[bitrateIndex]! * 1000
  const samples = version === 3 ? 1152 : 576
  const length = Math.floor(((samples / 8) * bitrate) / sampleRate) + padding
  return { offset, length, seconds: samples / sampleRate }
}

function mp3Frames(bytes: Uint8Array): Mp3Frame[] {
  let offset = 0
  if (hasAscii(bytes, 0, 'ID3') && bytes.length > 10) {
    offset =
      10 + (((bytes[6]! & 0x7f) << 21) | ((bytes[7]! & 0x7f) << 14) | ((bytes[8]! & 0x7f) << 7) | (bytes[9]! & 0x7f))
  }
  const frames: Mp3Frame[] = []
  while (offset < bytes.length) {
    const frame = mp3Frame(bytes, offset)
    const end = frame ? frame.offset + frame.length : 0
    // The first frame must be followed by another (or end the file): a sync pattern in junk is not a frame.
    const isFirstConfirmed =
      frames.length > 0 || end === bytes.length || (end < bytes.length && mp3Frame(bytes, end) !== undefined)
    if (frame && frame.length > 0 && end > bytes.length) {
      if (frames.length === 0) throw new AudioFormatError('the file ends inside its first MP3 frame (truncated)')
      break // a last frame cut short: decoders drop it, so does this
    }
    if (frame && frame.length > 0 && isFirstConfirmed) {
      frames.push(frame)
      offset += frame.length
    } else if (frames.length === 0 && offset < 64 * 1024) {
      offset++ // junk before the first frame
    } else {
      break // trailing tags (ID3v1, APE) or garbage
    }
  }
  if (frames.length === 0) throw new AudioFormatError('no MP3 frames found')
  return frames
}

// ---- both -------------------------------------------------------------------------------------------------

export function probeAudio(bytes: Uint8Array, format: 'wav' | 'mp3'): AudioInfo {
  if (format === 'wav') {
    const layout = wavLayout(bytes)
    return { format, durationSeconds: layout.dataSize / layout.byteRate }
  }
  return { format, durationSeconds: mp3Frames(bytes).reduce((sum, frame) => sum + frame.seconds, 0) }
}

/** Pieces of at most about `maxBytes`, cut where the format allows, each with its start time. */
export function splitAudio(bytes: Uint8Array, format: 'wav' | 'mp3', maxBytes: number): AudioChunk[] {
  if (format === 'wav') {
    const layout = wavLayout(bytes)
    const step = Math.max(layout.blockAlign, maxBytes - (maxBytes % layout.blockAlign) - 64)
    const chunks: AudioChunk[] = []
    for (let start = 0; start < layout.dataSize; start += step) {
      const size = Math.min(step, layout.dataSize - start)
      const data = bytes.subarray(layout.dataOffset + start, layout.dataOffset + start + size)
      chunks.push({
        parts: wavFile(layout.fmt, data),
        startSeconds: start / layout.byteRate,
        durationSeconds: size / layout.byteRate,
      })
    }
    return chunks
  }
  const frames = mp3Frames(bytes)
  const chunks: AudioChunk[] = []
  let first = 0
  let start = 0
  for (let i = 0; i <= frames.length; i++) {
    const frame = frames[i]
    const size = frame ? frame.offset + frame.length - frames[first]!.offset : 0
    if (!frame || (size > maxBytes && i > first)) {
      const last = frames[i - 1]!
      const duration = frames.slice(first, i).reduce((sum, f) => sum + f.seconds, 0)
      chunks.push({
        parts: [bytes.subarray(frames[first]!.offset, last.offset + last.length)],
        startSeconds: start,
        durationSeconds: duration,
      })
      start += duration
      first = i
    }
  }
  return chunks
}
