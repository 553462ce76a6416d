// The compose file cannot run here (no Docker engine): its structure is checked instead, parsed as YAML, with
// the gateway's nginx config it mounts.
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { GOTENBERG_VERSION } from '../../sidecar/server'

interface Service {
  image?: string
  command?: string[]
  environment?: Record<string, string>
  ports?: string[]
  networks: string[] | Record<string, { aliases?: string[] } | null>
  profiles?: string[]
  volumes?: string[]
  build?: { dockerfile: string }
  healthcheck: { test: string[] }
}

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8')
const compose = parse(read('docker-compose.sidecar.yml')) as {
  services: Record<string, Service>
  networks: Record<string, { internal?: boolean } | null>
}
const { gateway, gotenberg } = compose.services as Record<'gateway' | 'gotenberg', Service>
const sidecar = compose.services['edgefloor-sidecar']!
const networksOf = (service: Service) =>
  Array.isArray(service.networks) ? service.networks : Object.keys(service.networks)
const aliasesOf = (service: Service, network: string) =>
  Array.isArray(service.networks) ? [] : (service.networks[network]?.aliases ?? [])

describe('docker-compose.sidecar.yml', () => {
  it('pins the official Gotenberg image at the version the sidecar serves, 8.34 or later', () => {
    expect(gotenberg.image).toBe(`gotenberg/gotenberg:${GOTENBERG_VERSION}`)
    const [, minor] = /^8\.(\d+)\.\d+$/.exec(GOTENBERG_VERSION) ?? []
    expect(Number(minor)).toBeGreaterThanOrEqual(34)
  })

  it('configures Gotenberg through its documented flags: timeout, auth, LibreOffice restarts, no Chromium', () => {
    const flags = Object.fromEntries(
      gotenberg.command!.slice(1).map((flag) => flag.replace(/^--/, '').split('=') as [string, string]),
    )
    expect(gotenberg.command![0]).toBe('gotenberg')
    expect(flags).toMatchObject({
      'api-timeout': expect.stringMatching(/^\$\{GOTENBERG_API_TIMEOUT:-\d+s\}$/),
      'api-enable-basic-auth': expect.any(String),
      'libreoffice-restart-after': '10',
      'chromium-disable-routes': 'true',
    })
    expect(Object.keys(gotenberg.environment!).sort()).toEqual([
      'GOTENBERG_API_BASIC_AUTH_PASSWORD',
      'GOTENBERG_API_BASIC_AUTH_USERNAME',
    ])
    expect(gotenberg.healthcheck.test.join(' ')).toContain('/health')
  })

  it('keeps the converters on an internal network, with no published port', () => {
    expect(compose.networks.conversion).toEqual({ internal: true })
    for (const converter of [gotenberg, sidecar]) {
      expect(networksOf(converter)).toEqual(['conversion'])
      expect(converter.ports).toBeUndefined()
      expect(aliasesOf(converter, 'conversion')).toContain('converter')
    }
  })

  it('publishes the nginx gateway alone, on loopback port 3000, bridging the internal network and the outside', () => {
    const published = Object.entries(compose.services).filter(([, service]) => service.ports)
    expect(published.map(([name]) => name)).toEqual(['gateway'])
    expect(gateway.ports).toEqual(['127.0.0.1:3000:3000'])
    expect(gateway.image).toMatch(/^nginx:\d+\.\d+\.\d+-alpine$/)
    expect(networksOf(gateway).sort()).toEqual(['conversion', 'edge'])
    expect(compose.networks.edge?.internal).toBeFalsy()
    expect(gateway.volumes).toEqual(['./sidecar/gateway.nginx.conf:/etc/nginx/conf.d/default.conf:ro'])
    expect(gateway.healthcheck.test.join(' ')).toContain('http://127.0.0.1:3000/health')
  })

  it("has the gateway forward to the converter on port 3000, with room for documents and the converter's timeout", () => {
    const nginx = read('sidecar/gateway.nginx.conf')
    expect(nginx).toMatch(/^\s*listen 3000;/m)
    expect(nginx).toMatch(/set \$converter http:\/\/converter:3000;\s*proxy_pass \$converter;/)
    expect(nginx).toMatch(/^\s*resolver 127\.0\.0\.11\b/m)
    expect(nginx).toMatch(/^\s*client_max_body_size 100m;/m)
    const [, readSeconds] = /proxy_read_timeout (\d+)s;/.exec(nginx) ?? []
    const [, apiSeconds] = /GOTENBERG_API_TIMEOUT:-(\d+)s/.exec(gotenberg.command!.join(' ')) ?? []
    expect(Number(readSeconds)).toBeGreaterThan(Number(apiSeconds))
    // Its own refusals are plain text like Gotenberg's; the converter's answers are never replaced.
    expect(nginx).toMatch(
      /error_page 413 @too_large;[\s\S]*location @too_large \{\s*default_type "text\/plain; charset=utf-8";\s*return 413 "Request Entity Too Large";/,
    )
    expect(nginx).not.toContain('proxy_intercept_errors on')
  })

  it('offers our sidecar as a profile built from sidecar/Dockerfile', () => {
    expect(sidecar.profiles).toEqual(['edgefloor-sidecar'])
    expect(sidecar.build!.dockerfile).toBe('sidecar/Dockerfile')
    expect(sidecar.environment!.SIDECAR_PORT).toBe('3000')
    expect(sidecar.healthcheck.test.join(' ')).toContain('/health')
    expect(read('sidecar/Dockerfile')).toContain('libreoffice-writer-nogui')
  })
})
