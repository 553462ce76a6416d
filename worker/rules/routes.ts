// The generic resource routes, generated from the compiled resource config: for `/users(Users)` the five CRUD
// routes, for a relation route `/users/posts(Posts)` the same under /users/:id/posts. Each route is declared
// with the zod schemas that validate it, so /openapi.json lists every model's routes and fields.
import { z, type RouteConfig } from '@hono/zod-openapi'
import type { Context } from 'hono'
import { errorResponse, jsonBody, jsonResponse, newRouter, securedRoute, type AppEnv, Id } from '../api'
import { authorizedBatch, callerId, requireAuth } from '../auth/middleware'
import { ApiError } from '../errors'
import { resourceFields, type Scalar } from './evaluate'
import type { CompiledRoute } from './compile'
import { checkCreate, checkListAllowed, checkPrivileged, listCondition, permitted, withInjected } from './guard'
import { recordsStore, usersStore, type ModelStore } from './store'
import { displayName, parseFilterValue, readableShape, withDefaults } from '../models/values'

const Email = z.email().max(254)
const Password = z.string().min(8, 'must be at least 8 characters').max(1024)
const PAGE_MAX = 100

function recordSchema(route: CompiledRoute) {
  const builtIn = route.isUsers
    ? { _id: z.string(), email: z.string(), name: z.string(), role: z.string(), email_verified: z.boolean() }
    : { _id: z.string() }
  return z
    .object({ ...builtIn, ...readableShape(route.values), created_at: z.string(), updated_at: z.string() })
    .openapi(`${route.model}Record`)
}

function bodySchemas(route: CompiledRoute) {
  const { create, update } = route.schemas
  if (!route.isUsers)
    return { create: create.openapi(`${route.model}Create`), update: update.openapi(`${route.model}Update`) }
  const privileged = { role: z.string().min(1).max(100).optional(), email_verified: z.boolean().optional() }
  return {
    create: z
      .strictObject({
        email: Email,
        password: Password,
        name: displayName(200).optional(),
        ...privileged,
        ...create.shape,
      })
      .openapi('UsersCreate'),
    update: z
      .strictObject({ name: displayName(200).optional(), email: Email.optional(), ...privileged, ...update.shape })
      .openapi('UsersUpdate'),
  }
}

/** ?field=value filters on readable scalar fields, parsed to the field's type. */
function filtersOf(route: CompiledRoute, query: Record<string, string>): Array<[string, Scalar]> {
  const filters: Array<[string, Scalar]> = []
  for (const name of route.schemas.readable) {
    const text = query[name]
    if (text === undefined) continue
    const value = parseFilterValue(route.values[name]![0], text)
    if (value === undefined) throw new ApiError('VALIDATION_FAILED', { message: `cannot filter ${name} by "${text}"` })
    filters.push([name, value])
  }
  if (route.isUsers)
    for (const name of ['email', 'role', 'name'] as const)
      if (query[name] !== undefined) filters.push([name, query[name]!])
  return filters
}

function nextLink(c: Context, cursor: string, limit: number): string {
  const url = new URL(c.req.url)
  url.searchParams.set('cursor', cursor)
  url.searchParams.set('limit', String(limit))
  return `<${url.pathname}${url.search}>; rel="next"`
}

export function resourceRoutes(compiled: readonly CompiledRoute[]) {
  const app = newRouter()
  for (const route of compiled) mountResource(app, route, compiled)
  return app
}

function mountResource(app: ReturnType<typeof newRouter>, route: CompiledRoute, all: readonly CompiledRoute[]) {
  const children = all.filter((other) => other.parent?.model === route.model)
  const indexed = [...new Set(Object.values(route.operations).flatMap((operation) => resourceFields(operation.rule)))]
  const storeFor = (c: Context<AppEnv>): ModelStore => {
    const deps = { db: c.var.db, d1: c.env.DB, bucket: c.env.BUCKET, config: c.var.config }
    return route.isUsers ? usersStore(deps, route, children) : recordsStore(deps, route, indexed)
  }
  const Record = recordSchema(route)
  const bodies = bodySchemas(route)
  const parentParams = route.parent ? { id: Id.openapi({ description: `the ${route.parent.model} record's _id` }) } : {}
  const itemParams = z.object({ ...parentParams, [route.itemParam]: Id })
  const collectionParams = z.object(parentParams)
  // A route that reads its record first shares the session check's round trip with that read (authorizedBatch).
  const describe = (
    config: Omit<RouteConfig, 'responses' | 'security' | 'middleware' | 'tags'> & {
      responses: RouteConfig['responses']
    },
    options: { sharesRoundTrip?: boolean } = {},
  ) =>
    securedRoute([route.model], {
      ...config,
      middleware: [requireAuth(options)] as const,
      responses: { ...config.responses, 403: errorResponse('A rule refused the operation: `{ message, rule }`') },
    })
  // The schemas are built from config at start-up, so handlers see loosely typed contexts; the validation
  // itself is the route's (its zod schemas run before the handler).
  const register = (definition: RouteConfig, handler: (c: Context<AppEnv>) => Promise<Response>) =>
    app.openapi(definition, handler as never)
  const validated = (c: Context<AppEnv>, target: 'json' | 'query') =>
    (c.req.valid as unknown as (target: string) => Record<string, unknown>)(target)
  const ruleText = (name: keyof CompiledRoute['operations']) => `Allowed by rule: \`${route.operations[name].source}\``
  /** The record the URL names, read in the session check's round trip, once the caller passed `name`'s rule for it. */
  const readPermitted = async (
    c: Context<AppEnv>,
    store: ModelStore,
    name: 'read' | 'update' | 'delete',
    id: string,
  ) => {
    const find = store.findQuery(id)
    const [rows] = await authorizedBatch(c, [find.query])
    return permitted(route, `_${name}`, c.var.user, find.found(rows), parentOf(c))
  }
  const parentOf = (c: Context<AppEnv>) => (route.parent ? c.req.param('id') : undefined)

  const listQuery = z.object({
    limit: z.coerce.number().int().min(1).max(PAGE_MAX).default(50),
    cursor: Id.optional().openapi({ description: 'the last _id of the previous page (see the Link header)' }),
    ...Object.fromEntries(route.schemas.readable.map((name) => [name, z.string().optional()])),
  })

  register(
    describe(
      {
        method: 'get',
        path: route.collectionPath,
        summary: `List ${route.model} records, newest first`,
        description: `${ruleText('_readAll')}. The rule filters the query itself. Filter by any readable field: \`?field=value\`.`,
        request: { params: collectionParams, query: listQuery },
        responses: { 200: jsonResponse(z.array(Record), 'One page of records; the next page is in the Link header') },
      },
      { sharesRoundTrip: true },
    ),
    async (c) => {
      const store = storeFor(c)
      const { limit, cursor } = validated(c, 'query') as { limit: number; cursor?: string }
      const equals = filtersOf(route, c.req.query())
      const parentId = parentOf(c)
      if (route.parent && parentId) equals.push([route.parent.foreignKey, parentId])
      // The rule reads the caller's fields from their row, so the list shares the session check's round trip.
      const list = await store.listQuery({
        where: listCondition(route, store, callerId(c)),
        equals,
        limit: limit + 1,
        before: cursor,
      })
      const [found] = await authorizedBatch(c, [list.query])
      checkListAllowed(route, c.var.user)
      const rows = list.found(found)
      const page = rows.slice(0, limit)
      if (rows.length > limit) c.header('link', nextLink(c, String(page.at(-1)!._id), limit))
      return c.json(
        page.map((row) => store.present(row)),
        200,
      )
    },
  )

  register(
    describe({
      method: 'post',
      path: route.collectionPath,
      summary: `Create a ${route.model} record`,
      description: `${ruleText('_create')}. The rule sees the record as it would be stored${route.parent ? ` (with \`${route.parent.foreignKey}\` from the URL)` : ''}.`,
      request: { params: collectionParams, body: jsonBody(bodies.create) },
      responses: { 201: jsonResponse(Record, 'The created record'), 409: errorResponse('The email is taken') },
    }),
    async (c) => {
      const store = storeFor(c)
      const body = validated(c, 'json')
      let fields = route.isUsers ? body : withDefaults(route.values, body)
      const parentId = parentOf(c)
      if (route.parent && parentId) fields = { ...fields, [route.parent.foreignKey]: parentId }
      fields = withInjected(route.operations._create, c.var.user, fields)
      checkCreate(route, c.var.user, fields)
      checkPrivileged(route, c.var.user, body, undefined, 'create')
      const created = await store.insert(fields)
      return c.json(store.present(created), 201)
    },
  )

  register(
    describe(
      {
        method: 'get',
        path: route.itemPath,
        summary: `Read one ${route.model} record`,
        description: ruleText('_read'),
        request: { params: itemParams },
        responses: {
          200: jsonResponse(Record, 'The record'),
          404: errorResponse('No such record (or not yours to see)'),
        },
      },
      { sharesRoundTrip: true },
    ),
    async (c) => {
      const store = storeFor(c)
      const record = await readPermitted(c, store, 'read', c.req.param(route.itemParam)!)
      return c.json(store.present(record), 200)
    },
  )

  register(
    describe(
      {
        method: 'put',
        path: route.itemPath,
        summary: `Update a ${route.model} record`,
        description: `${ruleText('_update')}.${route.isUsers ? ` Setting role, email or email_verified also needs \`${route.privileged.source}\`.` : ''}`,
        request: { params: itemParams, body: jsonBody(bodies.update) },
        responses: {
          200: jsonResponse(Record, 'The updated record'),
          404: errorResponse('No such record (or not yours to see)'),
          409: errorResponse('The email is taken'),
        },
      },
      { sharesRoundTrip: true },
    ),
    async (c) => {
      const store = storeFor(c)
      const id = c.req.param(route.itemParam)!
      const record = await readPermitted(c, store, 'update', id)
      const body = validated(c, 'json')
      checkPrivileged(route, c.var.user, body, record, 'update')
      const updated = await store.update(id, withInjected(route.operations._update, c.var.user, body, record), record)
      return c.json(store.present(updated), 200)
    },
  )

  register(
    describe(
      {
        method: 'delete',
        path: route.itemPath,
        summary: `Delete a ${route.model} record`,
        description: `${ruleText('_delete')}.${route.isUsers ? ' Deletes the account with its files (records, then stored bytes) and its related records.' : ''}`,
        request: { params: itemParams },
        responses: { 204: { description: 'Deleted' }, 404: errorResponse('No such record (or not yours to see)') },
      },
      { sharesRoundTrip: true },
    ),
    async (c) => {
      const store = storeFor(c)
      const id = c.req.param(route.itemParam)!
      await readPermitted(c, store, 'delete', id)
      await store.remove(id)
      return c.body(null, 204)
    },
  )
}
