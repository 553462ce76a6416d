// The sidecar's LibreOffice processes, driven from Node tests: wait for one to take a document, then freeze it
// (SIGSTOP: the conversion cannot finish, however fast the machine) or kill it (SIGKILL: a crash mid-conversion).
import { execFileSync } from 'node:child_process'
import type { RunningSidecar } from '../../sidecar/server'
import { until as untilRead } from './until'

/** Resolves once `condition` holds; throws naming `what` at the deadline, instead of hanging the test. */
export async function until(condition: () => boolean, what: string, timeoutMs?: number): Promise<void> {
  await untilRead(what, condition, Boolean, { timeoutMs, intervalMs: 20 })
}

/** The profile folder of the sidecar's first LibreOffice, once it works on a document. */
export async function busyOffice(sidecar: RunningSidecar): Promise<string> {
  await until(() => sidecar.pool.stats.processes[0]!.busy, 'LibreOffice taking the document')
  return sidecar.pool.stats.processes[0]!.folder
}

/** Signals the LibreOffice whose profile is `folder`. */
export function signalOffice(folder: string, signal: 'STOP' | 'KILL'): void {
  // The folder's own profile (office-0-1/, not office-0-10/): a standby beside it is left alone.
  execFileSync('pkill', [`-${signal}`, '-f', `soffice.bin.*${folder}/`])
}
