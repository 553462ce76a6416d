// Global setup (Node): a loopback HTTP server that answers as MailChannels' send API does and records every
// message, so tests read the real request the Worker sent. Recipients containing "+bounce" get a 500.
import { createServer, type IncomingMessage } from 'node:http'
import type { TestProject } from 'vitest/node'

declare module 'vitest' {
  export interface ProvidedContext {
    mailCatcherUrl: string
  }
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

export default async function setup(project: TestProject) {
  const messages: Array<{ headers: Record<string, unknown>; body: any }> = []
  const server = createServer(async (request, response) => {
    const url = new URL(request.url ?? '/', 'http://localhost')
    if (request.method === 'POST' && url.pathname === '/tx/v1/send') {
      const body = JSON.parse(await readBody(request))
      const to: string = body?.personalizations?.[0]?.to?.[0]?.email ?? ''
      if (to.includes('+bounce')) {
        response.writeHead(500, { 'content-type': 'application/json' }).end('{"errors":["simulated outage"]}')
        return
      }
      messages.push({ headers: request.headers, body })
      response.writeHead(202).end()
      return
    }
    if (request.method === 'GET' && url.pathname === '/messages') {
      const to = url.searchParams.get('to')
      const found = messages.filter((m) => !to || m.body?.personalizations?.[0]?.to?.[0]?.email === to)
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(found))
      return
    }
    response.writeHead(404).end()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (!address || typeof address === 'string') throw new Error('mail catcher did not start')
  project.provide('mailCatcherUrl', `http://127.0.0.1:${address.port}`)
  return () => new Promise<void>((resolve) => server.close(() => resolve()))
}
