// wrangler.toml and wrangler.consumer.toml [alias] zod's locales index ("../locales/index.js") to
// worker/zod-locales.ts, which keeps only English: the Workers parse ~260 KB less at every cold start (issue 29,
// startup). wrangler's alias matches an import specifier exactly, wherever it is written, so this builds both
// Workers as `wrangler deploy --dry-run` does and reads esbuild's metafile: only zod's own modules may reach the
// replacement, and zod's default error map (zod/v4/locales/en.js, which zod's classic schemas install on first use)
// is the one bundled, so every message stays zod's English one.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { buildWorker } from '../support/wrangler-build.ts'

const scratch = mkdtempSync(join(tmpdir(), 'edgefloor-zod-locales-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

interface Metafile {
  inputs: Record<string, { imports: { path: string; original?: string }[] }>
}

function bundleInputs(config: string): Metafile['inputs'] {
  const out = join(scratch, config)
  buildWorker(config, out, ['--metafile', join(out, 'meta.json')])
  return (JSON.parse(readFileSync(join(out, 'meta.json'), 'utf8')) as Metafile).inputs
}

describe.each(['wrangler.toml', 'wrangler.consumer.toml'])('%s', (config) => {
  const inputs = bundleInputs(config)
  const importersOf = (target: string) =>
    Object.entries(inputs)
      .filter(([, input]) => input.imports.some((imported) => imported.path === target))
      .map(([path]) => path)
      .sort()

  it('gives the locales index only to zod, which never reads a locale but English by itself', () => {
    expect(importersOf('worker/zod-locales.ts')).toEqual([
      'node_modules/zod/v4/classic/external.js',
      'node_modules/zod/v4/core/index.js',
    ])
    expect(Object.keys(inputs).filter((path) => path.includes('zod/v4/locales/'))).toEqual([
      'node_modules/zod/v4/locales/en.js',
    ])
  })

  it("bundles zod's English error map where zod installs it, so messages are unchanged", () => {
    expect(importersOf('node_modules/zod/v4/locales/en.js')).toEqual([
      'node_modules/zod/v4/classic/schemas.js',
      'worker/zod-locales.ts',
    ])
  })
})
