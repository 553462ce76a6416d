// Global setup (Node): a loopback HTTP server that receives job webhooks as a client's endpoint would and
// records each delivery (headers and raw body) by path. Paths under /flaky/ answer 503 to their first delivery,
// so a test sees the Worker retry.
import { createServer, type IncomingMessage } from 'node:http'
import type { TestProject } from 'vitest/node'

declare module 'vitest' {
  export interface ProvidedContext {
    webhookReceiverUrl: string
  }
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

export default async function setup(project: TestProject) {
  const deliveries = new Map<string, Array<{ headers: Record<string, unknown>; body: string; status: number }>>()
  const server = createServer(async (request, response) => {
    const url = new URL(request.url ?? '/', 'http://localhost')
    if (request.method === 'POST') {
      const received = deliveries.get(url.pathname) ?? []
      const status = url.pathname.startsWith('/flaky/') && received.length === 0 ? 503 : 200
      received.push({ headers: request.headers, body: await readBody(request), status })
      deliveries.set(url.pathname, received)
      response.writeHead(status).end()
      return
    }
    if (request.method === 'GET' && url.pathname === '/deliveries') {
      const found = deliveries.get(url.searchParams.get('path') ?? '') ?? []
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(found))
      return
    }
    response.writeHead(404).end()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (!address || typeof address === 'string') throw new Error('webhook receiver did not start')
  project.provide('webhookReceiverUrl', `http://127.0.0.1:${address.port}`)
  return () => new Promise<void>((resolve) => server.close(() => resolve()))
}
