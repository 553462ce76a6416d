// The sidecar (sidecar/Dockerfile) as a Cloudflare Container: a Durable Object whose container runs the
// Gotenberg-compatible server on port 3000. The consumer Worker reaches it through its binding
// (GOTENBERG_CONTAINER in wrangler.consumer.toml), never over the internet: the requests go from the Durable Object
// to the container's port, so GOTENBERG_URL stays a loopback URL naming nothing public. The container starts on the
// first request (LibreOffice and Chromium warm up inside it before /health answers 200) and sleeps after
// SLEEP_AFTER_MS without one; requests meanwhile wait for its port, within the conversion's own timeout.
// Where the object has no container (`wrangler dev` with containers disabled, the default here: no Docker is needed
// to develop), a stand-in with the Container's shape forwards the same requests to GOTENBERG_URL, the local sidecar.
// It uses workerd's Durable Object Container API (ctx.container), which Cloudflare recommends for new applications
// (https://developers.cloudflare.com/containers/api/), rather than the @cloudflare/containers helper class.
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
  // Sized to the instance type (standard-1, 4 GiB; measured memory in docs/gotenberg.md): two processes, two pages.
  SIDECAR_PROCESSES: '2',
  SIDECAR_CHROMIUM_PAGES: '2',
  SIDECAR_HEALTH_LOGGING: 'false',
}

/** What of workerd's Container the forwarding uses (tests stand in for it: no container runs without Docker). */
export interface SidecarContainer extends Pick<Container, 'running' | 'start' | 'setInactivityTimeout'> {
  getTcpPort(port: number): { fetch(request: Request): Promise<Response> }
}

/**
 * The Container's stand-in where there is none: always running, its port the sidecar at `gotenbergUrl` (a request
 * keeps its path, query, headers and body). Locally that is the sidecar `npm start` runs; on Cloudflare an object of
 * this class always has its container, and GOTENBERG_URL's validation (worker/config.ts) still holds.
 */
export function sidecarAt(gotenbergUrl: string): SidecarContainer {
  return {
    running: true,
    start: () => {},
    setInactivityTimeout: async () => {},
    getTcpPort: () => ({
      fetch: (request) => {
        const url = new URL(request.url)
        return fetch(new Request(new URL(url.pathname + url.search, gotenbergUrl), request))
      },
    }),
  }
}

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
      if (Date.now() + wait > deadline)
        return new Response(`Service Unavailable: the sidecar container did not start: ${(error as Error).message}`, {
          status: 503,
        })
      await new Promise((resolve) => setTimeout(resolve, wait))
    }
  }
}

export class GotenbergContainer extends DurableObject<{ GOTENBERG_URL: string }> {
  override async fetch(request: Request): Promise<Response> {
    const container = this.ctx.container
    // No container: straight to the stand-in's port, never waiting for a start. A refused connection throws to the
    // converter, which reports "cannot be reached" at once, as it does without the binding.
    if (!container) return sidecarAt(this.env.GOTENBERG_URL).getTcpPort(SIDECAR_PORT).fetch(request)
    return forwardToSidecar(container, request)
  }
}
