// Gotenberg's rules for the form fields the Worker validates too, before a job exists (worker/converters/
// office-to-pdf.ts imports this file): `variables` and Factur-X. Stated once here, for both sides: so this file
// imports nothing, and nothing Node-only.

export interface Variables {
  readonly values: ReadonlyMap<string, string>
  readonly lists: ReadonlyMap<string, ReadonlyArray<Readonly<Record<string, string>>>>
}

export const VARIABLES_EXTENSIONS = ['.docx', '.docm', '.dotx', '.dotm']
const MAX_LIST_ROWS = 10_000
const NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/

export const appliesVariables = (name: string) => VARIABLES_EXTENSIONS.some((extension) => name.toLowerCase().endsWith(extension))

/** Reads the field as Gotenberg does; a string is the reason it is invalid (the 400 quotes it). */
export function parseVariables(raw: string): Variables | string {
  let object: unknown
  try {
    object = JSON.parse(raw)
  } catch (error) {
    return `value is not a JSON object, like {"legal_address":"221B Baker Street"}: ${(error as Error).message}`
  }
  if (typeof object !== 'object' || object === null || Array.isArray(object)) return 'value is not a JSON object, like {"legal_address":"221B Baker Street"}'
  const values = new Map<string, string>()
  const lists = new Map<string, Record<string, string>[]>()
  const badName = (name: string) => `variable name '${name}' is invalid: use letters, digits, '_', '.' or '-', starting with a letter or '_'`
  for (const name of Object.keys(object).sort()) {
    if (!NAME.test(name)) return badName(name)
    const value = (object as Record<string, unknown>)[name]
    if (typeof value === 'string') {
      values.set(name, value)
      continue
    }
    const isList = Array.isArray(value) && value.every((element) => typeof element === 'object' && element !== null && !Array.isArray(element) && Object.values(element).every((field) => typeof field === 'string'))
    if (!isList) return `variable '${name}' is invalid: use a string, or an array of objects with string values to repeat a table row`
    if (name.includes('.')) return `list name '${name}' is invalid: a list name cannot contain '.'`
    if (value.length > MAX_LIST_ROWS) return `list '${name}' has ${value.length} elements: the maximum is ${MAX_LIST_ROWS}`
    for (const field of value.flatMap((element) => Object.keys(element)).sort()) {
      if (field.includes('.')) return `field name '${field}' of list '${name}' is invalid: a field name cannot contain '.'`
      if (!NAME.test(field)) return `list '${name}': ${badName(field)}`
    }
    lists.set(name, value as Record<string, string>[])
  }
  for (const name of values.keys()) {
    const list = name.split('.')[0]!
    if (name.includes('.') && lists.has(list)) return `variable '${name}' is ambiguous: '${list}' is a list, and '${list}.' refers to its fields`
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
  if (invoices !== 1) return `${label('facturxXml')} is required (one XML file) when 'facturxConformanceLevel' or 'facturxDocumentType' is set`
  if (!(FACTURX_LEVELS as readonly string[]).includes(conformanceLevel)) return `${label('facturxConformanceLevel')} is invalid (got '${conformanceLevel}', resulting to value is not ${FACTURX_LEVELS.join(', ')})`
  if (!(FACTURX_TYPES as readonly string[]).includes(documentType)) return `${label('facturxDocumentType')} is invalid (got '${documentType}', resulting to value is not ${FACTURX_TYPES.join(', ')})`
  if (pdfa && pdfa !== 'PDF/A-3b') return `${label('pdfa')} is invalid (got '${pdfa}', resulting to Factur-X needs PDF/A-3b)`
  if (userPassword) return `${label('userPassword')} is invalid (resulting to a Factur-X PDF is PDF/A-3b, which cannot be encrypted)`
  return undefined
}
