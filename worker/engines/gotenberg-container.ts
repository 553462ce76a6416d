// The sidecar (sidecar/Dockerfile) as a Cloudflare Container: a Durable Object whose container runs the
// Gotenberg-compatible server on port 3000. The consumer Worker reaches it through its binding
// (GOTENBERG_CONTAINER in wrangler.consumer.toml), never over the internet: the requests go from the Durable Object
// to the container's port, so GOTENBERG_URL stays a loopback URL naming nothing public. The container starts on the
// first request (LibreOffice and Chromium warm up inside it before /health answers 200) and sleeps after
// SLEEP_AFTER_MS without one; requests meanwhile wait for its port, within the conversion's own timeout.
import { DurableObject } from 'cloudflare:workers'

/** The port the sidecar listens on inside the container (SIDECAR_PORT). */
export const SIDECAR_PORT = 3000
/** How long an idle container stays up: past it, the next document pays LibreOffice's start again (a few seconds). */
const SLEEP_AFTER_MS = 10 * 60_000
/** How long to wait for the sidecar's port after a start before answering 503 (the converter retries). */
const START_TIMEOUT_MS = 60_000

/** The settings the sidecar gets inside the container (sidecar/server.ts optionsFromEnv). */
const SIDECAR_ENV = {
  SIDECAR_HOST: '0.0.0.0',
  SIDECAR_PORT: String(SIDECAR_PORT),
  // Sized to the instance type (standard-1, 4 GiB: docs/gotenberg.md has the measured memory): two processes, two pages.
  SIDECAR_PROCESSES: '2',
  SIDECAR_CHROMIUM_PAGES: '2',
  SIDECAR_HEALTH_LOGGING: 'false',
}

/** What of workerd's Container the forwarding uses (a test stands in for it: workerd builds no DurableObjectState). */
export type SidecarContainer = Pick<Container, 'running' | 'start' | 'setInactivityTimeout' | 'getTcpPort'>

/** Starts the container when it is not running, then hands the request to the sidecar's port once it listens. */
export async function forwardToSidecar(container: SidecarContainer, request: Request): Promise<Response> {
  if (!container.running) {
    // No internet from inside: downloadFrom, webhooks and URL pages then reach nothing, as the Worker sends none.
    container.start({ env: SIDECAR_ENV, enableInternet: false })
  }
  await container.setInactivityTimeout(SLEEP_AFTER_MS)
  const port = container.getTcpPort(SIDECAR_PORT)
  const deadline = Date.now() + START_TIMEOUT_MS
  // The body is read once: kept as bytes so that a try the port refused can be made again.
  const body = request.body ? await request.arrayBuffer() : undefined
  for (let wait = 100; ; wait = Math.min(wait * 2, 2000)) {
    try {
      return await port.fetch(new Request(request, { body }))
    } catch (error) {
      // A port not yet listening: the container is starting.
      if (Date.now() + wait > deadline) return new Response(`Service Unavailable: the sidecar container did not start: ${(error as Error).message}`, { status: 503 })
      await new Promise((resolve) => setTimeout(resolve, wait))
    }
  }
}

export class GotenbergContainer extends DurableObject {
  override async fetch(request: Request): Promise<Response> {
    const container = this.ctx.container
    if (!container) return new Response('Service Unavailable: this Durable Object has no container', { status: 503 })
    return forwardToSidecar(container, request)
  }
}
