// The origin a client reached the API at, for the absolute URLs it answers (tus Location, signed file and events
// URLs). Behind a proxy the request URL is the upstream's; when TRUST_FORWARDED_HOST says the proxy in front sets them,
// Forwarded (RFC 7239) or X-Forwarded-Host/-Proto name the client's. Anyone can send these headers, so they are
// read only when that setting is on, and a value that is not a plain host or scheme is ignored.
import type { Config } from './config'

const HOST = /^(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.?|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/
const PROTO = /^https?$/i

/** The last comma-separated value: the one the proxy nearest the Worker added (earlier ones came from its client). */
const lastValue = (header: string | null) => header?.split(',').at(-1)?.trim() || undefined

const unquote = (value: string) =>
  value.startsWith('"') && value.endsWith('"') && value.length >= 2 ? value.slice(1, -1).replace(/\\(.)/g, '$1') : value

/**
 * RFC 7239 section 4: `Forwarded: for=192.0.2.60;proto=http;by=203.0.113.43;host=example.com`, elements separated by
 * commas, each a `;`-separated list of `token=value` pairs whose value may be a quoted-string.
 */
function fromForwarded(header: string | null): { host?: string; proto?: string } {
  const element = lastValue(header)
  if (!element) return {}
  const pairs = new Map(
    element.split(';').flatMap((pair) => {
      const at = pair.indexOf('=')
      return at > 0 ? [[pair.slice(0, at).trim().toLowerCase(), unquote(pair.slice(at + 1).trim())] as const] : []
    }),
  )
  return { host: pairs.get('host'), proto: pairs.get('proto') }
}

export function requestOrigin(config: Config, request: Request): string {
  const own = new URL(request.url)
  if (!config.TRUST_FORWARDED_HOST) return own.origin
  const forwarded = fromForwarded(request.headers.get('forwarded'))
  const host = forwarded.host ?? lastValue(request.headers.get('x-forwarded-host'))
  const proto = forwarded.proto ?? lastValue(request.headers.get('x-forwarded-proto'))
  const scheme = proto && PROTO.test(proto) ? proto.toLowerCase() : own.protocol.slice(0, -1)
  if (!host || !HOST.test(host)) return scheme === own.protocol.slice(0, -1) ? own.origin : `${scheme}://${own.host}`
  return new URL(`${scheme}://${host}`).origin
}
