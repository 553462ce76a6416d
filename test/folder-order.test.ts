// Folders depend one way (STYLE.md §1, issue 33): routes → pipeline/previews → files/converters → engines → db,
// never back. Each worker/ file belongs to one tier below; a file may import its own tier or lower ones, never a
// higher one, and below the routes two folders of one tier never import each other both ways (auth ↔ rules did:
// the models they share are in models/ now; files ↔ previews did: preview-kind.ts is in files/ now). Like the cycle
// test it reads run-time imports: `import type` is erased before the Worker runs.
import { describe, expect, it } from 'vitest'
import { importGraph, relativeImports, sources } from './support/import-graph'

/** The tiers, highest first. A file is in the first tier one of whose patterns its path matches. */
const TIERS: readonly { name: string; files: readonly RegExp[] }[] = [
  // Each deployed Worker's entry and what only an entry runs (the app, its shell and its route groups, the scheduled
  // sweeps, the engine Workers).
  {
    name: 'entries',
    files: [/^worker\/(index|consumer|app|app-shell|shell|sweeps)\.ts$/, /^worker\/(engine-workers|groups)\//],
  },
  // HTTP: route files, the OpenAPI document and the route declaration helpers.
  {
    name: 'routes',
    files: [/\/([\w-]+-)?routes\.ts$/, /^worker\/docs\//, /^worker\/(api|allowed-methods|cors|origin)\.ts$/],
  },
  { name: 'pipeline/previews', files: [/^worker\/(pipeline|previews)\//, /^worker\/queue\.ts$/] },
  { name: 'files/converters', files: [/^worker\/(files|converters|auth|rules|models|email)\//] },
  { name: 'engines', files: [/^worker\/engines\//] },
  { name: 'db', files: [/^worker\/db\//] },
  // Leaves every tier may use: the error table and how a conversion fails, the settings, name checks, sealing, magic
  // numbers, and zod's one locale (the bundles' [alias] of zod's locales index).
  { name: 'leaves', files: [/^worker\/(errors|conversion-error|config|names|sealing|magic|zod-locales)\.ts$/] },
  // The code the sidecar runs too (the address classifier, Gotenberg's form rules): below every Worker folder.
  { name: 'shared', files: [/^shared\//] },
]

const ROUTES = TIERS.findIndex((tier) => tier.name === 'routes')

function tierOf(path: string): number {
  return TIERS.findIndex((tier) => tier.files.some((pattern) => pattern.test(path)))
}

/** worker/auth/users.ts → worker/auth; worker/queue.ts → worker/queue.ts. */
function folderOf(path: string): string {
  const parts = path.split('/')
  return parts.length > 2 ? parts.slice(0, 2).join('/') : path
}

describe('the folder order of worker/', () => {
  const graph = importGraph()

  it('puts every worker/ and shared/ file in a tier', () => {
    expect(Object.keys(sources).length).toBeGreaterThan(50)
    expect(Object.keys(sources).filter((path) => !path.endsWith('.d.ts') && tierOf(path) < 0)).toEqual([])
  })

  it('never imports from a higher tier', () => {
    const upward: string[] = []
    for (const [file, imports] of graph) {
      for (const target of imports) {
        if (tierOf(target) < tierOf(file))
          upward.push(`${file} (${TIERS[tierOf(file)]?.name}) → ${target} (${TIERS[tierOf(target)]?.name})`)
      }
    }
    expect(upward).toEqual([])
  })

  it('has no two folders of one tier below the routes importing each other', () => {
    const edges = new Map<string, string[]>()
    for (const [file, imports] of graph) {
      for (const target of imports) {
        const [from, to] = [folderOf(file), folderOf(target)]
        if (from === to || tierOf(file) !== tierOf(target) || tierOf(file) <= ROUTES) continue
        edges.set(`${from} → ${to}`, [...(edges.get(`${from} → ${to}`) ?? []), `${file} → ${target}`])
      }
    }
    const bothWays = [...edges.keys()].filter((edge) => edges.has(edge.split(' → ').reverse().join(' → ')))
    expect(bothWays.map((edge) => `${edge}: ${edges.get(edge)!.join(', ')}`)).toEqual([])
  })

  it("places a folder's route files among routes and its other files in the folder's tier", () => {
    const tierName = (path: string) => TIERS[tierOf(path)]?.name
    expect(
      [
        'worker/files/routes.ts',
        'worker/auth/api-key-routes.ts',
        'worker/files/records.ts',
        'worker/queue.ts',
        'worker/db/schema.ts',
      ].map(tierName),
    ).toEqual(['routes', 'routes', 'files/converters', 'pipeline/previews', 'db'])
  })
})

// The pipeline asks the registry (STYLE.md §3): above the converters, only the Worker's entries (which wire each
// converter's work to where it runs) name a converter, its catalog entry or its options.
describe('converters named only by the registry', () => {
  it('lets the pipeline, previews, files and routes import only the interface and the registry of converters/', () => {
    const named = Object.entries(sources).flatMap(([path, source]) =>
      /^worker\/(pipeline|previews|files|auth|rules|models|email|docs|admin)\/|^worker\/[\w-]+\.ts$/.test(path) &&
      !/^worker\/(index|consumer|sweeps)\.ts$/.test(path)
        ? relativeImports(path, source)
            .filter((target) => target.startsWith('worker/converters/'))
            .filter((target) => !/^worker\/converters\/(converter|registry)(\.ts)?$/.test(target))
            .map((target) => `${path} → ${target}`)
        : [],
    )
    expect(named).toEqual([])
  })

  it('lets previews draw through the engines: at run time they import nothing of converters/', () => {
    const previews = Object.entries(sources).filter(([path]) => path.startsWith('worker/previews/'))
    const reached = previews.flatMap(([path, source]) =>
      relativeImports(path, source)
        .filter((target) => target.startsWith('worker/converters/'))
        .map((target) => `${path} → ${target}`),
    )
    expect(previews.length).toBeGreaterThan(0)
    expect(reached).toEqual([])
  })
})

// Code both deployables run (the Worker and the sidecar) lives in shared/ and imports neither of them: the sidecar runs
// it as Node runs TypeScript, without a bundler, so its own imports name their files with `.ts`.
describe('shared/', () => {
  const shared = Object.entries(sources).filter(([path]) => path.startsWith('shared/'))

  it('holds what the Worker runs of the sidecar: the Worker imports nothing of sidecar/', () => {
    expect(shared.length).toBeGreaterThan(0)
    const fromSidecar = Object.entries(sources).flatMap(([path, source]) =>
      relativeImports(path, source)
        .filter((target) => target.startsWith('sidecar/'))
        .map((target) => `${path} → ${target}`),
    )
    expect(fromSidecar).toEqual([])
  })

  it('imports nothing of worker/ or sidecar/, and names its own files as Node needs them', () => {
    const outside = shared.flatMap(([path, source]) =>
      relativeImports(path, source)
        .filter((target) => !target.startsWith('shared/') || !target.endsWith('.ts'))
        .map((target) => `${path} → ${target}`),
    )
    expect(outside).toEqual([])
  })
})

// One module owns each table and the bucket (STYLE.md §1); everyone else calls it.
describe('owners of tables and of the bucket', () => {
  /** The tables a source imports from db/schema. */
  const tablesOf = (source: string) =>
    [...source.matchAll(/^import\s+\{([^}]*)\}\s+from\s+'[./]*db\/schema'/gm)].flatMap((match) =>
      match[1]!
        .split(',')
        .map((name) => name.trim())
        .filter((name) => name && !name.startsWith('type ')),
    )
  const importers = (table: string) => Object.keys(sources).filter((path) => tablesOf(sources[path]!).includes(table))

  it('reads and writes jobs and job_steps only in pipeline/jobs.ts', () => {
    expect([...new Set([...importers('jobs'), ...importers('jobSteps')])]).toEqual(['worker/pipeline/jobs.ts'])
  })

  it("reads and writes files and previews only in files/, never in its route files (a handler calls the module's query)", () => {
    expect(
      [...importers('files'), ...importers('previews')].filter(
        (path) => !path.startsWith('worker/files/') || /routes\.ts$/.test(path),
      ),
    ).toEqual([])
  })

  it('reaches the bucket only in files/', () => {
    const calls = Object.entries(sources).filter(
      ([path, source]) =>
        !path.startsWith('worker/files/') &&
        /\b(bucket|BUCKET)\.(get|put|head|list|delete|createMultipartUpload|resumeMultipartUpload)\(/.test(source),
    )
    expect(calls.map(([path]) => path)).toEqual([])
  })
})

// One helper each (issue 33): times answered through db/times.ts's `iso`, and bytes through the platform's own
// helpers where workerd has them (Uint8Array.prototype.toHex/toBase64, Uint8Array.fromBase64, node:zlib's crc32).
describe('one helper each', () => {
  const written = (pattern: RegExp, owner?: string) =>
    Object.entries(sources)
      .filter(([path, source]) => path !== owner && !path.endsWith('.d.ts') && pattern.test(source))
      .map(([path]) => path)

  it('formats times only through db/times.ts', () => {
    expect(written(/\.toISOString\(/, 'worker/db/times.ts')).toEqual([])
  })

  it("writes no hex, base64 or CRC-32 of its own where workerd's are", () => {
    expect(written(/toString\(16\)\.padStart\(2|\bbtoa\(|\batob\(|0xedb88320/i)).toEqual([])
  })
})
