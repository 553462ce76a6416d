// Global setup (Node) of the `e2e` project: one real Worker under `wrangler dev --local` for every end-to-end file
// (each file started its own: ~20 s idle, ~40 s under stress-ng, five times a run), beside the real sidecar
// (LibreOffice) it converts Office documents with and the whisper.cpp stand-in (test/setup/whisper-server.ts, set up
// before this one) it transcribes with. The files share it as clients of one deployment do: each signs up its own
// users. Its limits are the tus file's (a 40 MiB resumable limit, a 30 MiB quota) so both 413s are reachable with
// small files; rate limits are off so a test can sign in repeatedly. wrangler and workerd end with this process
// whatever ends it (bench/process-group.ts); a start that fails stops what did start.
import type { TestProject } from 'vitest/node'
import { buildConsoleBundle } from '../../.ci/build-console.ts'
import { freePort } from '../../bench/wrangler-dev.ts'
import { optionsFromEnv, startSidecar } from '../../sidecar/server.ts'
import { startWorker } from '../e2e/dev-worker.ts'

declare module 'vitest' {
  export interface ProvidedContext {
    devWorkerUrl: string
  }
}

const MiB = 1024 * 1024

export default async function setup(project: TestProject) {
  // The console's Uppy bundle is among the static files wrangler serves: written before it starts.
  await buildConsoleBundle()
  // Both at once: the Worker reaches the sidecar only when it converts, by then long up.
  const sidecarPort = await freePort()
  const [sidecar, worker] = await Promise.allSettled([
    startSidecar({ ...optionsFromEnv({}), port: sidecarPort, processes: 1 }),
    startWorker({
      GOTENBERG_URL: `http://127.0.0.1:${sidecarPort}`,
      TRANSCRIBE_URL: project.getProvidedContext().whisperUrl,
      FILES_MAX_RESUMABLE_BYTES: String(40 * MiB),
      FILES_QUOTA_BYTES: String(30 * MiB),
    }),
  ])
  const stop = async () => {
    await Promise.all([worker.status === 'fulfilled' && worker.value.stop(), sidecar.status === 'fulfilled' && sidecar.value.close()])
  }
  if (sidecar.status === 'rejected' || worker.status === 'rejected') {
    await stop()
    throw sidecar.status === 'rejected' ? sidecar.reason : (worker as PromiseRejectedResult).reason
  }
  project.provide('devWorkerUrl', worker.value.url)
  return stop
}
