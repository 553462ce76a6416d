// The real Worker for end-to-end tests: `wrangler dev --local` on a free loopback port with its own migrated
// state (the bench harness), rate limits off so one test can sign in repeatedly. It is the production shape: the API
// Worker (wrangler.toml) and the consumer Worker (wrangler.consumer.toml) in one `wrangler dev`.
import { mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { API_ENTRY, finished, launchDevWorker, type LaunchedDevWorker, root } from '../../bench/wrangler-dev.ts'
import { until } from '../support/until.ts'

export const artifactsDir = join(root, '.tmp', 'artifacts')

/** `wrangler dev` (migrations included) and LibreOffice start in minutes on a loaded shared 2-core machine. */
export const START_MS = 600_000

/**
 * Each Worker's TRANSCRIBE_MODEL, sent as the `model` field of every transcription request: the whisper stand-in
 * records it (and answers any model), so a test sees which of the two Workers ran a conversion step. (A setting, not
 * TRANSCRIBE_API_KEY: with a [secrets] table, wrangler dev loads from .dev.vars only [vars] names and required secrets.)
 */
export const TRANSCRIBE_MODELS = { api: 'whisper-of-the-api-worker', consumer: 'whisper-of-the-consumer-worker' }

/**
 * PDF_MAX_PAGES of each Worker. Only PDF pages (conversions and previews, both in the consumer Worker) read it: were a
 * preview of a PDF with more pages than the API Worker's drawn in the API Worker, it would fail with "too many pages".
 */
export const PDF_MAX_PAGES = { api: '1', consumer: '1000' }

/** Launches the real Workers (`vars` for both); their start goes on in the background (`ready`). */
/** The origin of the passkey test's page: a host name, since WebAuthn's relying party id cannot be an IP address.
 * Nothing listens there: the test's browser routes it to the Worker (test/e2e/passkeys.test.ts). */
export const PASSKEY_ORIGIN = 'http://localhost:8790'

export async function launchWorker(
  vars: Record<string, string> = {},
  { port, secrets }: { port?: number; secrets?: Record<string, string> } = {},
): Promise<LaunchedDevWorker> {
  mkdirSync(artifactsDir, { recursive: true })
  return launchDevWorker(
    API_ENTRY,
    {
      AUTH_RATE_LIMIT_PER_MINUTE: '0',
      TRANSCRIBE_MODEL: TRANSCRIBE_MODELS.api,
      PDF_MAX_PAGES: PDF_MAX_PAGES.api,
      ...vars,
    },
    undefined,
    {
      startTimeoutMs: START_MS,
      consumerVars: { TRANSCRIBE_MODEL: TRANSCRIBE_MODELS.consumer, PDF_MAX_PAGES: PDF_MAX_PAGES.consumer },
      port,
      secrets,
    },
  )
}

/**
 * Waits until the run's Worker (and the sidecar, given its URL) answer: the e2e project launches them without
 * waiting (test/setup/dev-worker.ts), so they start while the rest of the run sets up.
 */
export async function waitForServers(workerUrl: string, sidecarUrl?: string): Promise<void> {
  const answers = (url: string) =>
    fetch(url).then(
      (res) => res.status < 500,
      () => false,
    )
  await until(`the Worker at ${workerUrl} answering`, () => answers(`${workerUrl}/`), Boolean, {
    timeoutMs: START_MS,
    intervalMs: 250,
  })
  if (sidecarUrl)
    await until(`the sidecar at ${sidecarUrl} answering`, () => answers(`${sidecarUrl}/health`), Boolean, {
      timeoutMs: START_MS,
      intervalMs: 250,
    })
}

/** A 160×120 baseline JPEG (2 KiB) made once by Chromium's canvas encoder. */
export function photoJpeg(): Uint8Array {
  return new Uint8Array(readFileSync(join(root, 'test', 'fixtures', 'docs', 'photo.jpg')))
}

/**
 * Makes an account an admin in the running Worker's local D1, as an operator does for the first admin (no route may):
 * `wrangler d1 execute` on the state the Worker persists to.
 */
export async function grantAdmin(state: string, email: string): Promise<void> {
  if (!/^[a-z0-9.@_-]+$/i.test(email)) throw new Error(`not a test address: ${email}`)
  const command = `UPDATE users SET role = 'admin' WHERE email = '${email}'`
  const args = ['d1', 'execute', 'DB', '--local', '--persist-to', state, '--command', command]
  // The running Worker writes the same SQLite file: a write of its own at that moment answers SQLITE_BUSY, which
  // the next attempt outlives.
  for (let attempt = 1; ; attempt++) {
    const { status, stderr } = await finished('wrangler', args, {
      cwd: root,
      env: { ...process.env, WRANGLER_SEND_METRICS: 'false' },
    })
    if (status === 0) return
    if (attempt === 5 || !stderr.includes('SQLITE_BUSY')) throw new Error(`wrangler d1 execute failed: ${stderr}`)
  }
}

export function uniqueEmail(prefix: string): string {
  return `${prefix}-${crypto.randomUUID().slice(0, 12)}@example.com`
}

/** Width and height from a PNG's IHDR chunk, after checking the signature. */
export function pngSize(bytes: Uint8Array): { width: number; height: number } {
  const signature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]
  if (!signature.every((byte, i) => bytes[i] === byte)) throw new Error('not a PNG')
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  return { width: view.getUint32(16), height: view.getUint32(20) }
}
