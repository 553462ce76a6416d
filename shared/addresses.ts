// The one address classifier for every request to a URL a client names: the Worker's job webhooks
// (worker/pipeline/webhooks.ts imports this file) and the sidecar's downloadFrom and webhooks (sidecar/outbound.ts).
// Only global unicast addresses may be reached. The special-use ranges are ipaddr.js's (IANA's special-purpose
// registries: loopback, private, link-local, CGNAT, multicast, reserved, documentation, IPv4-mapped, IPv4-translated
// (RFC 6145), NAT64 (RFC 6052, 64:ff9b::/96 and 64:ff9b:1::/48), 6to4, Teredo, …), plus the IPv4-compatible block
// ::/96 (RFC 4291 §2.5.5.1, deprecated), which ipaddr.js counts as unicast. An address that carries an IPv4 address
// inside is refused whatever that address is: no public receiver needs one. Imports nothing Node-only.
import ipaddr from 'ipaddr.js'

const IPV4_COMPATIBLE = { ipv4Compatible: [ipaddr.IPv6.parse('::'), 96] as [ipaddr.IPv6, number] }

/**
 * The special-use range an IP address is in (ipaddr.js's name, e.g. `loopback`, `rfc6052`), or undefined for a global
 * unicast one.
 */
export function specialUseRange(address: string): string | undefined {
  if (!ipaddr.isValid(address)) return 'invalid'
  const parsed = ipaddr.parse(address)
  if (
    parsed.kind() === 'ipv6' &&
    ipaddr.subnetMatch(parsed, IPV4_COMPATIBLE, 'none') === 'ipv4Compatible' &&
    parsed.range() === 'unicast'
  )
    return 'ipv4Compatible'
  const range = parsed.range()
  return range === 'unicast' ? undefined : range
}

/** A URL's hostname as an IP literal (brackets off), or undefined when it is a name. */
export function addressLiteral(hostname: string): string | undefined {
  const host = hostname.replace(/^\[|\]$/g, '')
  return ipaddr.isValid(host) && (host.includes(':') || ipaddr.IPv4.isValidFourPartDecimal(host)) ? host : undefined
}

/** Names that mean this machine wherever they are resolved (RFC 6761 §6.3: "localhost." and the names under it). */
export function isLocalName(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, '')
  return host === 'localhost' || host.endsWith('.localhost') || host === 'localhost.localdomain'
}
