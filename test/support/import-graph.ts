/// <reference types="vite/client" />
// The run-time import graph of worker/, read from the sources (Vite's raw glob): the cycle test and the folder-order
// test walk it. `import type` is left out: it is erased before the Worker runs.
export const sources: Record<string, string> = Object.fromEntries(
  Object.entries(
    import.meta.glob<string>('../../worker/**/*.ts', { query: '?raw', import: 'default', eager: true }),
  ).map(([path, source]) => [path.replace(/^(\.\.\/)+/, ''), source]),
)

/** The worker/ files a source imports at run time (relative specifiers only; packages cannot cycle back). */
function runtimeImports(path: string, source: string): string[] {
  const found: string[] = []
  for (const match of source.matchAll(
    /^\s*(?:import|export)\s+(?!type\b)(?:[^'";]*?\sfrom\s+)?['"](\.{1,2}\/[^'"]+)['"]/gm,
  )) {
    const url = new URL(match[1]!, `file:///${path}`).pathname.slice(1)
    const target = [url, `${url}.ts`, url.replace(/\.js$/, '.ts'), `${url}/index.ts`].find(
      (candidate) => candidate in sources,
    )
    if (target) found.push(target)
  }
  return found
}

/** Each worker/ file and the worker/ files it imports at run time. */
export function importGraph(): Map<string, string[]> {
  return new Map(Object.entries(sources).map(([path, source]) => [path, runtimeImports(path, source)]))
}
