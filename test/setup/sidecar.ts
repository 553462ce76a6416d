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
// A second front serves the same sidecar over HTTPS (test/setup/loopback-tls.ts) and only with credentials, as a
// sidecar published through Cloudflare Tunnel behind Access, or behind basic auth, is reached (docs/gotenberg.md).
import { timingSafeEqual } from 'node:crypto'
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import type { TestProject } from 'vitest/node'
import { optionsFromEnv, startSidecar } from '../../sidecar/server'
import { signalOffice, until } from '../support/office-pool'
import { loopbackTls } from './loopback-tls'

/** What the HTTPS front admits: basic auth, or a Cloudflare Access service token (its two headers). */
interface HttpsCredentials {
  username: string
  password: string
  accessClientId: string
  accessClientSecret: string
}

declare module 'vitest' {
  export interface ProvidedContext {
    sidecarUrl: string
    sidecarControlUrl: string
    sidecarHttps: HttpsCredentials & { url: string }
  }
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

const listen = async (server: ReturnType<typeof createServer>, scheme = 'http') => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return `${scheme}://127.0.0.1:${(server.address() as AddressInfo).port}`
}

const same = (given: string | undefined, expected: string) =>
  given !== undefined && given.length === expected.length && timingSafeEqual(Buffer.from(given), Buffer.from(expected))

/** Whether a request carries the credentials: basic auth (RFC 7617, UTF-8) or both Access headers. */
function isAdmitted(request: IncomingMessage, credentials: HttpsCredentials): boolean {
  const basic = `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`
  if (same(request.headers.authorization, basic)) return true
  const id = request.headers['cf-access-client-id']
  const secret = request.headers['cf-access-client-secret']
  return (
    typeof id === 'string' &&
    typeof secret === 'string' &&
    same(id, credentials.accessClientId) &&
    same(secret, credentials.accessClientSecret)
  )
}

/** Forwards a request to the sidecar, its answer back as it comes. */
function forward(sidecarUrl: string, request: IncomingMessage, body: Buffer, response: ServerResponse): void {
  const upstream = httpRequest(
    new URL(request.url ?? '/', sidecarUrl),
    { method: request.method, headers: request.headers },
    (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(response)
    },
  )
  upstream.on('error', () => response.socket?.destroy())
  upstream.end(body)
}

export default async function setup(project: TestProject) {
  const sidecar = await startSidecar({ ...optionsFromEnv({}), port: 0, processes: 1, queueSize: 32 })
  const unreachable = new Map<string, string[]>()
  const libreOfficeRuns = new Map<string, number>()

  const front = createServer(async (request, response) => {
    const body = await readBody(request)
    const text = body.toString('latin1')
    const trace = String(request.headers['gotenberg-trace'] ?? '')
    if (request.method === 'POST' && request.url?.startsWith('/forms/libreoffice/convert'))
      libreOfficeRuns.set(trace, (libreOfficeRuns.get(trace) ?? 0) + 1)
    for (const [marker, refused] of unreachable) {
      if (text.includes(marker)) {
        refused.push(trace)
        request.socket.destroy()
        return
      }
    }
    forward(sidecar.url, request, body, response)
  })

  const credentials: HttpsCredentials = {
    username: 'edgefloor',
    password: 'pässword over TLS',
    accessClientId: 'edgefloor-test.access',
    accessClientSecret: crypto.randomUUID(),
  }
  const httpsFront = createHttpsServer(loopbackTls, async (request, response) => {
    const body = await readBody(request)
    // Cloudflare Access answers a missing or wrong service token with 403; Gotenberg's basic auth with 401.
    if (!isAdmitted(request, credentials))
      return void response
        .writeHead(request.headers['cf-access-client-id'] ? 403 : 401, { 'content-type': 'text/plain' })
        .end('Unauthorized')
    forward(sidecar.url, request, body, response)
  })

  async function killOffice(trace: string | null): Promise<string> {
    let busy: { folder: string } | undefined
    await until(
      () => {
        busy = sidecar.pool.stats.processes.find(
          (process) => process.busy && (trace === null || process.trace === trace),
        )
        return busy !== undefined
      },
      `a conversion for ${trace ?? 'any job'} starting`,
    )
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
    controlled(new URL(request.url ?? '/', 'http://control'), response).catch((error) =>
      response.writeHead(500).end(String(error)),
    )
  })
  project.provide('sidecarUrl', await listen(front))
  project.provide('sidecarControlUrl', await listen(control))
  project.provide('sidecarHttps', { url: await listen(httpsFront, 'https'), ...credentials })
  return async () => {
    httpsFront.close()
    control.close()
    front.close()
    await sidecar.close()
  }
}
