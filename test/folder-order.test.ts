// Folders depend one way (STYLE.md §1, issue 33): routes → pipeline/previews → files/converters → engines → db,
// never back. Each worker/ file belongs to one tier below; a file may import its own tier or lower ones, never a
// higher one, and below the routes two folders of one tier never import each other both ways (auth ↔ rules did:
// the models they share are in models/ now; files ↔ previews did: preview-kind.ts is in files/ now). Like the cycle
// test it reads run-time imports: `import type` is erased before the Worker runs.
import { describe, expect, it } from 'vitest'
import { importGraph, sources } from './support/import-graph'

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
  // Leaves every tier may use: the error table, the settings, name checks, sealing, magic numbers, and zod's one
  // locale (the bundles' [alias] of zod's locales index).
  { name: 'leaves', files: [/^worker\/(errors|config|names|sealing|magic|zod-locales)\.ts$/] },
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

  it('puts every worker/ file in a tier', () => {
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

  it('reads and writes files and previews only in files/', () => {
    expect(
      [...importers('files'), ...importers('previews')].filter((path) => !path.startsWith('worker/files/')),
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
