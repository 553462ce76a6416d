// Gotenberg's rules for the form fields the Worker validates too, before a job exists (worker/converters/catalog/
// office-to-pdf.ts imports this file): `variables` and Factur-X. Stated once here, for both sides: so this file
// imports nothing, and nothing Node-only.

export interface Variables {
  readonly values: ReadonlyMap<string, string>
  readonly lists: ReadonlyMap<string, ReadonlyArray<Readonly<Record<string, string>>>>
}

export const VARIABLES_EXTENSIONS = ['.docx', '.docm', '.dotx', '.dotm']
const MAX_LIST_ROWS = 10_000
const NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/

export const appliesVariables = (name: string) =>
  VARIABLES_EXTENSIONS.some((extension) => name.toLowerCase().endsWith(extension))

/** Reads the field as Gotenberg does; a string is the reason it is invalid (the 400 quotes it). */
export function parseVariables(raw: string): Variables | string {
  let object: unknown
  try {
    object = JSON.parse(raw)
  } catch (error) {
    return `value is not a JSON object, like {"legal_address":"221B Baker Street"}: ${(error as Error).message}`
  }
  if (typeof object !== 'object' || object === null || Array.isArray(object))
    return 'value is not a JSON object, like {"legal_address":"221B Baker Street"}'
  const values = new Map<string, string>()
  const lists = new Map<string, Record<string, string>[]>()
  const badName = (name: string) =>
    `variable name '${name}' is invalid: use letters, digits, '_', '.' or '-', starting with a letter or '_'`
  for (const name of Object.keys(object).sort()) {
    if (!NAME.test(name)) return badName(name)
    const value = (object as Record<string, unknown>)[name]
    if (typeof value === 'string') {
      values.set(name, value)
      continue
    }
    const isList =
      Array.isArray(value) &&
      value.every(
        (element) =>
          typeof element === 'object' &&
          element !== null &&
          !Array.isArray(element) &&
          Object.values(element).every((field) => typeof field === 'string'),
      )
    if (!isList)
      return `variable '${name}' is invalid: use a string, or an array of objects with string values to repeat a table row`
    if (name.includes('.')) return `list name '${name}' is invalid: a list name cannot contain '.'`
    if (value.length > MAX_LIST_ROWS)
      return `list '${name}' has ${value.length} elements: the maximum is ${MAX_LIST_ROWS}`
    for (const field of value.flatMap((element) => Object.keys(element)).sort()) {
      if (field.includes('.'))
        return `field name '${field}' of list '${name}' is invalid: a field name cannot contain '.'`
      if (!NAME.test(field)) return `list '${name}': ${badName(field)}`
    }
    lists.set(name, value as Record<string, string>[])
  }
  for (const name of values.keys()) {
    const list = name.split('.')[0]!
    if (name.includes('.') && lists.has(list))
      return `variable '${name}' is ambiguous: '${list}' is a list, and '${list}.' refers to its fields`
  }
  return { values, lists }
}

export const FACTURX_LEVELS = ['MINIMUM', 'BASIC WL', 'BASIC', 'EN 16931', 'EXTENDED', 'XRECHNUNG'] as const
export const FACTURX_TYPES = ['INVOICE', 'ORDER', 'ORDER_RESPONSE', 'ORDER_CHANGE'] as const

export interface FacturXFields {
  /** How many invoice XMLs came (Gotenberg's facturxXml file part; the Worker's inline string). */
  readonly invoices: number
  readonly conformanceLevel?: string
  readonly documentType?: string
  readonly pdfa?: string
  readonly userPassword?: string
}

/**
 * What is wrong with a Factur-X request, in Gotenberg's words, the field named by `label` (the sidecar's "form
 * field 'pdfa'", the Worker's "option 'pdfa'"); undefined when nothing is, or no Factur-X field is set. Factur-X
 * is PDF/A-3b: another pdfa, or encryption (PDF/A forbids it), cannot be honoured.
 */
export function facturXRefusal(fields: FacturXFields, label: (name: string) => string): string | undefined {
  const { invoices, conformanceLevel = 'EN 16931', documentType = 'INVOICE', pdfa, userPassword } = fields
  if (invoices === 0 && !fields.conformanceLevel && !fields.documentType) return undefined
  if (invoices !== 1)
    return `${label('facturxXml')} is required (one XML file) when 'facturxConformanceLevel' or 'facturxDocumentType' is set`
  if (!(FACTURX_LEVELS as readonly string[]).includes(conformanceLevel))
    return `${label('facturxConformanceLevel')} is invalid (got '${conformanceLevel}', resulting to value is not ${FACTURX_LEVELS.join(', ')})`
  if (!(FACTURX_TYPES as readonly string[]).includes(documentType))
    return `${label('facturxDocumentType')} is invalid (got '${documentType}', resulting to value is not ${FACTURX_TYPES.join(', ')})`
  if (pdfa && pdfa !== 'PDF/A-3b')
    return `${label('pdfa')} is invalid (got '${pdfa}', resulting to Factur-X needs PDF/A-3b)`
  if (userPassword)
    return `${label('userPassword')} is invalid (resulting to a Factur-X PDF is PDF/A-3b, which cannot be encrypted)`
  return undefined
}

/**
 * Why Go's encoding/json refuses `text`, in its words ("invalid character 'o' in literal false (expecting 'a')"):
 * Gotenberg's 400s quote it. A scanner of Go's states, enough to word the first error; undefined for valid JSON.
 */
export function goJsonError(text: string): string | undefined {
  let i = 0
  const quote = (c: string) => (c === "'" ? "'\\''" : c === '"' ? "'\"'" : `'${JSON.stringify(c).slice(1, -1)}'`)
  const fail = (context: string) => {
    throw i >= text.length ? 'unexpected end of JSON input' : `invalid character ${quote(text[i]!)} ${context}`
  }
  const space = () => {
    while (i < text.length && ' \t\r\n'.includes(text[i]!)) i++
  }
  const value = (): void => {
    space()
    const c = text[i]
    if (c === '{') {
      i++
      space()
      if (text[i] === '}') return void i++
      for (;;) {
        space()
        if (text[i] !== '"') fail('looking for beginning of object key string')
        string()
        space()
        if (text[i] !== ':') fail('after object key')
        i++
        value()
        space()
        if (text[i] === ',') i++
        else if (text[i] === '}') return void i++
        else fail('after object key:value pair')
      }
    }
    if (c === '[') {
      i++
      space()
      if (text[i] === ']') return void i++
      for (;;) {
        value()
        space()
        if (text[i] === ',') i++
        else if (text[i] === ']') return void i++
        else fail('after array element')
      }
    }
    if (c === '"') {
      string()
      return
    }
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) {
      if (text[i] === '-') i++
      if (!(text[i]! >= '0' && text[i]! <= '9')) fail('in numeric literal')
      while (text[i]! >= '0' && text[i]! <= '9') i++
      if (text[i] === '.') {
        i++
        if (!(text[i]! >= '0' && text[i]! <= '9')) fail('after decimal point in numeric literal')
        while (text[i]! >= '0' && text[i]! <= '9') i++
      }
      if (text[i] === 'e' || text[i] === 'E') {
        i++
        if (text[i] === '+' || text[i] === '-') i++
        if (!(text[i]! >= '0' && text[i]! <= '9')) fail('in exponent of numeric literal')
        while (text[i]! >= '0' && text[i]! <= '9') i++
      }
      return
    }
    for (const literal of ['true', 'false', 'null']) {
      if (c !== literal[0]) continue
      i++
      for (const expected of literal.slice(1)) {
        if (text[i] !== expected) fail(`in literal ${literal} (expecting ${quote(expected)})`)
        i++
      }
      return
    }
    fail('looking for beginning of value')
  }
  const string = (): void => {
    i++
    while (i < text.length && text[i] !== '"') {
      if (text.charCodeAt(i) < 0x20) fail('in string literal')
      if (text[i] === '\\') {
        i++
        if (!'"\\/bfnrtu'.includes(text[i] ?? '')) fail('in string escape code')
      }
      i++
    }
    if (i >= text.length) fail('')
    i++
  }
  try {
    value()
    space()
    if (i < text.length) fail('after top-level value')
    return undefined
  } catch (error) {
    return String(error)
  }
}
