// What the sidecar test files that start their own sidecars share: starting one (one LibreOffice unless told),
// converting one document through Gotenberg's route, the Office fixtures, and whether a process still runs.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { inject } from 'vitest'
import { optionsFromEnv, startSidecar, type RunningSidecar, type SidecarOptions } from '../../sidecar/server'

/** An Office document of the fixture set (test/setup's officeDocumentsDir). */
export const fixture = (name: string) => readFileSync(join(inject('officeDocumentsDir'), name))

export const text = (value: string) => new TextEncoder().encode(value)

/** A sidecar on a free port with one LibreOffice (or sharing `pool`) and no Chromium (these files test LibreOffice),
 * the environment's defaults otherwise. */
export const start = (overrides: Partial<SidecarOptions> = {}, pool?: RunningSidecar['pool']) =>
  startSidecar({ ...optionsFromEnv({ SIDECAR_CHROMIUM_DISABLE: 'true' }), port: 0, processes: 1, ...overrides }, pool)

/** One document through /forms/libreoffice/convert, with the form's other fields. */
export async function convert(
  sidecar: RunningSidecar,
  name: string,
  bytes: Uint8Array,
  fields: Record<string, string> = {},
) {
  const body = new FormData()
  body.append('files', new Blob([bytes]), name)
  for (const [key, value] of Object.entries(fields)) body.append(key, value)
  const res = await fetch(`${sidecar.url}/forms/libreoffice/convert`, { method: 'POST', body })
  return { status: res.status, body: await res.arrayBuffer() }
}

export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}
