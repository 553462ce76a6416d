// Global setup (Node): a loopback stand-in for Gotenberg's POST /forms/libreoffice/convert, for the Worker's
// Gotenberg client tests (answers the real sidecar cannot be made to give on demand). The Gotenberg-Trace header
// (the job id) chooses the answer: "status-<code>-…" → that status with a plain-text reason as Gotenberg words
// it, "hang-…" → no answer until the client gives up, anything else → 200 with a one-page PDF. Every request is
// recorded, and GET /requests/<trace> gives back its headers, form fields and files.
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Readable } from 'node:stream'
import type { TestProject } from 'vitest/node'

declare module 'vitest' {
  export interface ProvidedContext {
    gotenbergStandInUrl: string
  }
}

export interface RecordedGotenbergRequest {
  readonly path: string
  readonly trace?: string
  readonly authorization?: string
  readonly fields: Record<string, string>
  readonly files: Array<{ field: string; name: string; size: number }>
}

/** Gotenberg's wording for each status the client must map. */
const REASONS: Record<number, string> = {
  400: "Invalid form data: form field 'pdfa' is invalid (got 'PDF/A-9')",
  401: 'Unauthorized',
  413: 'Request Entity Too Large',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
}

const PDF = [
  '%PDF-1.4',
  '1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj',
  '2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj',
  '3 0 obj << /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >> endobj',
  'trailer << /Root 1 0 R >>',
  '%%EOF',
].join('\n')

function readForm(request: IncomingMessage): Promise<FormData> {
  return new Response(Readable.toWeb(request) as ReadableStream, {
    headers: { 'content-type': request.headers['content-type'] ?? '' },
  }).formData()
}

export default async function setup(project: TestProject) {
  const requests: RecordedGotenbergRequest[] = []
  const server = createServer(async (request, response) => {
    const path = new URL(request.url ?? '/', 'http://stand-in').pathname
    if (request.method === 'GET' && path.startsWith('/requests/')) {
      const trace = decodeURIComponent(path.slice('/requests/'.length))
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify(requests.filter((recorded) => recorded.trace === trace)))
      return
    }
    if (request.method !== 'POST' || path !== '/forms/libreoffice/convert')
      return void response.writeHead(404).end('Not Found')
    const trace = request.headers['gotenberg-trace']?.toString()
    const form = await readForm(request)
    const fields: Record<string, string> = {}
    const files: RecordedGotenbergRequest['files'] = []
    for (const [field, value] of form.entries()) {
      if (typeof value === 'string') fields[field] = value
      else files.push({ field, name: value.name, size: value.size })
    }
    requests.push({ path, trace, authorization: request.headers.authorization, fields, files })
    const headers = { 'gotenberg-trace': trace ?? '' }
    // A hung Gotenberg: the response stays open until the client aborts.
    if (trace?.startsWith('hang-')) return
    const status = /^status-(\d{3})-/.exec(trace ?? '')?.[1]
    if (status)
      return void response
        .writeHead(Number(status), { ...headers, 'content-type': 'text/plain; charset=UTF-8' })
        .end(`${REASONS[Number(status)] ?? 'Error'}\n`)
    response.writeHead(200, { ...headers, 'content-type': 'application/pdf' }).end(PDF)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  project.provide('gotenbergStandInUrl', `http://127.0.0.1:${(server.address() as AddressInfo).port}`)
  return () => {
    server.closeAllConnections()
    return new Promise<void>((resolve) => server.close(() => resolve()))
  }
}
