/// <reference types="vite/client" />
// The run-time import graph of worker/ and of shared/ (the code the sidecar runs too), read from the sources (Vite's
// raw glob): the cycle test and the folder-order test walk it. `import type` is left out: it is erased before the
// Worker runs.
export const sources: Record<string, string> = Object.fromEntries(
  Object.entries(
    import.meta.glob<string>(['../../worker/**/*.ts', '../../shared/**/*.ts'], {
      query: '?raw',
      import: 'default',
      eager: true,
    }),
  ).map(([path, source]) => [path.replace(/^(\.\.\/)+/, ''), source]),
)

/** The paths a source names in its run-time imports, resolved from the repository's root (relative specifiers only). */
export function relativeImports(path: string, source: string): string[] {
  return [
    ...source.matchAll(/^\s*(?:import|export)\s+(?!type\b)(?:[^'";]*?\sfrom\s+)?['"](\.{1,2}\/[^'"]+)['"]/gm),
  ].map((match) => new URL(match[1]!, `file:///${path}`).pathname.slice(1))
}

/** The worker/ and shared/ files a source imports at run time (relative specifiers only; packages cannot cycle back). */
function runtimeImports(path: string, source: string): string[] {
  const found: string[] = []
  for (const url of relativeImports(path, source)) {
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
