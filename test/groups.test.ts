// The API Worker builds its app one route group at a time (worker/groups/dispatch.ts): a group must answer every path
// it is given as the whole app (worker/app.ts) does. It does when it holds exactly the whole app's routes whose paths
// name it, in the same order, inside the same shell: these tests hold each group to that, and compare answers.
import { createExecutionContext, env, waitOnExecutionContext } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { createApp } from '../worker/app'
import { appShell } from '../worker/app-shell'
import { accountsApp } from '../worker/groups/accounts'
import { adminApp } from '../worker/groups/admin'
import { type GroupName, groupOf, lazyApp } from '../worker/groups/dispatch'
import { filesApp } from '../worker/groups/files'
import { pagesApp } from '../worker/groups/pages'
import { resourcesApp } from '../worker/groups/resources'
import { statusApp } from '../worker/groups/status'
import { requestFor } from './support/api'

interface RouteEntry {
  method: string
  path: string
}

const key = (route: RouteEntry) => `${route.method} ${route.path}`
/** The shell's own middleware, which every group and the whole app hold first. */
const shellRoutes = appShell().routes.map(key)
const ownRoutes = (routes: readonly RouteEntry[]) => {
  expect(routes.slice(0, shellRoutes.length).map(key)).toEqual(shellRoutes)
  return routes.slice(shellRoutes.length).map(key)
}

const groups: Record<Exclude<GroupName, 'whole'>, () => { routes: RouteEntry[] }> = {
  status: statusApp,
  accounts: accountsApp,
  files: filesApp,
  admin: adminApp,
  resources: resourcesApp,
  pages: pagesApp,
}

describe('the route groups of the API Worker', () => {
  it("hold each of the whole app's routes in the group its path names, in the whole app's order, and nothing else", async () => {
    const whole = ownRoutes(createApp().routes)
    const named = await Promise.all(
      whole.map(async (route) => [route, await groupOf(route.slice(route.indexOf(' ') + 1))] as const),
    )
    // The shell's middleware aside, no route takes every path: a group's middleware covers its own paths only.
    expect(whole.filter((route) => route.endsWith(' /*'))).toEqual([])
    for (const [name, build] of Object.entries(groups)) {
      expect(ownRoutes(build().routes), name).toEqual(
        named.filter(([, group]) => group === name).map(([route]) => route),
      )
    }
    // The rest, the OpenAPI document of every route, is the whole app's.
    expect(named.filter(([, group]) => group === 'whole').map(([route]) => route)).toEqual(['GET /openapi.json'])
  })

  it('sends the resource routes to their group, and a path no route takes to the smallest', async () => {
    expect(await groupOf('/users/0123456789abcdef01234567/posts')).toBe('resources')
    expect(await groupOf('/openapi.json')).toBe('whole')
    expect(await groupOf('/static/console.js')).toBe('pages')
    expect(await groupOf('/constructor')).toBe('status')
    expect(await groupOf('//auth/login')).toBe('status')
    expect(await groupOf('/')).toBe('status')
    expect(await groupOf('/auth/login')).toBe('accounts')
    expect(await groupOf('/jobs/x')).toBe('files')
  })

  it('answers as the whole app does: routes, 404, 405 with Allow, a missing token', async () => {
    const whole = createApp()
    const lazy = lazyApp()
    const cases: [string, string][] = [
      ['GET', '/'],
      ['POST', '/'],
      ['GET', '/nowhere'],
      ['GET', '//auth/login'],
      ['GET', '/%61uth/user'],
      ['GET', '/auth%2Fuser'],
      ['GET', '/static/no file'],
      ['POST', '/docs'],
      ['PATCH', '/auth/login'],
      ['GET', '/auth/nowhere'],
      ['GET', '/auth/user'],
      ['GET', '/user'],
      ['GET', '/files'],
      ['DELETE', '/files/tus'],
      ['GET', '/jobs/0123456789abcdef01234567'],
      ['GET', '/admin/users'],
      ['GET', '/users'],
      ['PATCH', '/users/0123456789abcdef01234567'],
      ['GET', '/convert/.pdf'],
    ]
    const answer = async (app: { fetch: ReturnType<typeof lazyApp>['fetch'] }, method: string, path: string) => {
      const ctx = createExecutionContext()
      const response = await app.fetch(requestFor(method, path, { ip: '203.0.113.9' }), env, ctx)
      await waitOnExecutionContext(ctx)
      const body = (await response.text()).replace(/"request_id":"[^"]+"/, '')
      return { status: response.status, allow: response.headers.get('allow'), body }
    }
    for (const [method, path] of cases) {
      expect(await answer(lazy, method, path), `${method} ${path}`).toEqual(
        await answer({ fetch: (request, env, ctx) => whole.fetch(request, env, ctx) }, method, path),
      )
    }
  })

  it('builds a group once for the requests that share it, and again after a build that failed', async () => {
    const builds: GroupName[] = []
    let failing = true
    const lazy = lazyApp(async (name) => {
      builds.push(name)
      await Promise.resolve()
      if (failing) throw new Error('the group could not be built')
      return { fetch: () => new Response(name) }
    })
    const get = (path: string) => lazy.fetch(requestFor('GET', path), env, createExecutionContext())
    // Two requests while the first build runs: both wait for it, and both get its failure.
    const first = await Promise.allSettled([get('/files'), get('/files')])
    expect(first.map((result) => result.status)).toEqual(['rejected', 'rejected'])
    expect(builds).toEqual(['files'])
    // The next request builds the group again, rather than getting the isolate's first failure for good.
    failing = false
    expect(await (await get('/files')).text()).toBe('files')
    expect(await (await get('/jobs/x')).text()).toBe('files')
    expect(builds).toEqual(['files', 'files'])
  })
})
