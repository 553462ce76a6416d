// Global setup (Node): a loopback HTTP server that receives job webhooks as a client's endpoint would and
// records each delivery (headers and raw body) by path. Paths under /flaky/ answer 503 to their first delivery,
// so a test sees the Worker retry. GET /dns-query is a DNS-over-HTTPS JSON resolver (the Worker's WEBHOOK_DNS_URL)
// for the names in DNS_RECORDS, so a test can name a host that resolves to a special-use address.
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

/** Names under .test (RFC 6761: never real) and their A (1) and AAAA (28) records. */
const DNS_RECORDS: Record<string, Array<{ type: 1 | 28; data: string }>> = {
  'loopback.test': [{ type: 1, data: '127.0.0.1' }],
  'metadata.test': [{ type: 1, data: '169.254.169.254' }],
  'mapped.test': [{ type: 28, data: '::ffff:7f00:1' }],
  'nat64.test': [{ type: 28, data: '64:ff9b::a9fe:a9fe' }],
  // One public address and one private: any special-use answer refuses the name.
  'mixed.test': [
    { type: 1, data: '93.184.215.14' },
    { type: 28, data: 'fd00::1' },
  ],
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
    if (request.method === 'GET' && url.pathname === '/dns-query') {
      const name = (url.searchParams.get('name') ?? '').toLowerCase()
      const type = Number(url.searchParams.get('type'))
      const records = DNS_RECORDS[name]
      const answer = (records ?? [])
        .filter((record) => record.type === type)
        .map((record) => ({ name, type: record.type, TTL: 60, data: record.data }))
      response
        .writeHead(200, { 'content-type': 'application/dns-json' })
        .end(JSON.stringify({ Status: records ? 0 : 3, Answer: answer }))
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
