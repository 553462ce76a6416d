// The settings that choose and reach the transcription provider: a list of names the API Worker reads too (the
// audio converter's info), kept apart from the providers so it bundles none of them.
export const TRANSCRIBE_SETTINGS = ['TRANSCRIBE_PROVIDER', 'TRANSCRIBE_URL', 'TRANSCRIBE_API_KEY', 'TRANSCRIBE_MODEL', 'AUDIO_CHUNK_BYTES'] as const
