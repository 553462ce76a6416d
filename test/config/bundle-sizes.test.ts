// Every Worker fits Cloudflare's Worker size limit. Workers limits: "Worker size: 3 MB (Free), 10 MB (Paid)", after
// compression (developers.cloudflare.com/workers/platform/limits/#worker-size). Each config is built as
// `wrangler deploy --dry-run` builds it, and its modules (JavaScript, WebAssembly, fonts) are gzipped one by one:
// what wrangler uploads. Workers Paid is required anyway (docs/platform-limits.md, "Requirements").
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { afterAll, expect, it } from 'vitest'
import { buildWorker } from '../support/wrangler-build.ts'

const PAID_WORKER_MAX_BYTES = 10 * 1000 * 1000
const scratch = mkdtempSync(join(tmpdir(), 'edgefloor-bundle-sizes-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

function files(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name)
    return statSync(path).isDirectory() ? files(path) : [path]
  })
}

it.each([
  'wrangler.toml',
  'wrangler.consumer.toml',
  'wrangler.engine-pdf.toml',
  'wrangler.engine-image.toml',
  'wrangler.engine-text.toml',
  'wrangler.engine-avif.toml',
  'wrangler.passkeys.toml',
])(
  '%s builds to a Worker within the Paid plan size limit, gzipped',
  (config) => {
    const out = join(scratch, config)
    buildWorker(config, out)
    const modules = files(out).filter((path) => !path.endsWith('.map') && !path.endsWith('.json'))
    expect(modules.length).toBeGreaterThan(0)
    const gzipped = modules.reduce((sum, path) => sum + gzipSync(readFileSync(path), { level: 9 }).length, 0)
    expect(gzipped).toBeLessThanOrEqual(PAID_WORKER_MAX_BYTES)
    // Issue 29: the AVIF encoder (libavif, 3.5 MB of WASM that workerd compiles at each cold start) is in the AVIF
    // Worker's bundle alone; the drawing Workers send it their pixels (worker/engine-workers/avif.ts).
    const avifEncoders = modules.filter((path) => path.includes('avif_enc'))
    expect(avifEncoders.length).toBe(config === 'wrangler.engine-avif.toml' ? 1 : 0)
  },
  300_000,
)
