// Which methods a path answers, read from the app's own routes: a request with another method gets 405 and an
// Allow header naming them (RFC 9110 §15.5.6: "The origin server MUST generate an Allow header field in a 405
// response containing a list of the target resource's currently supported methods"), not a 404 that says the
// resource does not exist.

interface RouteEntry {
  readonly method: string
  readonly path: string
}

interface PathPattern {
  readonly pattern: RegExp
  readonly methods: Set<string>
}

/** `/files/:id{[0-9a-f]{24}}/download` → a regular expression of the paths it matches. */
function patternOf(path: string): RegExp {
  let source = ''
  let rest = path
  while (rest.length > 0) {
    const parameter = /^:[A-Za-z_][A-Za-z0-9_]*(\{((?:[^{}]|\{[^{}]*\})*)\})?\??/.exec(rest)
    if (parameter) {
      source += `(?:${parameter[2] ?? '[^/]+'})`
      rest = rest.slice(parameter[0].length)
    } else if (rest[0] === '*') {
      source += '.*'
      rest = rest.slice(1)
    } else {
      source += rest[0]!.replace(/[.+?^${}()|[\]\\]/g, '\\$&')
      rest = rest.slice(1)
    }
  }
  return new RegExp(`^${source}/?$`)
}

/** A lookup of the methods each path answers, built once from `routes` (Hono's `app.routes`). */
export function methodsByPath(routes: readonly RouteEntry[]): (path: string) => string[] {
  let patterns: PathPattern[] | undefined
  const build = () => {
    const byPath = new Map<string, Set<string>>()
    for (const route of routes) {
      if (route.method === 'ALL') continue // middleware
      const methods = byPath.get(route.path) ?? new Set<string>()
      methods.add(route.method)
      // Hono answers HEAD with the GET route (no body).
      if (route.method === 'GET') methods.add('HEAD')
      byPath.set(route.path, methods)
    }
    return [...byPath].map(([path, methods]) => ({ pattern: patternOf(path), methods }))
  }
  return (path) => {
    patterns ??= build()
    const allowed = new Set<string>()
    for (const { pattern, methods } of patterns)
      if (pattern.test(path)) for (const method of methods) allowed.add(method)
    return [...allowed].sort()
  }
}
