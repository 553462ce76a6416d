// The sidecar's own HTTP requests to URLs a client names (webhooks, downloadFrom): Gotenberg's allow/deny regular
// expressions on the URL, then the address actually connected to checked (a name that resolves to a loopback,
// private or link-local address is refused unless its host is allowed by name), with a time limit and a size limit
// on what comes back. LibreOffice never fetches anything: it has no network at all (sidecar/sandbox.ts).
import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import type { LookupFunction } from 'node:net'
import { addressLiteral, specialUseRange } from '../shared/addresses.ts'

/** Which URLs one feature may reach (Gotenberg's --webhook-allow-list / --webhook-deny-list and the like). */
export interface UrlPolicy {
  /** When set, a URL must match it. */
  readonly allow?: RegExp
  /** When set, a URL must not match it. */
  readonly deny?: RegExp
  /** Hosts, as written in URLs, that may be loopback or private addresses (none by default). */
  readonly privateHosts: readonly string[]
}

/** A URL this server will not reach: its lists refuse it, or it names a private address. Gotenberg answers 403. */
export class UrlRefusedError extends Error {}
/** The far end failed: no connection, a timeout, a non-2xx status, or an answer over the size limit. */
export class OutboundError extends Error {}

/**
 * Whether an IP address may not be reached: any special-use one (loopback, private, link-local with the cloud
 * metadata address, multicast, reserved, and every IPv6 form that carries an IPv4 address), by the classifier the
 * Worker's webhooks use too (shared/addresses.ts).
 */
export function isPrivateAddress(address: string): boolean {
  return specialUseRange(address) !== undefined
}

const bareHost = (hostname: string) => hostname.toLowerCase().replace(/^\[|\]$/g, '')

/** Checks a URL against a policy before any connection; the address is checked again once resolved. */
export function checkUrl(raw: string, policy: UrlPolicy): URL {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new UrlRefusedError(`'${raw}' is not a URL`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UrlRefusedError(`'${raw}' is not an http or https URL`)
  if (policy.allow && !policy.allow.test(raw))
    throw new UrlRefusedError(`'${raw}' does not match the expression from the allowed list`)
  if (policy.deny?.test(raw)) throw new UrlRefusedError(`'${raw}' matches the expression from the denied list`)
  const host = bareHost(url.hostname)
  const literal = addressLiteral(host)
  if (literal && isPrivateAddress(literal) && !policy.privateHosts.includes(host))
    throw new UrlRefusedError(
      `'${raw}' names a special-use address (${specialUseRange(literal)}): only global unicast addresses are reached`,
    )
  return url
}

/** A DNS lookup that refuses private addresses for hosts not allowed by name: a public name can point anywhere. */
function guardedLookup(host: string, policy: UrlPolicy): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0)
      const list = addresses as unknown as LookupAddress[]
      const refused = !policy.privateHosts.includes(host) && list.some((entry) => isPrivateAddress(entry.address))
      if (refused)
        return callback(
          new UrlRefusedError(
            `'${hostname}' resolves to a special-use address: only global unicast addresses are reached`,
          ),
          '',
          0,
        )
      if ((options as { all?: boolean }).all)
        return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list)
      callback(null, list[0]!.address, list[0]!.family)
    })
  }
}

export interface OutboundRequest {
  readonly method: string
  readonly headers?: Readonly<Record<string, string>>
  readonly body?: Uint8Array
  readonly timeoutMs: number
  /** For answers read whole: more is an error. */
  readonly maxBytes: number
}

export interface OutboundAnswer {
  readonly status: number
  readonly headers: IncomingMessage['headers']
  readonly body: Uint8Array
}

/**
 * One request, never following redirects (the caller decides, checking each hop). The time limit covers the
 * whole exchange, a slow body included; the answer is read up to maxBytes and refused beyond.
 */
export function sendRequest(url: URL, policy: UrlPolicy, request: OutboundRequest): Promise<OutboundAnswer> {
  const host = bareHost(url.hostname)
  return new Promise((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest
    const headers: Record<string, string> = { 'user-agent': 'Gotenberg', ...request.headers }
    if (request.body) headers['content-length'] = String(request.body.byteLength)
    const outgoing = send(url, { method: request.method, headers, lookup: guardedLookup(host, policy) }, (incoming) => {
      const chunks: Buffer[] = []
      let size = 0
      const declared = Number(incoming.headers['content-length'] ?? '0')
      if (declared > request.maxBytes)
        return fail(new OutboundError(`the answer from '${url.origin}' is larger than ${request.maxBytes} bytes`))
      incoming.on('data', (chunk: Buffer) => {
        size += chunk.length
        if (size > request.maxBytes)
          return fail(new OutboundError(`the answer from '${url.origin}' is larger than ${request.maxBytes} bytes`))
        chunks.push(chunk)
      })
      incoming.on('end', () => {
        clearTimeout(timer)
        resolve({
          status: incoming.statusCode ?? 0,
          headers: incoming.headers,
          body: new Uint8Array(Buffer.concat(chunks)),
        })
      })
      incoming.on('error', (error) => fail(error))
    })
    const fail = (error: Error) => {
      clearTimeout(timer)
      outgoing.destroy()
      reject(
        error instanceof UrlRefusedError || error instanceof OutboundError
          ? error
          : new OutboundError(`'${request.method}' to '${url.origin}' failed: ${error.message}`),
      )
    }
    const timer = setTimeout(
      () => fail(new OutboundError(`'${request.method}' to '${url.origin}' took more than ${request.timeoutMs} ms`)),
      request.timeoutMs,
    )
    outgoing.on('error', (error) =>
      fail(
        (error as { cause?: unknown }).cause instanceof UrlRefusedError
          ? (error as { cause: UrlRefusedError }).cause
          : error,
      ),
    )
    outgoing.end(request.body)
  })
}
