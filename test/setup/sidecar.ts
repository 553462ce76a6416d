// Global setup (Node): the real sidecar (Gotenberg API over LibreOffice) on a free loopback port, so the
// Worker's office converter talks to it exactly as to Gotenberg.
import type { TestProject } from 'vitest/node'
import { optionsFromEnv, startSidecar } from '../../sidecar/server'

declare module 'vitest' {
  export interface ProvidedContext {
    sidecarUrl: string
  }
}

export default async function setup(project: TestProject) {
  const sidecar = await startSidecar({ ...optionsFromEnv({}), port: 0, processes: 1, queueSize: 32 })
  project.provide('sidecarUrl', sidecar.url)
  return () => sidecar.close()
}
