// The API Worker's app, built one route group at a time: a request builds, once per isolate, only the group that its
// path's first segment names, and a cold start runs no other group's schemas and routes (docs/platform-limits.md,
// Startup). Each group is the app's shell (the same middleware, 404, 405 and errors) with every route whose path starts
// with its segments, in the order app.ts mounts them, so it answers as the whole app does; test/groups.test.ts holds
// each group to the whole app's routes. GET /openapi.json, the document of every route, is the whole app's (app.ts),
// built on its first request; a path no route takes gets the shell's 404 from the smallest group.
import { getPath } from 'hono/utils/url'

interface Fetches {
  fetch(request: Request, env: Env, ctx: ExecutionContext): Response | Promise<Response>
}

export type GroupName = 'status' | 'accounts' | 'files' | 'admin' | 'resources' | 'pages' | 'whole'

/** The groups named by a first segment: those of their routes' paths (the accounts' Layout B aliases among them). */
const GROUP_OF_SEGMENT = new Map<string, GroupName>([
  ['auth', 'accounts'],
  ['login', 'accounts'],
  ['register', 'accounts'],
  ['user', 'accounts'],
  ['files', 'files'],
  ['convert', 'files'],
  ['jobs', 'files'],
  ['admin', 'admin'],
  ['docs', 'pages'],
  ['console', 'pages'],
  ['static', 'pages'],
  ['openapi.json', 'whole'],
])

const builders: Record<GroupName, () => Promise<Fetches>> = {
  status: () => import('./status').then((group) => group.statusApp()),
  accounts: () => import('./accounts').then((group) => group.accountsApp()),
  files: () => import('./files').then((group) => group.filesApp()),
  admin: () => import('./admin').then((group) => group.adminApp()),
  resources: () => import('./resources').then((group) => group.resourcesApp()),
  pages: () => import('./pages').then((group) => group.pagesApp()),
  whole: () => import('../app').then((app) => app.createApp()),
}

/** The group that answers a path, as Hono's router reads it (getPath). The resource routes take the first segments their models name
 * (worker/models/resources.ts): one that a group of routes takes as well goes to the whole app, which mounts both as
 * app.ts orders them. A first segment no route takes goes to the status group, whose shell answers 404 as the whole
 * app's does. */
export async function groupOf(path: string): Promise<GroupName> {
  if (path === '/') return 'status'
  const segment = path.split('/')[1]!
  const group = GROUP_OF_SEGMENT.get(segment)
  const { resourceSegments } = await import('../rules/default-routes')
  if (!resourceSegments.has(segment)) return group ?? 'status'
  return group ? 'whole' : 'resources'
}

/**
 * The API Worker's fetch handler: the group of each request's path, built on its first request (by `build`: the
 * groups' own builders, or a test's).
 */
export function lazyApp(build: (name: GroupName) => Promise<Fetches> = (name) => builders[name]()): Fetches {
  const built = new Map<GroupName, Promise<Fetches>>()
  return {
    async fetch(request, env, ctx) {
      const name = await groupOf(getPath(request))
      let app = built.get(name)
      if (!app) {
        app = build(name)
        built.set(name, app)
        // A build that failed is tried again by the next request rather than kept as this isolate's answer.
        app.catch(() => built.delete(name))
      }
      return (await app).fetch(request, env, ctx)
    },
  }
}
