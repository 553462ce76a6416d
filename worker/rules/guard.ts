// Applying a route's rules to one request. A rule that fails for the caller whatever the record holds answers
// 403 and names the rule; a rule that fails because of the record answers 404 unless the caller may read that
// record (then 403): someone else's record is indistinguishable from a missing one.
import type { SQL } from 'drizzle-orm'
import type { AuthUser } from '../auth/users'
import { ApiError } from '../errors'
import type { CompiledOperation, CompiledRoute, Operation } from './compile'
import { evaluate, injectedValue, specialise, type ResourceFields } from './evaluate'
import { callerFields, type ModelStore } from './store'
import { toWhere } from './to-where'

export function forbidden(operation: CompiledOperation, message = 'not allowed'): ApiError {
  return new ApiError('FORBIDDEN', { message, details: { rule: operation.source } })
}

export function notFound(route: CompiledRoute): ApiError {
  return route.isUsers
    ? new ApiError('USER_NOT_FOUND')
    : new ApiError('RECORD_NOT_FOUND', { message: `${route.model} record not found` })
}

/**
 * The `_readAll` rule as SQL for the caller their token names, `@user.*` read from their row in the same statement
 * (callerFields). So the list goes in the session check's round trip, before the caller is read.
 * checkListAllowed settles the 403 once they are.
 */
export function listCondition(route: CompiledRoute, store: ModelStore, callerId: string): SQL {
  return toWhere(route.operations._readAll.rule, store.resolve, callerFields(callerId))
}

/** 403 when the caller-specialised `_readAll` rule can never pass for this caller (the rows read are dropped). */
export function checkListAllowed(route: CompiledRoute, user: AuthUser): void {
  const operation = route.operations._readAll
  const rule = specialise(operation.rule, user)
  if (rule.kind === 'const' && !rule.value) throw forbidden(operation)
}

/**
 * The record addressed by the URL (read already, in the session check's round trip), once the caller passed
 * `operation`'s rule for it. `parentId` (relation routes) must match the record's foreign key, else the record is not
 * found under that parent.
 */
export function permitted(
  route: CompiledRoute,
  name: Exclude<Operation, '_create' | '_readAll'>,
  user: AuthUser,
  record: ResourceFields | undefined,
  parentId?: string,
): ResourceFields {
  const operation = route.operations[name]
  const rule = specialise(operation.rule, user)
  if (rule.kind === 'const' && !rule.value) throw forbidden(operation)
  if (!record || (route.parent && record[route.parent.foreignKey] !== parentId)) throw notFound(route)
  if (evaluate(rule, user, record)) return record
  const mayRead = name !== '_read' && evaluate(route.operations._read.rule, user, record)
  throw mayRead ? forbidden(operation) : notFound(route)
}

/** Applies `inject` on top of what the client sent: the server's values always win. */
export function withInjected(
  operation: CompiledOperation,
  user: AuthUser,
  fields: Record<string, unknown>,
  stored?: ResourceFields,
): Record<string, unknown> {
  const result = { ...fields }
  for (const [field, expression] of operation.inject) result[field] = injectedValue(expression, user, stored)
  return result
}

/** The record as it would be stored must pass `_create`'s rule (e.g. its user_id is the caller's id). */
export function checkCreate(route: CompiledRoute, user: AuthUser, candidate: ResourceFields): void {
  if (!evaluate(route.operations._create.rule, user, candidate)) throw forbidden(route.operations._create)
}

/** Users: role, email and email_verified are set only by callers who pass `_privileged` (email on update only). */
const PRIVILEGED_USER_FIELDS = {
  create: ['role', 'email_verified'],
  update: ['role', 'email', 'email_verified'],
} as const

export function checkPrivileged(
  route: CompiledRoute,
  user: AuthUser,
  fields: Record<string, unknown>,
  stored: ResourceFields | undefined,
  operation: keyof typeof PRIVILEGED_USER_FIELDS,
): void {
  if (!route.isUsers) return
  const touched = PRIVILEGED_USER_FIELDS[operation].filter((field) => fields[field] !== undefined)
  if (touched.length === 0) return
  if (!evaluate(route.privileged.rule, user, stored))
    throw forbidden(route.privileged, `not allowed to set ${touched.join(', ')}`)
}
