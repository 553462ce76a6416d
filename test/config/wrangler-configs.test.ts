// The two Workers' configs (issue 17, point 5): wrangler.toml is the API Worker and consumes nothing, so on Cloudflare
// no API isolate runs a conversion; wrangler.consumer.toml runs the queue and the sweeps with the same settings and
// the same D1, R2, queue and AI. The settings are kept in two files and compared here rather than generated at build:
// both stay plain wrangler configs that `wrangler deploy -c` and `wrangler dev -c` read as they are.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { unstable_readConfig } from 'wrangler'
import { writeLocalConsumerConfig } from '../../.ci/local-consumer.ts'
import { root } from '../../bench/wrangler-dev.ts'

interface D1Binding {
  binding: string
  database_name?: string
  database_id?: string
}

const read = (file: string) => unstable_readConfig({ config: file.startsWith('/') ? file : join(root, file) })
const api = read('wrangler.toml')
/** A config's settings, D1, R2, queue and service bindings: none for a Worker reached only through its binding. */
const ownBindings = (config: ReturnType<typeof read>) => [
  config.vars,
  config.d1_databases,
  config.r2_buckets,
  config.queues.producers ?? [],
  config.services ?? [],
]
const consumer = read('wrangler.consumer.toml')

describe('wrangler.toml (the API Worker)', () => {
  it('consumes no queue and has no cron: conversions and sweeps never run in an API isolate', () => {
    expect(api.queues.consumers ?? []).toEqual([])
    expect(api.triggers.crons ?? []).toEqual([])
    expect(api.queues.producers).toEqual([
      { binding: 'CONVERSIONS', queue: 'edgefloor-conversions' },
      { binding: 'PREVIEWS', queue: 'edgefloor-previews' },
    ])
  })
})

describe('wrangler.consumer.toml (the consumer Worker)', () => {
  it('consumes the conversions, the preview drawings (a queue of their own) and their dead letters and runs the sweeps, and serves nothing', () => {
    expect(consumer.name).toBe('edgefloor-consumer')
    expect(consumer.main).toBe(join(root, 'worker/consumer.ts'))
    expect(
      consumer.queues.consumers?.map((queue: { queue: string; dead_letter_queue?: string }) => [
        queue.queue,
        queue.dead_letter_queue,
      ]),
    ).toEqual([
      ['edgefloor-conversions', 'edgefloor-conversions-dlq'],
      ['edgefloor-previews', 'edgefloor-conversions-dlq'],
      ['edgefloor-conversions-dlq', undefined],
    ])
    expect(consumer.triggers.crons).toEqual(['*/15 * * * *'])
    expect(consumer.assets).toBeUndefined()
  })

  // Cloudflare's Containers configuration (https://developers.cloudflare.com/containers/configuration/wrangler/):
  // "a Container definition, a Durable Object binding, and a Durable Object class export", the class created by a
  // new_sqlite_classes migration; instance types per https://developers.cloudflare.com/containers/platform/limits/.
  it('runs the sidecar as a Container: its image, a 4 GiB instance, its Durable Object binding and migration, none locally', async () => {
    expect(consumer.containers).toEqual([
      {
        class_name: 'GotenbergContainer',
        image: join(root, 'sidecar/Dockerfile'),
        // The Dockerfile copies package.json from the repository's root.
        image_build_context: resolve(root),
        instance_type: 'standard-1',
        max_instances: 1,
        name: 'edgefloor-consumer-gotenbergcontainer',
      },
    ])
    expect(consumer.durable_objects.bindings).toEqual([
      { name: 'GOTENBERG_CONTAINER', class_name: 'GotenbergContainer' },
    ])
    expect(consumer.migrations).toEqual([{ tag: 'gotenberg-container-v1', new_sqlite_classes: ['GotenbergContainer'] }])
    expect(consumer.dev.enable_containers).toBe(false)
    // The class the binding names is the one the consumer Worker exports.
    const source = readFileSync(join(root, 'worker/consumer.ts'), 'utf8')
    expect(source).toContain("export { GotenbergContainer } from './engines/gotenberg-container'")
    // The API Worker has no container: it converts nothing.
    expect(api.containers ?? []).toEqual([])
  })

  it('has the same [vars] as wrangler.toml, name for name and value for value', () => {
    expect(Object.keys(api.vars).length).toBeGreaterThan(40)
    expect(consumer.vars).toEqual(api.vars)
    expect(consumer.secrets).toEqual(api.secrets)
  })

  it('names the same D1 database, R2 bucket, queue and AI binding as wrangler.toml', () => {
    const d1 = (config: typeof api) =>
      config.d1_databases.map(({ binding, database_name, database_id }: D1Binding) => ({
        binding,
        database_name,
        database_id,
      }))
    expect(d1(consumer)).toEqual(d1(api))
    expect(consumer.r2_buckets).toEqual(api.r2_buckets)
    expect(consumer.queues.producers).toEqual(api.queues.producers)
    expect(consumer.ai).toEqual(api.ai)
    expect(consumer.compatibility_date).toBe(api.compatibility_date)
    expect(consumer.compatibility_flags).toEqual(api.compatibility_flags)
    expect(consumer.rules).toEqual(api.rules)
    expect(consumer.alias).toEqual(api.alias)
  })

  it("runs locally as itself less the AI binding, with the run's settings beside it (.ci/local-consumer.ts)", () => {
    const dir = mkdtempSync(join(tmpdir(), 'edgefloor-consumer-'))
    try {
      const local = read(writeLocalConsumerConfig(dir, { JWT_SECRET: 'a-secret-long-enough-for-the-schema-check' }))
      expect(local.ai).toBeUndefined()
      expect(local.main).toBe(consumer.main)
      // Its [alias] names the same files from the repository (a config's relative paths start at its folder).
      expect(local.alias).toEqual(
        Object.fromEntries(Object.entries(consumer.alias ?? {}).map(([from, to]) => [from, join(root, String(to))])),
      )
      expect({
        ...local,
        ai: consumer.ai,
        alias: consumer.alias,
        configPath: undefined,
        userConfigPath: undefined,
      }).toEqual({ ...consumer, configPath: undefined, userConfigPath: undefined })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('wrangler.engine-*.toml (the engine Workers)', () => {
  it("are the consumer Worker's service bindings, one engine family each, with no binding, setting or route of their own but the AVIF Worker's", () => {
    expect(
      consumer.services?.map((service: { binding: string; service: string }) => [service.binding, service.service]),
    ).toEqual([
      ['PDF_ENGINE', 'edgefloor-engine-pdf'],
      ['IMAGE_ENGINE', 'edgefloor-engine-image'],
      ['TEXT_ENGINE', 'edgefloor-engine-text'],
    ])
    for (const family of ['pdf', 'image', 'text']) {
      const engine = read(`wrangler.engine-${family}.toml`)
      expect(engine.name).toBe(`edgefloor-engine-${family}`)
      expect(engine.main).toBe(join(root, `worker/engine-workers/${family}.ts`))
      expect(engine.workers_dev).toBe(false)
      expect(ownBindings(engine)).toEqual([
        {},
        [],
        [],
        [],
        [{ binding: 'AVIF_ENGINE', service: 'edgefloor-engine-avif' }],
      ])
    }
  })

  // Issue 29: the AVIF encoder (3.5 MB of WASM, compiled at each cold start) in a Worker of its own, which the three
  // drawing Workers call (their AVIF_ENGINE binding above).
  it('has the AVIF Worker, with no binding, setting or route of its own', () => {
    const avif = read('wrangler.engine-avif.toml')
    expect(avif.name).toBe('edgefloor-engine-avif')
    expect(avif.main).toBe(join(root, 'worker/engine-workers/avif.ts'))
    expect(avif.workers_dev).toBe(false)
    expect(ownBindings(avif)).toEqual([{}, [], [], [], []])
  })
})

describe('wrangler.passkeys.toml (the passkey Worker)', () => {
  it("is the API Worker's PASSKEYS service binding, with no binding, setting or route of its own", () => {
    expect(
      api.services?.map((service: { binding: string; service: string }) => [service.binding, service.service]),
    ).toEqual([['PASSKEYS', 'edgefloor-passkeys']])
    const passkeys = read('wrangler.passkeys.toml')
    expect(passkeys.name).toBe('edgefloor-passkeys')
    expect(passkeys.main).toBe(join(root, 'worker/auth/passkey-worker.ts'))
    expect(passkeys.workers_dev).toBe(false)
    expect(ownBindings(passkeys)).toEqual([{}, [], [], [], []])
  })
})
