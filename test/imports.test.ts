// Dependencies point one way (STYLE.md §1): no module of the Worker imports, at run time, one that imports it
// back. The email module had such a cycle through the account mail templates, files one through the pipeline's
// hooks; this reads every worker/ source and fails naming the cycle if one comes back. `import type` is left out:
// it is erased before the Worker runs. The order of folders is test/folder-order.test.ts.
import { describe, expect, it } from 'vitest'
import { importGraph, sources } from './support/import-graph'

/** Every cycle, each as the chain of files from its first to itself again. */
function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = []
  const state = new Map<string, 'open' | 'done'>()
  const stack: string[] = []
  const visit = (file: string) => {
    state.set(file, 'open')
    stack.push(file)
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') found.push([...stack.slice(stack.indexOf(next)), next])
      else if (!state.has(next)) visit(next)
    }
    stack.pop()
    state.set(file, 'done')
  }
  for (const file of graph.keys()) if (!state.has(file)) visit(file)
  return found
}

/** Every worker/ file `entry` reaches at run time, each with the chain of imports that reaches it. */
function reachedFrom(graph: Map<string, string[]>, entry: string): Map<string, string> {
  const reached = new Map<string, string>([[entry, entry]])
  const queue = [entry]
  while (queue.length > 0) {
    const file = queue.shift()!
    for (const next of graph.get(file) ?? []) {
      if (reached.has(next)) continue
      reached.set(next, `${reached.get(file)} → ${next}`)
      queue.push(next)
    }
  }
  return reached
}

/** Whether a source imports `pkg` (or a path of it) at run time: statically, re-exported or dynamically. */
const importsPackage = (source: string, pkg: string) =>
  new RegExp(
    `^\\s*(?:import|export)\\s+(?!type\\b)(?:[^'";]*?\\sfrom\\s+)?['"]${pkg}[/'"]|import\\(\\s*['"]${pkg}[/'"]`,
    'm',
  ).test(source)

describe('the import graph of worker/', () => {
  const graph = importGraph()

  it('reads the whole Worker, the email module and its users among it', () => {
    expect(graph.size).toBeGreaterThan(50)
    const email = [...graph.keys()].filter((path) => path.startsWith('worker/email/'))
    expect(email.length).toBeGreaterThan(0)
    expect([...graph.values()].some((imports) => imports.some((target) => email.includes(target)))).toBe(true)
  })

  it('has no cycle', () => {
    expect(cycles(graph).map((cycle) => cycle.join(' → '))).toEqual([])
  })

  // STYLE.md §12 and issue 29: each deployed Worker carries only the code it runs. On Cloudflare every WASM module of
  // a bundle is compiled before its first request (the 1 s startup limit), so the API Worker must reach no engine and
  // no converter's work: it chooses converters from their info (worker/converters/catalog/) alone.
  it('keeps every conversion engine and converter out of the API Worker (worker/index.ts)', () => {
    const reached = reachedFrom(graph, 'worker/index.ts')
    const engines = [...reached.keys()].filter(
      (path) => path.startsWith('worker/engines/') && path !== 'worker/engines/transcribe/settings.ts',
    )
    const work = [...reached.keys()].filter(
      (path) =>
        path.startsWith('worker/converters/') &&
        !path.startsWith('worker/converters/catalog/') &&
        !['worker/converters/converter.ts', 'worker/converters/registry.ts'].includes(path),
    )
    expect([...engines, ...work].map((path) => reached.get(path))).toEqual([])
    // The consumer Worker does reach them: the walk above would find them if they were imported.
    expect(graph.get('worker/consumer.ts')).toBeDefined()
  })

  // Issue 29: the WebAuthn ceremonies' libraries (@simplewebauthn/server, its ASN.1 and X.509 parsers: a third of the
  // API Worker's bundle, which workerd compiles at every cold start) run in the passkey Worker (wrangler.passkeys.toml),
  // which the API Worker calls through its PASSKEYS binding. A dynamic import would not do: it stays in the bundle.
  it('keeps the WebAuthn libraries out of the API Worker and in the passkey Worker', () => {
    const api = [...reachedFrom(graph, 'worker/index.ts')]
    expect(
      api.filter(([file]) => importsPackage(sources[file]!, '@simplewebauthn/server')).map(([, chain]) => chain),
    ).toEqual([])
    const passkeys = [...reachedFrom(graph, 'worker/auth/passkey-worker.ts').keys()]
    expect(passkeys.filter((file) => importsPackage(sources[file]!, '@simplewebauthn/server'))).toEqual([
      'worker/auth/webauthn.ts',
    ])
  })

  // Issue 29: libavif's encoder (3.5 MB of WASM, compiled at each cold start of a Worker that bundles it) was in all
  // three drawing engine Workers; they send an AVIF preview's pixels to the AVIF Worker (wrangler.engine-avif.toml)
  // through their AVIF_ENGINE binding. test/config/bundle-sizes.test.ts looks for its .wasm in the built bundles.
  it('keeps the AVIF encoder in the AVIF Worker and out of every other deployed Worker', () => {
    const encoder = '@jsquash/avif/codec/enc'
    const others = ['index', 'consumer', 'engine-workers/pdf', 'engine-workers/image', 'engine-workers/text']
    expect(
      others.flatMap((entry) =>
        [...reachedFrom(graph, `worker/${entry}.ts`)]
          .filter(([file]) => importsPackage(sources[file]!, encoder))
          .map(([, chain]) => chain),
      ),
    ).toEqual([])
    const avif = [...reachedFrom(graph, 'worker/engine-workers/avif.ts').keys()]
    expect(avif.filter((file) => importsPackage(sources[file]!, encoder))).toEqual([
      'worker/engines/image/avif-encode.ts',
    ])
  })

  // Issue 29: a cold start's GET / (and a path no route takes) runs the API Worker's global scope and the status group,
  // imported on the first request (worker/groups/dispatch.ts): zod's first use and the settings as a zod schema were
  // 1.3× the minimal Hono Worker, drizzle's client and tables more (docs/platform-limits.md, Startup). Neither
  // reaches them at run time; the other groups load them on their own first request.
  it('keeps zod and drizzle out of the API Worker until a route group that needs them is built', () => {
    const coldPath = [...reachedFrom(graph, 'worker/index.ts'), ...reachedFrom(graph, 'worker/groups/status.ts')]
    expect(
      coldPath
        .filter(([file]) =>
          ['zod', '@hono/zod-openapi', 'drizzle-orm'].some((pkg) => importsPackage(sources[file]!, pkg)),
        )
        .map(([, chain]) => chain),
    ).toEqual([])
    // The walk would find them: the files group reaches both.
    const files = [...reachedFrom(graph, 'worker/groups/files.ts').keys()]
    expect(files.some((file) => importsPackage(sources[file]!, 'zod'))).toBe(true)
    expect(files.some((file) => importsPackage(sources[file]!, 'drizzle-orm'))).toBe(true)
  })
})
