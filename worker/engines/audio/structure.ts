// The structure of an audio file, checked before any of it is sent to a transcription provider: the container's
// first records must be whole and plausible (a WAV's format chunk, an MP3's first frames, FLAC's STREAMINFO, an
// Ogg page, MP4's top-level boxes, WebM's EBML header), so a truncated, lying or disguised file is refused here
// with its reason instead of being uploaded, paid for and failed by the provider.
import { fourCharacterCode } from '../../magic'
import type { AudioContainer } from './container'
import { AudioFormatError, checkRate, probeAudio } from './split'

/** FLAC: the marker, then STREAMINFO as the first metadata block (RFC 9639 §8.2), whole. */
function checkFlac(bytes: Uint8Array): void {
  if (bytes.length < 4 + 4 + 34)
    throw new AudioFormatError('the FLAC file ends inside its STREAMINFO block (truncated)')
  if ((bytes[4]! & 0x7f) !== 0) throw new AudioFormatError('the FLAC file does not start with its STREAMINFO block')
  const length = (bytes[5]! << 16) | (bytes[6]! << 8) | bytes[7]!
  if (length !== 34) throw new AudioFormatError(`the FLAC STREAMINFO block is ${length} bytes, not 34`)
  const info = bytes.subarray(8, 42)
  const sampleRate = (info[10]! << 12) | (info[11]! << 4) | (info[12]! >> 4)
  const channels = ((info[12]! >> 1) & 7) + 1
  checkRate(sampleRate, channels, 'FLAC STREAMINFO')
  if (bytes.length <= 42) throw new AudioFormatError('the FLAC file has no audio frames (truncated)')
}

/** Ogg: the first page (RFC 3533 §6) whole, version 0, beginning a stream. */
function checkOgg(bytes: Uint8Array): void {
  if (bytes.length < 27) throw new AudioFormatError('the Ogg file ends inside its first page header (truncated)')
  if (bytes[4] !== 0) throw new AudioFormatError(`the Ogg page is version ${bytes[4]}, not 0`)
  if ((bytes[5]! & 0x02) === 0) throw new AudioFormatError('the first Ogg page does not begin a stream')
  const segments = bytes[26]!
  if (bytes.length < 27 + segments)
    throw new AudioFormatError('the Ogg file ends inside its first page header (truncated)')
  const body = bytes.subarray(27, 27 + segments).reduce((sum, lacing) => sum + lacing, 0)
  if (bytes.length < 27 + segments + body)
    throw new AudioFormatError('the Ogg file ends inside its first page (truncated)')
}

/** MP4 (ISO BMFF): the top-level boxes follow each other to the end of the file, none cut. */
function checkMp4(bytes: Uint8Array): void {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  for (let at = 0; at < bytes.length; ) {
    if (at + 8 > bytes.length) throw new AudioFormatError('the MP4 file ends inside a box header (truncated)')
    let size = view.getUint32(at)
    if (size === 0) return // the last box runs to the end of the file
    if (size === 1) {
      if (at + 16 > bytes.length) throw new AudioFormatError('the MP4 file ends inside a box header (truncated)')
      size = Number(view.getBigUint64(at + 8))
    }
    if (size < 8) throw new AudioFormatError(`the MP4 box at byte ${at} declares ${size} bytes`)
    if (at + size > bytes.length)
      throw new AudioFormatError(
        `the MP4 box "${fourCharacterCode(bytes, at + 4)}" at byte ${at} declares ${size} bytes; the file ends first (truncated)`,
      )
    at += size
  }
}

/** WebM: the EBML header element (RFC 8794) whole, its DocType webm or matroska. */
function checkWebm(bytes: Uint8Array): void {
  // The header's size is an EBML variable-length integer after the 4-byte ID.
  const first = bytes[4] ?? 0
  const width = first === 0 ? 9 : Math.clz32(first) - 23
  if (width > 8 || bytes.length < 4 + width) throw new AudioFormatError('the WebM EBML header is cut or invalid')
  let size = first & (0xff >> width)
  for (let i = 1; i < width; i++) size = size * 256 + bytes[4 + i]!
  const end = 4 + width + size
  if (end > bytes.length) throw new AudioFormatError('the WebM file ends inside its EBML header (truncated)')
  const header = new TextDecoder('latin1').decode(bytes.subarray(4 + width, end))
  if (!header.includes('webm') && !header.includes('matroska'))
    throw new AudioFormatError('the EBML file is neither WebM nor Matroska')
  if (end >= bytes.length) throw new AudioFormatError('the WebM file has nothing after its header (truncated)')
}

/**
 * Throws an AudioFormatError saying what is wrong when the file's structure is not audio a provider can take.
 * WAV and MP3 are read through their whole structure (probeAudio), the others through their first records.
 */
export function checkAudioStructure(bytes: Uint8Array, container: AudioContainer): void {
  if (container === 'wav' || container === 'mp3') probeAudio(bytes, container)
  else if (container === 'flac') checkFlac(bytes)
  else if (container === 'ogg') checkOgg(bytes)
  else if (container === 'mp4') checkMp4(bytes)
  else if (container === 'webm') checkWebm(bytes)
}
