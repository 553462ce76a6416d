// A rule as a SQL condition, so `_readAll` filters in the query instead of after it: a list can never leak rows, and
// pagination counts only visible rows. The rule is specialised for the caller (evaluate.ts `specialise`), or its
// `@user.*` fields are read in SQL from the caller's row (a CallerResolver), so that the list needs no caller read
// before it and goes in the session check's round trip. The SQL keeps the evaluator's meaning: strict types, and a
// missing or null field fails `=` and `!=` alike.
import { and, not, or, sql, type SQL } from 'drizzle-orm'
import type { Operand, Rule, UserField } from './parse'
import type { Scalar } from './evaluate'

/** How a resource field is read in SQL: a typed column, or a path in a JSON column. */
export type FieldAccess =
  | { readonly kind: 'column'; readonly column: SQL; readonly type: 'text' | 'boolean' }
  | { readonly kind: 'json'; readonly document: SQL; readonly path: string }

export type FieldResolver = (field: string) => FieldAccess

/** How the caller's fields (`@user.*`) are read in SQL, for a rule not specialised for the caller. They are never
 * null: the caller exists, or the session check refuses the request. */
export type CallerResolver = (field: UserField) => FieldAccess

const NEVER = sql`0`

/** `json_extract(doc, '$.field')` exactly as the expression indexes are written, so they apply. */
export function jsonPath(field: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(field)) throw new Error(`bad field name ${field}`)
  return `$.${field}`
}

function extract(access: Extract<FieldAccess, { kind: 'json' }>): SQL {
  return sql`json_extract(${access.document}, ${sql.raw(`'${jsonPath(access.path)}'`)})`
}

function jsonType(access: Extract<FieldAccess, { kind: 'json' }>): SQL {
  return sql`json_type(${access.document}, ${sql.raw(`'${jsonPath(access.path)}'`)})`
}

function equalsLiteral(access: FieldAccess, value: Scalar): SQL {
  if (access.kind === 'column') {
    if (access.type === 'boolean') return typeof value === 'boolean' ? sql`${access.column} = ${value ? 1 : 0}` : NEVER
    return typeof value === 'string' ? sql`${access.column} = ${value}` : NEVER
  }
  if (typeof value === 'boolean') return sql`${jsonType(access)} = ${value ? 'true' : 'false'}`
  if (typeof value === 'string') return sql`(${jsonType(access)} = 'text' AND ${extract(access)} = ${value})`
  return sql`(${jsonType(access)} IN ('integer', 'real') AND ${extract(access)} = ${value})`
}

/** The field holds a scalar (not missing, null, an object or an array). */
function hasScalar(access: FieldAccess): SQL {
  if (access.kind === 'column') return sql`${access.column} IS NOT NULL`
  return sql`${jsonType(access)} IN ('text', 'integer', 'real', 'true', 'false')`
}

/**
 * The kind of scalar a field holds, as the evaluator's strict equality tells them apart: SQLite reads a JSON true
 * and a boolean column as the integer 1, so values alone would find `true = 1`.
 */
function scalarKind(access: FieldAccess): SQL {
  if (access.kind === 'column') return access.type === 'boolean' ? sql`'boolean'` : sql`'text'`
  return sql`(CASE ${jsonType(access)} WHEN 'text' THEN 'text' WHEN 'integer' THEN 'number' WHEN 'real' THEN 'number' ELSE 'boolean' END)`
}

function fieldValue(access: FieldAccess): SQL {
  return access.kind === 'column' ? access.column : extract(access)
}

function accessOf(operand: Operand, resolve: FieldResolver, caller: CallerResolver | undefined): FieldAccess {
  if (operand.kind === 'resource') return resolve(operand.field)
  if (operand.kind === 'user' && caller) return caller(operand.field)
  throw new Error('rule is not specialised for the caller')
}

function compare(
  op: '=' | '!=',
  left: Operand,
  right: Operand,
  resolve: FieldResolver,
  caller: CallerResolver | undefined,
): SQL {
  // Two literals (a constant a specialised rule has folded): strict equality, as the evaluator's.
  if (left.kind === 'literal' && right.kind === 'literal')
    return (op === '=') === (left.value === right.value) ? sql`1` : NEVER
  if (left.kind === 'literal') return compare(op, right, left, resolve, caller)
  const access = accessOf(left, resolve, caller)
  if (right.kind === 'literal') {
    const equals = equalsLiteral(access, right.value)
    return op === '=' ? equals : (and(hasScalar(access), not(equals)) as SQL)
  }
  const other = accessOf(right, resolve, caller)
  const same = sql`(${scalarKind(access)} = ${scalarKind(other)} AND ${fieldValue(access)} = ${fieldValue(other)})`
  return and(hasScalar(access), hasScalar(other), op === '=' ? same : not(same)) as SQL
}

/** `caller`: how `@user.*` is read, for a rule not specialised for the caller. */
export function toWhere(rule: Rule, resolve: FieldResolver, caller?: CallerResolver): SQL {
  switch (rule.kind) {
    case 'const':
      return rule.value ? sql`1` : NEVER
    case 'compare':
      return compare(rule.op, rule.left, rule.right, resolve, caller)
    case 'and':
      return and(...rule.items.map((item) => toWhere(item, resolve, caller))) as SQL
    case 'or':
      return or(...rule.items.map((item) => toWhere(item, resolve, caller))) as SQL
  }
}
