// Turns the resource config into checked routes: every rule parsed, every field it names known to its model,
// every route path well formed. Runs once when the app is built, so a typo stops the Worker at start-up with a
// message naming the route and the operation.
import { resourceFields } from './evaluate'
import { parseOperand, parseRule, RuleSyntaxError, type Operand, type Rule } from './parse'
import type { OperationDefinition, ResourceConfig, RouteDefinition } from '../models/resources'
import { buildValueSchemas, validateValuesMap, type ValueSchemas, type ValuesMap } from '../models/values'

export const OPERATIONS = ['_create', '_read', '_readAll', '_update', '_delete'] as const
export type Operation = (typeof OPERATIONS)[number]

export interface CompiledOperation {
  /** How a 403 names the rule: `/users(Users)._update: @user.role=admin`. */
  readonly source: string
  readonly rule: Rule
  readonly inject: ReadonlyArray<readonly [field: string, expression: Operand]>
}

export interface CompiledRoute {
  readonly id: string
  readonly model: string
  readonly isUsers: boolean
  /** Hono paths: the collection and one item. */
  readonly collectionPath: string
  readonly itemPath: string
  readonly itemParam: string
  /** Relation routes: the Posts of one user live under /users/:id/posts with `user_id` = :id. */
  readonly parent?: { readonly model: string; readonly param: 'id'; readonly foreignKey: string }
  readonly values: ValuesMap
  readonly schemas: ValueSchemas
  readonly operations: Readonly<Record<Operation, CompiledOperation>>
  readonly privileged: CompiledOperation
}

export class ResourceConfigError extends Error {
  override readonly name = 'ResourceConfigError'
}

/** Built-in Users fields rules may name, besides the custom `values`. */
const USER_RULE_FIELDS = ['_id', 'email', 'name', 'role', 'email_verified']
/** Built-in Users fields an `inject` may set. */
const USER_INJECT_FIELDS = ['name', 'role', 'email_verified']
const ROUTE_KEYS = new Set<string>(['_id', ...OPERATIONS, '_privileged'])
const ROUTE_ID = /^((?:\/[a-z][a-z0-9_-]*){1,2})\(([A-Z][A-Za-z0-9]*)\)$/

function singular(word: string): string {
  if (word.endsWith('ies')) return `${word.slice(0, -3)}y`
  return word.endsWith('s') ? word.slice(0, -1) : word
}

const camel = (word: string) => word.replace(/[-_]([a-z0-9])/g, (_, char: string) => char.toUpperCase())

export function compileResources(config: ResourceConfig): CompiledRoute[] {
  for (const [name, model] of Object.entries(config.models)) {
    try {
      validateValuesMap(name, model.values)
    } catch (error) {
      throw new ResourceConfigError((error as Error).message)
    }
  }
  const compiled: CompiledRoute[] = []
  for (const route of config.routes) compiled.push(compileRoute(config, route, compiled))
  return compiled
}

function compileRoute(config: ResourceConfig, route: RouteDefinition, earlier: CompiledRoute[]): CompiledRoute {
  const fail = (message: string): never => {
    throw new ResourceConfigError(`route ${route._id}: ${message}`)
  }
  const match = ROUTE_ID.exec(route._id)
  if (!match) fail('the _id must look like /path(Model) or /parent/path(Model)')
  const [, path, model] = match!
  const definition = config.models[model!]
  if (!definition) fail(`unknown model ${model} (models: ${Object.keys(config.models).join(', ')})`)
  for (const key of Object.keys(route))
    if (!ROUTE_KEYS.has(key)) fail(`unknown entry ${key} (allowed: ${[...ROUTE_KEYS].join(', ')})`)
  if (earlier.some((other) => other.id === route._id)) fail('defined twice')

  const segments = path!.slice(1).split('/')
  const isUsers = model === 'Users'
  let values: ValuesMap = definition!.values
  let parent: CompiledRoute['parent']
  let collectionPath = path!
  const itemParam = segments.length === 1 ? 'id' : `${camel(singular(segments[1]!))}Id`
  if (segments.length === 2) {
    if (isUsers) fail('the Users model cannot be the child of a relation route')
    const parentRoute = earlier.find((other) => other.collectionPath === `/${segments[0]}`)
    if (!parentRoute) fail(`relation parent /${segments[0]} is not a route defined before it`)
    const foreignKey = `${singular(segments[0]!).replace(/-/g, '_')}_id`
    parent = { model: parentRoute!.model, param: 'id', foreignKey }
    collectionPath = `/${segments[0]}/:id/${segments[1]}`
    // The foreign key is always stored and returned; only the URL (or an inject) sets it.
    if (!values[foreignKey]) values = { ...values, [foreignKey]: ['String', 'r'] }
  }

  const ruleFields = new Set([...(isUsers ? USER_RULE_FIELDS : ['_id']), ...Object.keys(values)])
  const injectFields = new Set([...(isUsers ? USER_INJECT_FIELDS : []), ...Object.keys(values)])

  const compileOperation = (
    name: string,
    entry: (Pick<OperationDefinition, 'allow'> & { inject?: OperationDefinition['inject'] }) | undefined,
    mayInject: boolean,
  ): CompiledOperation => {
    const allow = entry?.allow ?? false
    const source = `${route._id}.${name}: ${entry ? String(allow) : 'false (no rule)'}`
    let rule: Rule
    try {
      rule = parseRule(allow)
    } catch (error) {
      if (error instanceof RuleSyntaxError) fail(`${name}.allow: ${error.message}`)
      throw error
    }
    for (const field of resourceFields(rule!)) {
      if (!ruleFields.has(field))
        fail(`${name}.allow: unknown field @_user.${field} of ${model} (fields: ${[...ruleFields].join(', ')})`)
    }
    const inject: Array<readonly [string, Operand]> = []
    for (const [field, expression] of Object.entries(entry?.inject ?? {})) {
      if (!mayInject) fail(`${name}.inject: only _create and _update inject values`)
      if (!injectFields.has(field)) fail(`${name}.inject: ${model} has no settable field ${field}`)
      try {
        const operand = parseOperand(expression)
        if (operand.kind === 'resource' && !ruleFields.has(operand.field))
          fail(`${name}.inject.${field}: unknown field @_user.${operand.field}`)
        inject.push([field, operand])
      } catch (error) {
        if (error instanceof RuleSyntaxError) fail(`${name}.inject.${field}: ${error.message}`)
        throw error
      }
    }
    return { source, rule: rule!, inject }
  }

  if (route._privileged && !isUsers) fail('_privileged applies to the Users model only')
  const operations = Object.fromEntries(
    OPERATIONS.map((name) => [name, compileOperation(name, route[name], name === '_create' || name === '_update')]),
  ) as Record<Operation, CompiledOperation>

  return {
    id: route._id,
    model: model!,
    isUsers,
    collectionPath,
    itemPath: `${collectionPath}/:${itemParam}`,
    itemParam,
    parent,
    values,
    schemas: buildValueSchemas(values),
    operations,
    privileged: compileOperation('_privileged', route._privileged, false),
  }
}
