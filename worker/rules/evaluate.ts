// Evaluating parsed rules. A rule is first specialised for the caller (`@user.*` replaced by the caller's
// values, constant parts folded): what remains depends only on the resource (`@_user.*`), so it can be checked
// against a loaded record, or turned into a WHERE clause for lists (to-where.ts).
import type { AuthUser } from '../auth/users'
import type { Operand, Rule, UserField } from './parse'

export type Scalar = string | number | boolean

/** A stored record as rules see it: wire names (`_id`, `email_verified`, custom fields). */
export type ResourceFields = Readonly<Record<string, unknown>>

export function callerValue(user: AuthUser, field: UserField): Scalar {
  switch (field) {
    case '_id':
      return user.id
    case 'email':
      return user.email
    case 'role':
      return user.role
    case 'email_verified':
      return user.emailVerified
  }
}

function isScalar(value: unknown): value is Scalar {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
}

/**
 * Strict equality of two known values. A missing value, null or an object makes every comparison false (`=`
 * and `!=` alike), so a rule about a field the record lacks never grants access.
 */
function compareValues(op: '=' | '!=', left: unknown, right: unknown): boolean {
  if (!isScalar(left) || !isScalar(right)) return false
  return op === '=' ? left === right : left !== right
}

const TRUE: Rule = { kind: 'const', value: true }
const FALSE: Rule = { kind: 'const', value: false }

function specialiseOperand(operand: Operand, user: AuthUser): Operand {
  return operand.kind === 'user' ? { kind: 'literal', value: callerValue(user, operand.field) } : operand
}

/** The rule with the caller's values substituted and constants folded; a `const` result needs no record. */
export function specialise(rule: Rule, user: AuthUser): Rule {
  switch (rule.kind) {
    case 'const':
      return rule
    case 'compare': {
      const left = specialiseOperand(rule.left, user)
      const right = specialiseOperand(rule.right, user)
      if (left.kind === 'literal' && right.kind === 'literal')
        return compareValues(rule.op, left.value, right.value) ? TRUE : FALSE
      return { ...rule, left, right }
    }
    case 'and':
    case 'or': {
      // The value that settles the whole: one false settles an and, one true an or.
      const decisive = rule.kind === 'or'
      const items: Rule[] = []
      for (const item of rule.items.map((inner) => specialise(inner, user))) {
        if (item.kind === 'const') {
          if (item.value === decisive) return item
          continue
        }
        items.push(item)
      }
      if (items.length === 0) return decisive ? FALSE : TRUE
      return items.length === 1 ? items[0]! : { kind: rule.kind, items }
    }
  }
}

function operandValue(operand: Operand, user: AuthUser, resource: ResourceFields | undefined): unknown {
  switch (operand.kind) {
    case 'literal':
      return operand.value
    case 'user':
      return callerValue(user, operand.field)
    case 'resource':
      return resource?.[operand.field]
  }
}

/** Whether the caller passes the rule for this resource (none for create-time rules without a record). */
export function evaluate(rule: Rule, user: AuthUser, resource?: ResourceFields): boolean {
  switch (rule.kind) {
    case 'const':
      return rule.value
    case 'compare':
      return compareValues(rule.op, operandValue(rule.left, user, resource), operandValue(rule.right, user, resource))
    case 'and':
      return rule.items.every((item) => evaluate(item, user, resource))
    case 'or':
      return rule.items.some((item) => evaluate(item, user, resource))
  }
}

/** The value of an `inject` expression: a caller field, a literal, or a field of the stored record. */
export function injectedValue(operand: Operand, user: AuthUser, resource?: ResourceFields): unknown {
  return operandValue(operand, user, resource)
}

/** Every `@_user.<field>` a rule mentions (for start-up validation and indexes). */
export function resourceFields(rule: Rule): string[] {
  switch (rule.kind) {
    case 'const':
      return []
    case 'compare':
      return [rule.left, rule.right].flatMap((operand) => (operand.kind === 'resource' ? [operand.field] : []))
    case 'and':
    case 'or':
      return rule.items.flatMap(resourceFields)
  }
}
