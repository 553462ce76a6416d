// The settings that choose and reach the transcription provider, and whether the one they choose can run here: a
// list of names and a check the API Worker reads too (the audio converter's info), kept apart from the providers so
// it bundles none of them.
import type { Config } from '../../config'

export const TRANSCRIBE_SETTINGS = [
  'TRANSCRIBE_PROVIDER',
  'TRANSCRIBE_URL',
  'TRANSCRIBE_API_KEY',
  'TRANSCRIBE_MODEL',
  'AUDIO_CHUNK_BYTES',
] as const

type ProviderSettings = Pick<Config, 'TRANSCRIBE_PROVIDER' | 'TRANSCRIBE_URL'>

/**
 * What the AI binding answers where it cannot run: local dev (`wrangler dev`, the tests), where it only runs remotely.
 */
export const LOCAL_MODE = /run remotely|remote resource|not supported in local/i

const SERVERS = 'an OpenAI-compatible server (whisper.cpp, speaches, LocalAI, OpenAI)'

/**
 * Whether the AI binding runs here, asked once per isolate and binding: locally it refuses every call at once, so
 * listing the models (no inference, nothing billed) tells. Only that refusal counts: a deployed binding that is slow
 * or fails for another reason is taken as running (the job's own failure will say why), and asked again next time.
 */
const running = new WeakMap<Ai, Promise<boolean>>()
const PROBE_MS = 2000

function aiRunsHere(ai: Ai): Promise<boolean> {
  const known = running.get(ai)
  if (known) return known
  let timer: ReturnType<typeof setTimeout> | undefined
  const probe = ai
    .models()
    .then(() => true)
    .catch((error: unknown) => {
      if (LOCAL_MODE.test((error as Error)?.message ?? String(error))) return false
      running.delete(ai)
      return true
    })
  const answer = Promise.race([
    probe,
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), PROBE_MS))),
  ]).finally(() => clearTimeout(timer))
  running.set(ai, probe)
  return answer
}

/**
 * Why no transcription provider can run here, naming what to set; undefined when one can. The settings say which
 * provider (worker/engines/transcribe/provider.ts chooses the same way); Workers AI also needs its binding to run here.
 */
export async function transcriptionUnavailable(
  settings: ProviderSettings,
  ai: Ai | undefined,
): Promise<string | undefined> {
  if (settings.TRANSCRIBE_PROVIDER === 'openai') {
    return settings.TRANSCRIBE_URL
      ? undefined
      : `audio → text: TRANSCRIBE_PROVIDER=openai needs TRANSCRIBE_URL; set it to ${SERVERS}`
  }
  if (settings.TRANSCRIBE_PROVIDER === 'auto' && settings.TRANSCRIBE_URL) return undefined
  if (ai && (await aiRunsHere(ai))) return undefined
  if (settings.TRANSCRIBE_PROVIDER === 'workers-ai') {
    return `audio → text: TRANSCRIBE_PROVIDER=workers-ai needs Workers AI (the AI binding), which runs only when deployed; set TRANSCRIBE_PROVIDER=auto and TRANSCRIBE_URL to ${SERVERS}`
  }
  return `audio → text needs Workers AI (the AI binding, which runs only when deployed) or TRANSCRIBE_URL; set TRANSCRIBE_URL to ${SERVERS}`
}
