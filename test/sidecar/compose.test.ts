// The compose file cannot run here (no Docker engine): its structure is checked instead.
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'

const compose = parse(readFileSync(new URL('../../docker-compose.sidecar.yml', import.meta.url), 'utf8'))

describe('docker-compose.sidecar.yml', () => {
  it('runs the official Gotenberg 8 image, pinned at 8.34 or later, on loopback port 3000', () => {
    const gotenberg = compose.services.gotenberg
    const [, minor] = /^gotenberg\/gotenberg:8\.(\d+)\.\d+$/.exec(gotenberg.image) ?? []
    expect(Number(minor)).toBeGreaterThanOrEqual(34)
    expect(gotenberg.ports).toEqual(['127.0.0.1:3000:3000'])
    expect(gotenberg.healthcheck.test.join(' ')).toContain('/health')
    expect(gotenberg.command.join(' ')).toContain('--api-timeout=')
  })

  it('offers our sidecar as a profile built from sidecar/Dockerfile', () => {
    const sidecar = compose.services['edgefloor-sidecar']
    expect(sidecar.profiles).toEqual(['edgefloor-sidecar'])
    expect(sidecar.build.dockerfile).toBe('sidecar/Dockerfile')
    expect(sidecar.healthcheck.test.join(' ')).toContain('/health')
    expect(readFileSync(new URL('../../sidecar/Dockerfile', import.meta.url), 'utf8')).toContain('libreoffice-writer-nogui')
  })

  it('publishes the converters on loopback only, on their own network', () => {
    for (const service of Object.values(compose.services) as Array<{ networks: string[]; ports: string[] }>) {
      expect(service.networks).toEqual(['conversion'])
      for (const port of service.ports) expect(port.startsWith('127.0.0.1:')).toBe(true)
    }
  })
})
