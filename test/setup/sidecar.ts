// Global setup (Node): the real sidecar (Gotenberg API over LibreOffice) on a free loopback port, reached by the
// Worker through a loopback front that can fail one job's requests on purpose, so the Worker's office converter
// talks to it exactly as to Gotenberg while other test files' conversions share it untouched. Faults are per
// job, never for the whole sidecar, through a control server:
// - POST /kill-office?trace=<job id>: waits for that job's conversion to start, then kills its LibreOffice.
// - POST /unreachable?marker=<text>: every request whose document contains <text> has its connection dropped
//   before any answer (as a sidecar that is down), until POST /reachable?marker=<text>. The marker is in the
//   document the test uploads, so the fault holds from the job's first attempt (its id is not known before).
// - GET /refused?marker=<text>: the Gotenberg-Trace (job id) of each request dropped for that marker.
// - GET /runs?trace=<job id>,<job id>…: how many LibreOffice conversions (POST /forms/libreoffice/convert) those
//   jobs asked the sidecar for: the count of runs a test holds to one per document content.
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { TestProject } from 'vitest/node'
import { optionsFromEnv, startSidecar } from '../../sidecar/server'
import { signalOffice, until } from '../support/office-pool'

declare module 'vitest' {
  export interface ProvidedContext {
    sidecarUrl: string
    sidecarControlUrl: string
  }
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

const listen = async (server: ReturnType<typeof createServer>) => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

export default async function setup(project: TestProject) {
  const sidecar = await startSidecar({ ...optionsFromEnv({}), port: 0, processes: 1, queueSize: 32 })
  const unreachable = new Map<string, string[]>()
  const libreOfficeRuns = new Map<string, number>()

  const front = createServer(async (request, response) => {
    const body = await readBody(request)
    const text = body.toString('latin1')
    const trace = String(request.headers['gotenberg-trace'] ?? '')
    if (request.method === 'POST' && request.url?.startsWith('/forms/libreoffice/convert')) libreOfficeRuns.set(trace, (libreOfficeRuns.get(trace) ?? 0) + 1)
    for (const [marker, refused] of unreachable) {
      if (text.includes(marker)) {
        refused.push(trace)
        request.socket.destroy()
        return
      }
    }
    const upstream = httpRequest(new URL(request.url ?? '/', sidecar.url), { method: request.method, headers: request.headers }, (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(response)
    })
    upstream.on('error', () => response.socket?.destroy())
    upstream.end(body)
  })

  async function killOffice(trace: string | null): Promise<string> {
    let busy: { folder: string } | undefined
    await until(() => {
      busy = sidecar.pool.stats.processes.find((process) => process.busy && (trace === null || process.trace === trace))
      return busy !== undefined
    }, `a conversion for ${trace ?? 'any job'} starting`)
    // At once: the process is that job's from before LibreOffice reads the document until the PDF is back.
    signalOffice(busy!.folder, 'KILL')
    return 'killed'
  }

  async function controlled(url: URL, response: ServerResponse): Promise<void> {
    const marker = url.searchParams.get('marker') ?? ''
    if (url.pathname === '/kill-office') return void response.end(await killOffice(url.searchParams.get('trace')))
    if (url.pathname === '/refused') return void response.end(JSON.stringify(unreachable.get(marker) ?? []))
    if (url.pathname === '/runs') {
      const traces = (url.searchParams.get('trace') ?? '').split(',').filter(Boolean)
      return void response.end(String(traces.reduce((sum, trace) => sum + (libreOfficeRuns.get(trace) ?? 0), 0)))
    }
    if (!marker) return void response.writeHead(400).end('no marker')
    if (url.pathname === '/unreachable') unreachable.set(marker, unreachable.get(marker) ?? [])
    else if (url.pathname === '/reachable') unreachable.delete(marker)
    else return void response.writeHead(404).end()
    response.end('ok')
  }

  const control = createServer((request, response) => {
    controlled(new URL(request.url ?? '/', 'http://control'), response).catch((error) => response.writeHead(500).end(String(error)))
  })
  project.provide('sidecarUrl', await listen(front))
  project.provide('sidecarControlUrl', await listen(control))
  return async () => {
    control.close()
    front.close()
    await sidecar.close()
  }
}
