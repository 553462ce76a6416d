// The one way tests build a request to the API: a client address, the bearer token, a JSON body. It imports no
// workerd module, so Node-side tests can build their requests with it too.

export const BASE = 'http://edgefloor.test'

export interface CallOptions {
  token?: string
  json?: unknown
  body?: BodyInit
  headers?: Record<string, string>
  /** Client address as Cloudflare reports it; a fresh one per call unless given (rate limits are per IP). */
  ip?: string
}

export function randomIp(): string {
  const octet = () => Math.floor(Math.random() * 254) + 1
  return `10.${octet()}.${octet()}.${octet()}`
}

/**
 * The Request a call sends. Redirects stay answers (a fetch would follow them: provider sign-in answers 302).
 * `base` is the API's origin: the Worker under test in workerd unless given.
 */
export function requestFor(method: string, path: string, options: CallOptions = {}, base = BASE): Request {
  const headers = new Headers(options.headers)
  headers.set('cf-connecting-ip', options.ip ?? randomIp())
  if (options.token) headers.set('authorization', `Bearer ${options.token}`)
  let body = options.body
  if (options.json !== undefined) {
    headers.set('content-type', 'application/json')
    body = JSON.stringify(options.json)
  }
  return new Request(`${base}${path}`, { method, headers, body, redirect: 'manual' })
}
