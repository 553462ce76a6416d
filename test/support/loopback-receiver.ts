// A loopback HTTP server for the sidecar's outbound requests (Gotenberg's "webhook server" and "static server" of
// test/integration/scenario/server.go): it records every request it gets (method, path, headers, whole body) and
// answers through a handler the test gives, so a test can serve a file, redirect, stall or fail on purpose.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { until } from './until'

export interface ReceivedRequest {
  readonly method: string
  readonly path: string
  readonly headers: IncomingMessage['headers']
  readonly body: Buffer
}

export interface LoopbackReceiver {
  readonly url: string
  readonly port: number
  readonly received: ReceivedRequest[]
  /** The first request to `path` (waits for it, deadline sized for a loaded machine). */
  request(path: string): Promise<ReceivedRequest>
  close(): Promise<void>
}

type Handler = (request: ReceivedRequest, response: ServerResponse) => void | Promise<void>

export async function startReceiver(
  handle: Handler = (_, response) => void response.writeHead(200).end('OK'),
): Promise<LoopbackReceiver> {
  const received: ReceivedRequest[] = []
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = []
    for await (const chunk of request) chunks.push(chunk as Buffer)
    const entry = {
      method: request.method ?? '',
      path: new URL(request.url ?? '/', 'http://receiver').pathname,
      headers: request.headers,
      body: Buffer.concat(chunks),
    }
    received.push(entry)
    await handle(entry, response)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  const port = typeof address === 'object' && address ? address.port : 0
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    received,
    request: (path) =>
      until(`a request to ${path}`, () => received.find((entry) => entry.path === path)) as Promise<ReceivedRequest>,
    close: () => {
      server.closeAllConnections()
      return new Promise((resolve) => server.close(() => resolve()))
    },
  }
}
