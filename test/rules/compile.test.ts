import { describe, expect, it } from 'vitest'
import { compileResources, ResourceConfigError } from '../../worker/rules/compile'
import { models, resources, resourcesWithPosts, usersRoute, type RouteDefinition } from '../../worker/models/resources'

const withRoute = (route: RouteDefinition, extraModels = {}) => ({
  models: { ...models, Notes: { values: { text: ['String', 'cru'] as const } }, ...extraModels },
  routes: [usersRoute, route],
})

describe('resource config at start-up', () => {
  it('compiles the shipped config and the Posts example', () => {
    expect(compileResources(resources).map((route) => route.itemPath)).toEqual(['/users/:id'])
    const compiled = compileResources(resourcesWithPosts)
    expect(compiled[1]).toMatchObject({
      collectionPath: '/users/:id/posts',
      itemPath: '/users/:id/posts/:postId',
      parent: { model: 'Users', foreignKey: 'user_id' },
    })
  })

  it('names a missing operation as a deny rule', () => {
    const [, notes] = compileResources(withRoute({ _id: '/notes(Notes)', _read: { allow: true } }))
    expect(notes!.operations._delete.source).toBe('/notes(Notes)._delete: false (no rule)')
    expect(notes!.operations._delete.rule).toEqual({ kind: 'const', value: false })
  })

  it.each([
    [
      { _id: '/notes(Notes)', _read: { allow: '@user.rol=admin' } },
      'route /notes(Notes): _read.allow: unknown caller field "@user.rol"',
    ],
    [
      { _id: '/notes(Notes)', _read: { allow: '@_user.txt=x' } },
      'route /notes(Notes): _read.allow: unknown field @_user.txt of Notes',
    ],
    [
      { _id: '/notes(Notes)', _update: { allow: '(@user.role=admin' } },
      'route /notes(Notes): _update.allow: missing ")"',
    ],
    [
      { _id: '/notes(Notes)', _create: { allow: true, inject: { owner: '@user._id' } } },
      'route /notes(Notes): _create.inject: Notes has no settable field owner',
    ],
    [{ _id: '/notes(Notes)', _read: { allow: true, inject: { text: 'x' } } }, 'only _create and _update inject values'],
    [
      { _id: '/notes(Notes)', _create: { allow: true, inject: { text: '@usr._id' } } },
      '_create.inject.text: unknown reference',
    ],
    [{ _id: '/notes(Nopes)' }, 'route /notes(Nopes): unknown model Nopes'],
    [{ _id: 'notes(Notes)' }, 'the _id must look like /path(Model)'],
    [{ _id: '/notes(Notes)', _reed: { allow: true } } as RouteDefinition, 'unknown entry _reed'],
    [{ _id: '/teams/notes(Notes)' }, 'relation parent /teams is not a route defined before it'],
    [{ _id: '/notes(Notes)', _privileged: { allow: true } }, '_privileged applies to the Users model only'],
  ])('refuses %j', (route, message) => {
    expect(() => compileResources(withRoute(route as RouteDefinition))).toThrow(ResourceConfigError)
    expect(() => compileResources(withRoute(route as RouteDefinition))).toThrow(message)
  })

  it('refuses a malformed values map naming the field', () => {
    expect(() =>
      compileResources(withRoute({ _id: '/notes(Notes)' }, { Notes: { values: { text: ['Strin', 'cru'] } } })),
    ).toThrow('model Notes: field text has unknown type Strin')
  })
})
