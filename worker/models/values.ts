// A model's `values` map — { field: [type, letters, default?] } — turned into zod schemas. Letters: c = the
// client may set it on create, r = it is returned (and filterable), u = the client may set it on update.
// Fields a letter does not grant are refused, not ignored, so a mass-assignment attempt is visible.
import { z } from 'zod'
import { forbiddenFormatCharacter, formatCharacterMessage } from '../names'

export const VALUE_TYPES = ['String', 'Number', 'Boolean', 'Object', 'Date', 'Url'] as const
export type ValueType = (typeof VALUE_TYPES)[number]
export type ValueSpec = readonly [type: ValueType, letters: string, defaultValue?: unknown]
export type ValuesMap = Readonly<Record<string, ValueSpec>>

/** Text that may reach an email, a header or a log line: no control characters (NUL, ESC, CR, LF, …) and no line
 * or paragraph separators, which would let it forge a line there. */
export const plainText = (maxLength: number) =>
  z
    .string()
    .max(maxLength)
    .regex(/^[^\p{Cc}\u2028\u2029]*$/u, 'may not contain control characters')

/** A name people read (an account's): plain text without the format characters a name may not hold (worker/names.ts);
 * the refusal carries its own error code, NAME_FORMAT_CHARACTER. */
export const displayName = (maxLength: number) =>
  plainText(maxLength).superRefine((name, ctx) => {
    const codePoint = forbiddenFormatCharacter(name)
    if (codePoint)
      ctx.addIssue({
        code: 'custom',
        message: formatCharacterMessage('the name', codePoint),
        params: { errorCode: 'NAME_FORMAT_CHARACTER', character: codePoint },
      })
  })

/** An absolute http or https URL: no javascript:, data: or other schemes that a client could render as a link. */
const httpUrl = z.url({ protocol: /^https?$/ }).max(2048)

function fieldSchema(type: ValueType): z.ZodType {
  switch (type) {
    case 'String':
      return z.string().max(10_000)
    case 'Number':
      return z.number().finite()
    case 'Boolean':
      return z.boolean()
    case 'Object':
      return z.record(z.string(), z.unknown())
    case 'Date':
      return z.iso.datetime({ offset: true }).or(z.iso.date())
    case 'Url':
      return httpUrl
  }
}

function fieldsWith(values: ValuesMap, letter: 'c' | 'r' | 'u'): string[] {
  return Object.entries(values)
    .filter(([, [, letters]]) => letters.includes(letter))
    .map(([name]) => name)
}

/** Throws with the field's name when a values map is malformed (checked at start-up). */
export function validateValuesMap(model: string, values: ValuesMap): void {
  for (const [name, spec] of Object.entries(values)) {
    const [type, letters] = spec
    if (!VALUE_TYPES.includes(type)) throw new Error(`model ${model}: field ${name} has unknown type ${String(type)}`)
    if (!/^[cru]*$/.test(letters))
      throw new Error(`model ${model}: field ${name} has letters "${letters}" (allowed: c, r, u)`)
    if (spec.length > 2 && spec[2] !== undefined && !fieldSchema(type).safeParse(spec[2]).success) {
      throw new Error(`model ${model}: field ${name} has a default that is not a ${type}`)
    }
  }
}

function objectOf(values: ValuesMap, names: string[]) {
  return z.strictObject(Object.fromEntries(names.map((name) => [name, fieldSchema(values[name]![0]).optional()])))
}

export interface ValueSchemas {
  /** Fields the client may send on create. */
  create: z.ZodObject
  /** Fields the client may send on update. */
  update: z.ZodObject
  readable: readonly string[]
}

export function buildValueSchemas(values: ValuesMap): ValueSchemas {
  return {
    create: objectOf(values, fieldsWith(values, 'c')),
    update: objectOf(values, fieldsWith(values, 'u')),
    readable: fieldsWith(values, 'r'),
  }
}

/** The stored values for a new record: what the client sent, then defaults (an Object defaults to {}). */
export function withDefaults(values: ValuesMap, given: Record<string, unknown>): Record<string, unknown> {
  const result: Record<string, unknown> = {}
  for (const [name, [type, , fallback]] of Object.entries(values)) {
    if (given[name] !== undefined) result[name] = given[name]
    else if (fallback !== undefined) result[name] = structuredClone(fallback)
    else if (type === 'Object') result[name] = {}
  }
  return result
}

/** The readable fields as optional typed properties, for response schemas. */
export function readableShape(values: ValuesMap): Record<string, z.ZodType> {
  return Object.fromEntries(fieldsWith(values, 'r').map((name) => [name, fieldSchema(values[name]![0]).optional()]))
}

/** A query-string filter value as the field's type: "true" → true for Booleans, numbers for Numbers. */
export function parseFilterValue(type: ValueType, text: string): string | number | boolean | undefined {
  switch (type) {
    case 'String':
    case 'Date':
    case 'Url':
      return text
    case 'Number':
      return Number.isFinite(Number(text)) && text.trim() !== '' ? Number(text) : undefined
    case 'Boolean':
      return text === 'true' ? true : text === 'false' ? false : undefined
    case 'Object':
      return undefined
  }
}

export function readableValues(schemas: ValueSchemas, stored: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(schemas.readable.filter((name) => name in stored).map((name) => [name, stored[name]]))
}
