// Which audio container a file's first bytes are: the magic numbers of the formats the transcription providers
// take, so a file that is not what its name says is refused before any provider is called.
import { hasAscii } from '../../magic'

export type AudioContainer = 'mp3' | 'wav' | 'flac' | 'ogg' | 'mp4' | 'webm'

/** An MPEG audio frame header: 11 sync bits, a defined version and layer, a usable bitrate and sample rate. */
function isMpegFrame(bytes: Uint8Array): boolean {
  if (bytes.length < 4 || bytes[0] !== 0xff || (bytes[1]! & 0xe0) !== 0xe0) return false
  const version = (bytes[1]! >> 3) & 3
  const layer = (bytes[1]! >> 1) & 3
  const bitrate = bytes[2]! >> 4
  const rate = (bytes[2]! >> 2) & 3
  return version !== 1 && layer !== 0 && bitrate !== 15 && rate !== 3
}

export function audioContainer(head: Uint8Array): AudioContainer | undefined {
  if (hasAscii(head, 0, 'ID3') || isMpegFrame(head)) return 'mp3'
  if (hasAscii(head, 0, 'RIFF') && hasAscii(head, 8, 'WAVE')) return 'wav'
  if (hasAscii(head, 0, 'fLaC')) return 'flac'
  if (hasAscii(head, 0, 'OggS')) return 'ogg'
  if (hasAscii(head, 4, 'ftyp')) return 'mp4'
  if (head[0] === 0x1a && head[1] === 0x45 && head[2] === 0xdf && head[3] === 0xa3) return 'webm'
  return undefined
}
