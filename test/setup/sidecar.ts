// Global setup (Node): the real sidecar (Gotenberg API over LibreOffice) on a free loopback port, so the
// Worker's office converter talks to it exactly as to Gotenberg; and a loopback control server the workerd
// tests call to break it on purpose: POST /kill-office?trace=<job id> (waits for that job's conversion to start,
// then kills its LibreOffice; other test files' conversions share the sidecar), POST /stop (the sidecar stops listening), POST /start (it listens again on the same port).
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { TestProject } from 'vitest/node'
import { optionsFromEnv, startSidecar, type RunningSidecar } from '../../sidecar/server'
import { signalOffice } from '../support/office-pool'

declare module 'vitest' {
  export interface ProvidedContext {
    sidecarUrl: string
    sidecarControlUrl: string
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export default async function setup(project: TestProject) {
  const options = { ...optionsFromEnv({}), port: 0, processes: 1, queueSize: 32 }
  let sidecar: RunningSidecar | undefined = await startSidecar(options)
  const port = Number(new URL(sidecar.url).port)

  async function killOffice(trace: string | null): Promise<string> {
    const deadline = Date.now() + 30_000
    while (Date.now() < deadline) {
      const busy = sidecar?.pool.stats.processes.find((process) => process.busy && (trace === null || process.trace === trace))
      if (busy) {
        // At once: the process is that job's from before LibreOffice reads the document until the PDF is back.
        signalOffice(busy.folder, 'KILL')
        return 'killed'
      }
      await sleep(20)
    }
    throw new Error('no conversion started within 30 s')
  }

  const control = createServer(async (request, response) => {
    try {
      let result = 'ok'
      const url = new URL(request.url ?? '/', 'http://control')
      if (url.pathname === '/kill-office') result = await killOffice(url.searchParams.get('trace'))
      else if (url.pathname === '/stop') {
        await sidecar?.close()
        sidecar = undefined
      } else if (url.pathname === '/start' && !sidecar) sidecar = await startSidecar({ ...options, port })
      response.writeHead(200).end(result)
    } catch (error) {
      response.writeHead(500).end(String(error))
    }
  })
  await new Promise<void>((resolve) => control.listen(0, '127.0.0.1', resolve))
  project.provide('sidecarUrl', sidecar.url)
  project.provide('sidecarControlUrl', `http://127.0.0.1:${(control.address() as AddressInfo).port}`)
  return async () => {
    control.close()
    await sidecar?.close()
  }
}
