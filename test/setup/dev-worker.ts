// Global setup (Node) of the `e2e` project: one real Worker under `wrangler dev --local` for every end-to-end file
// (each file started its own: ~20 s idle, ~40 s under stress-ng, five times a run) — the API Worker and the consumer
// Worker, both configs in one `wrangler dev` as `npm start` runs them — beside the real sidecar
// (LibreOffice) it converts Office documents with and the whisper.cpp stand-in (test/setup/whisper-server.ts, set up
// before this one) it transcribes with. The files share it as clients of one deployment do: each signs up its own
// users. Its limits are the tus file's (a 40 MiB resumable limit, a 30 MiB quota) so both 413s are reachable with
// small files; rate limits are off so a test can sign in repeatedly. It offers one sign-in provider, a real OpenID
// Provider on loopback (test/setup/oauth-providers.ts), and its state is given to tests that must write D1 as no
// route may (making the first admin).
// Neither server is waited for here: vitest runs every project's global setup, one after another, before the first
// test, so they start while the other projects set up and the unit files run; each e2e file waits for them
// (waitForServers). A start that fails is logged with its reason at once, and stops what did start; wrangler and
// workerd end with this process whatever ends it (bench/process-group.ts).
import type { TestProject } from 'vitest/node'
import { buildConsoleBundle } from '../../.ci/build-console.ts'
import { freePort } from '../../bench/wrangler-dev.ts'
import { optionsFromEnv, startSidecar } from '../../sidecar/server.ts'
import { launchWorker, PASSKEY_ORIGIN } from '../e2e/dev-worker.ts'
import { OIDC_CLIENT, startOidcProvider } from './oauth-providers.ts'

declare module 'vitest' {
  export interface ProvidedContext {
    devWorkerUrl: string
    /** Its local state, for a test that must write D1 as no route may (the first admin). */
    devWorkerState: string
    /** The OpenID Provider the Worker offers as sign-in provider `loopback` (test/setup/oauth-providers.ts). */
    devOidcProviderUrl: string
    devSidecarUrl: string
  }
}

const MiB = 1024 * 1024

export default async function setup(project: TestProject) {
  // The console's Uppy bundle is among the static files wrangler serves: written before it starts.
  await buildConsoleBundle()
  const sidecarUrl = `http://127.0.0.1:${await freePort()}`
  const sidecar = startSidecar({ ...optionsFromEnv({}), port: Number(new URL(sidecarUrl).port), processes: 1 })
  // A real OpenID Provider on loopback for the console's provider screens (test/e2e/console-sign-in.test.ts): its
  // client and the console's return address name the Worker's own URL, so the port is chosen first.
  const workerPort = await freePort()
  const workerUrl = `http://127.0.0.1:${workerPort}`
  const oidc = await startOidcProvider([workerUrl])
  const worker = await launchWorker(
    {
      GOTENBERG_URL: sidecarUrl,
      TRANSCRIBE_URL: project.getProvidedContext().whisperUrl,
      FILES_MAX_RESUMABLE_BYTES: String(40 * MiB),
      FILES_QUOTA_BYTES: String(30 * MiB),
      // The origin Chromium shows the passkey test's page at (test/e2e/passkeys.test.ts): WebAuthn refuses an IP address.
      AUTH_PASSKEY_ORIGINS: PASSKEY_ORIGIN,
      AUTH_OAUTH_REDIRECT_URLS: `${workerUrl}/console`,
    },
    {
      port: workerPort,
      secrets: {
        AUTH_OAUTH_PROVIDERS: JSON.stringify([
          {
            id: 'loopback',
            name: 'Loopback OP',
            issuer: oidc.url,
            client_id: OIDC_CLIENT.id,
            client_secret: OIDC_CLIENT.secret,
            allow_insecure_http: true,
          },
        ]),
      },
    },
  )
  worker.ready.catch((error) => console.error(`e2e: the Worker under wrangler dev did not start: ${error}`))
  sidecar.catch((error) => console.error(`e2e: the sidecar did not start: ${error}`))
  project.provide('devWorkerUrl', worker.url)
  project.provide('devWorkerState', worker.state)
  project.provide('devOidcProviderUrl', oidc.url)
  project.provide('devSidecarUrl', sidecarUrl)
  return async () => {
    await Promise.allSettled([
      worker.stop(),
      sidecar.then((running) => running.close()),
      new Promise((resolve) => oidc.server.close(resolve)),
    ])
  }
}
