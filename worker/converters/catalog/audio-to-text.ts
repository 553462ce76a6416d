// Audio → transcript (worker/converters/audio-to-text.ts): what it reads and what it refuses, with the reasons.
import type { AudioContainer } from '../../engines/audio/container'
import { TRANSCRIBE_SETTINGS, transcriptionUnavailable } from '../../engines/transcribe/settings'
import { describeConverter } from '../converter'

/**
 * What Whisper providers take: OpenAI's documented list (flac, m4a, mp3, mp4, mpeg, mpga, oga, ogg, wav, webm),
 * all of which whisper.cpp's server decodes with --convert (ffmpeg). Workers AI documents no list: the same is
 * assumed, and what it cannot decode fails with its own reason.
 */
export const AUDIO_FORMATS: Record<string, { contentType: string; container: AudioContainer; label: string }> = {
  '.mp3': { contentType: 'audio/mpeg', container: 'mp3', label: 'MP3' },
  '.wav': { contentType: 'audio/wav', container: 'wav', label: 'WAV' },
  '.m4a': { contentType: 'audio/mp4', container: 'mp4', label: 'M4A (MP4)' },
  '.ogg': { contentType: 'audio/ogg', container: 'ogg', label: 'Ogg' },
  '.flac': { contentType: 'audio/flac', container: 'flac', label: 'FLAC' },
  '.webm': { contentType: 'audio/webm', container: 'webm', label: 'WebM' },
}

const TAKEN = 'the transcription providers take mp3, wav, m4a, ogg, flac and webm'

/** Audio the providers cannot take, refused with the reason before a job starts. */
const REFUSED: Record<string, string> = {
  '.aac': `raw AAC (ADTS) is not audio ${TAKEN}: put it in an .m4a container or convert it to MP3`,
  '.wma': `Windows Media Audio is not audio ${TAKEN}: convert it to MP3`,
  '.amr': `AMR is not audio ${TAKEN}: convert it to MP3`,
  '.aiff': `AIFF is not audio ${TAKEN}: convert it to WAV`,
  '.aif': `AIFF is not audio ${TAKEN}: convert it to WAV`,
  '.opus': `a bare .opus file is not audio ${TAKEN}: rename it .ogg if it is Ogg Opus, or convert it to MP3`,
  '.mid': 'MIDI holds notes, not recorded sound: there is nothing to transcribe',
  '.midi': 'MIDI holds notes, not recorded sound: there is nothing to transcribe',
}

export const audioToTextInfo = describeConverter({
  name: 'audio-to-text',
  settings: ['AUDIO_MAX_BYTES', 'AUDIO_MAX_SECONDS', ...TRANSCRIBE_SETTINGS],
  from: Object.keys(AUDIO_FORMATS),
  // What the sniffer calls these containers (an M4A of another brand sniffs as video/mp4): anything else named
  // .mp3 or .wav is refused before a job starts.
  accepts: ['audio/mpeg', 'audio/wav', 'audio/mp4', 'video/mp4', 'audio/ogg', 'audio/flac', 'video/webm'],
  refusals: { sources: REFUSED },
  to: '.txt',
  // On the default local set-up neither provider runs: Workers AI has no local mode and TRANSCRIBE_URL is empty.
  unavailable: (settings, { ai }) => transcriptionUnavailable(settings, ai),
})
