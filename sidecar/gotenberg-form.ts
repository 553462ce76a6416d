// Reads the form of Gotenberg 8's LibreOffice route into settings, validated as Gotenberg validates it: every
// invalid field is named in one 400 ("Invalid form data: ..."), booleans follow Go's strconv.ParseBool, and a
// Gotenberg option this server cannot honour is refused with a 400 naming it, never accepted and ignored.
import { facturXRefusal, goJsonError, parseVariables, type Variables } from '../shared/form-rules.ts'

/** A client error: the status and Gotenberg's wording. */
export class FormError extends Error {
  readonly status: number
  constructor(message: string, status = 400) {
    super(message)
    this.status = status
  }
}

/** LibreOffice's PDF export settings (FilterData names) a form field maps to, and how its value is read. */
const EXPORT_FIELDS = {
  exportFormFields: 'ExportFormFields',
  allowDuplicateFieldNames: 'AllowDuplicateFieldNames',
  exportBookmarks: 'ExportBookmarks',
  exportBookmarksToPdfDestination: 'ExportBookmarksToPDFDestination',
  exportPlaceholders: 'ExportPlaceholders',
  exportNotes: 'ExportNotes',
  exportNotesPages: 'ExportNotesPages',
  exportOnlyNotesPages: 'ExportOnlyNotesPages',
  exportNotesInMargin: 'ExportNotesInMargin',
  convertOooTargetToPdfTarget: 'ConvertOOoTargetToPDFTarget',
  exportLinksRelativeFsys: 'ExportLinksRelativeFsys',
  exportHiddenSlides: 'ExportHiddenSlides',
  skipEmptyPages: 'IsSkipEmptyPages',
  addOriginalDocumentAsStream: 'IsAddStream',
  singlePageSheets: 'SinglePageSheets',
  firstPageOnLeft: 'FirstPageOnLeft',
  resizeWindowToInitialPage: 'ResizeWindowToInitialPage',
  centerWindow: 'CenterWindow',
  openInFullScreenMode: 'OpenInFullScreenMode',
  displayPDFDocumentTitle: 'DisplayPDFDocumentTitle',
  hideViewerMenubar: 'HideViewerMenubar',
  hideViewerToolbar: 'HideViewerToolbar',
  hideViewerWindowControls: 'HideViewerWindowControls',
  useTransitionEffects: 'UseTransitionEffects',
  losslessImageCompression: 'UseLosslessCompression',
  reduceImageResolution: 'ReduceImageResolution',
} as const

/** Whole-number export settings: FilterData name and Gotenberg's check (an error text, or undefined when valid). */
const NUMBER_FIELDS: Record<string, [string, (n: number) => string | undefined]> = {
  initialView: ['InitialView', (n) => ([0, 1, 2].includes(n) ? undefined : 'value is not 0, 1 or 2')],
  initialPage: ['InitialPage', (n) => (n < 1 ? 'value is inferior to 1' : undefined)],
  magnification: ['Magnification', (n) => ([0, 1, 2, 3, 4].includes(n) ? undefined : 'value is not 0, 1, 2, 3 or 4')],
  zoom: ['Zoom', (n) => (n < 1 ? 'value is inferior to 1' : undefined)],
  pageLayout: ['PageLayout', (n) => ([0, 1, 2, 3].includes(n) ? undefined : 'value is not 0, 1, 2 or 3')],
  openBookmarkLevels: [
    'OpenBookmarkLevels',
    (n) => (n === -1 || (n >= 1 && n <= 10) ? undefined : 'value is not -1 or between 1 and 10'),
  ],
  quality: ['Quality', (n) => (n < 1 ? 'value is inferior to 1' : n > 100 ? 'value is superior to 100' : undefined)],
  maxImageResolution: [
    'MaxImageResolution',
    (n) => ([75, 150, 300, 600, 1200].includes(n) ? undefined : 'value is not 75, 150, 300, 600 or 1200'),
  ],
  nativeWatermarkColor: [
    'WatermarkColor',
    (n) => (n < 0 || n > 0xffffff ? 'value is not a RGB color between 0 and 16777215' : undefined),
  ],
  nativeWatermarkFontHeight: ['WatermarkFontHeight', (n) => (n < 1 ? 'value is inferior to 1' : undefined)],
  nativeWatermarkRotateAngle: [
    'WatermarkRotateAngle',
    (n) => (n < 0 || n > 3600 ? 'value is not between 0 and 3600 (tenths of a degree)' : undefined),
  ],
}

/** The export fields in the order Gotenberg reads them (its 400 lists their problems in this order). */
const EXPORT_FIELD_ORDER = [
  'exportFormFields',
  'allowDuplicateFieldNames',
  'exportBookmarks',
  'exportBookmarksToPdfDestination',
  'exportPlaceholders',
  'exportNotes',
  'exportNotesPages',
  'exportOnlyNotesPages',
  'exportNotesInMargin',
  'convertOooTargetToPdfTarget',
  'exportLinksRelativeFsys',
  'exportHiddenSlides',
  'skipEmptyPages',
  'addOriginalDocumentAsStream',
  'singlePageSheets',
  'initialView',
  'initialPage',
  'magnification',
  'zoom',
  'pageLayout',
  'firstPageOnLeft',
  'resizeWindowToInitialPage',
  'centerWindow',
  'openInFullScreenMode',
  'displayPDFDocumentTitle',
  'hideViewerMenubar',
  'hideViewerToolbar',
  'hideViewerWindowControls',
  'useTransitionEffects',
  'openBookmarkLevels',
  'losslessImageCompression',
  'quality',
  'reduceImageResolution',
  'maxImageResolution',
  'nativeWatermarkColor',
  'nativeWatermarkFontHeight',
  'nativeWatermarkRotateAngle',
]

const TEXT_EXPORT_FIELDS = {
  nativeWatermarkText: 'Watermark',
  nativeTiledWatermarkText: 'TiledWatermark',
  nativeWatermarkFontName: 'WatermarkFontName',
} as const

/** Gotenberg options this server refuses, and why (the table in docs/conversion-and-previews.md says the same). */
export const REFUSED_FIELDS: Readonly<Record<string, string>> = {
  nativePdfFormats: 'PDF/A and PDF/UA are always made by LibreOffice here',
}

/** The form fields that carry files other than the documents to convert. */
export const ATTACHMENT_FIELDS = ['embeds', 'watermark', 'stamp', 'facturxXml']

export type SplitSettings =
  | { mode: 'intervals'; span: number; unify: boolean }
  | { mode: 'pages'; span: string; ranges: string; unify: boolean }

export interface OverlaySettings {
  readonly source: 'text' | 'image' | 'pdf'
  readonly expression: string
  /** qpdf page ranges; undefined for every page. */
  readonly pages?: string
  readonly options: OverlayStyle
}

export interface OverlayStyle {
  readonly font: string
  readonly points: number
  /** 0-1 each. */
  readonly color: readonly [number, number, number]
  readonly rotation: number
  readonly opacity: number
  /** pdfcpu's scale: times its 24-point text (abs), or the text's width as a share of the page's (rel). */
  readonly scale?: { readonly factor: number; readonly isAbsolute: boolean }
}

export const PERMISSIONS = [
  'allowPrinting',
  'allowCopying',
  'allowModifying',
  'allowAnnotating',
  'allowFillingForms',
  'allowAssembling',
] as const
export type Permissions = Readonly<Record<(typeof PERMISSIONS)[number], boolean>>

export interface RouteSettings {
  readonly password?: string
  readonly landscape: boolean
  readonly nativePageRanges?: string
  readonly pdfa?: 'PDF/A-1b' | 'PDF/A-2b' | 'PDF/A-3b'
  readonly pdfua: boolean
  readonly updateIndexes: boolean
  /** Extra FilterData for LibreOffice's PDF export. */
  readonly exportFilter: Record<string, string | number | boolean>
  readonly merge: boolean
  readonly split?: SplitSettings
  readonly metadata?: Record<string, unknown>
  readonly flatten: boolean
  readonly userPassword?: string
  readonly ownerPassword?: string
  /** What a reader may do without the owner password (Gotenberg's allow* fields, all true by default). */
  readonly permissions: Permissions
  /** pdfengines routes: the embedded files' MIME type and PDF/A-3 relationship, by file name. */
  readonly embedsMetadata?: Record<string, { mimeType?: string; relationship?: string }>
  readonly rotate?: { angle: 90 | 180 | 270; pages?: string }
  readonly watermark?: OverlaySettings
  readonly stamp?: OverlaySettings
  /** Word templates' ${name} values and repeated rows; undefined when none are given. */
  readonly variables?: Variables
  /** Factur-X / ZUGFeRD: the invoice XML's level and type, when a facturxXml file is sent. */
  readonly facturx?: { readonly conformanceLevel: string; readonly documentType: string }
}

/** Go's strconv.ParseBool. */
export function parseGoBool(value: string): boolean | undefined {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(value)) return true
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(value)) return false
  return undefined
}

/** Go's strconv.Atoi (decimal, optional sign). */
function parseGoInt(value: string): number | undefined {
  return /^[+-]?\d{1,15}$/.test(value) ? Number(value) : undefined
}

/** Page ranges as Gotenberg writes them ("1-3", "5", "2-", "1,3,5-7"), in qpdf's syntax ("z" is the last page). */
export function qpdfRanges(value: string): string | undefined {
  const parts = value.replace(/\s+/g, '').split(',')
  const out: string[] = []
  for (const part of parts) {
    // qpdf's own "z" (the last page) is read too, as Gotenberg hands the expression to its engine.
    const match = /^(\d+|z)?(-)?(\d+|z)?$/.exec(part)
    if (!match || (!match[1] && !match[3]) || match[1] === '0' || match[3] === '0') return undefined
    if (!match[2]) {
      if (match[3] !== undefined) return undefined
      out.push(match[1]!)
    } else out.push(`${match[1] ?? '1'}-${match[3] ?? 'z'}`)
  }
  return out.join(',')
}

const NAMED_COLORS: Record<string, string> = {
  black: '#000000',
  gray: '#808080',
  grey: '#808080',
  red: '#ff0000',
  green: '#008000',
  blue: '#0000ff',
  white: '#ffffff',
}
const STANDARD_FONTS = ['Helvetica', 'Helvetica-Bold', 'Times-Roman', 'Times-Bold', 'Courier', 'Courier-Bold']

/** pdfcpu's names for the same options (Gotenberg hands the object to pdfcpu): read as ours. */
const PDFCPU_KEYS: Readonly<Record<string, string>> = {
  rot: 'rotation',
  fillcolor: 'color',
  fillc: 'color',
  op: 'opacity',
  fontsize: 'points',
  fontname: 'font',
}

function overlayStyle(field: string, raw: string, errors: string[], source: string): OverlayStyle {
  const style: { -readonly [K in keyof OverlayStyle]: OverlayStyle[K] } = {
    font: 'Helvetica',
    points: 48,
    color: [0.5, 0.5, 0.5],
    rotation: 45,
    opacity: 0.5,
  }
  if (!raw) return style
  let parsed: unknown
  try {
    parsed = JSON.parse(raw)
  } catch (error) {
    errors.push(
      `form field '${field}' is invalid (got '${raw}', resulting to unmarshal options: ${goJsonError(raw) ?? (error as Error).message})`,
    )
    return style
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    errors.push(`form field '${field}' is invalid (got '${raw}', resulting to options must be a JSON object)`)
    return style
  }
  for (const [given, rawValue] of Object.entries(parsed)) {
    const key = PDFCPU_KEYS[given.toLowerCase()] ?? given
    // pdfcpu takes numbers as strings too ("45").
    const value =
      typeof rawValue === 'string' &&
      key !== 'font' &&
      key !== 'color' &&
      key !== 'scale' &&
      /^-?\d+(\.\d+)?$/.test(rawValue)
        ? Number(rawValue)
        : rawValue
    const bad = (why: string) => errors.push(`form field '${field}' is invalid (got '${raw}', resulting to ${why})`)
    const scale =
      typeof value === 'string' || typeof value === 'number'
        ? /^(\d+(?:\.\d+)?)(?:\s+(abs|rel))?$/.exec(String(value).trim())
        : null
    if (key === 'font' && typeof value === 'string' && STANDARD_FONTS.includes(value)) style.font = value
    else if (key === 'font') bad(`font '${value}' is not one of ${STANDARD_FONTS.join(', ')}`)
    else if (key === 'points' && typeof value === 'number' && value > 0 && value <= 500) style.points = value
    else if (key === 'rotation' && typeof value === 'number' && Math.abs(value) <= 360) style.rotation = value
    else if (key === 'opacity' && typeof value === 'number' && value >= 0 && value <= 1) style.opacity = value
    else if (
      key === 'color' &&
      typeof value === 'string' &&
      /^#[0-9a-f]{6}$/i.test(NAMED_COLORS[value.toLowerCase()] ?? value)
    ) {
      const hex = NAMED_COLORS[value.toLowerCase()] ?? value
      style.color = [1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16) / 255) as [number, number, number]
    } else if (key === 'scale' && source === 'text' && scale && Number(scale[1]) > 0 && Number(scale[1]) <= 10)
      style.scale = { factor: Number(scale[1]), isAbsolute: scale[2] === 'abs' }
    else
      bad(
        `option '${given}' is not supported here (supported: font, points, color, rotation, opacity, scale for text, and pdfcpu's rot, fillcolor, op, fontsize, fontname)`,
      )
  }
  return style
}

/** Reads and validates every option of the route; throws FormError with every problem at once. */
export function readRouteSettings(
  form: FormData,
  hasDocuments: boolean,
  extensions: readonly string[],
  module: 'libreoffice' | 'pdfengines' = 'libreoffice',
): RouteSettings {
  const errors: string[] = []
  const field = (name: string) => {
    const value = form.get(name)
    return typeof value === 'string' ? value : ''
  }
  const bool = (name: string, fallback: boolean) => {
    const raw = field(name)
    if (raw === '') return fallback
    const parsed = parseGoBool(raw)
    if (parsed === undefined)
      errors.push(
        `form field '${name}' is invalid (got '${raw}', resulting to strconv.ParseBool: parsing "${raw}": invalid syntax)`,
      )
    return parsed ?? fallback
  }
  const int = (name: string, check?: (n: number) => string | undefined) => {
    const raw = field(name)
    if (raw === '') return undefined
    const parsed = parseGoInt(raw)
    if (parsed === undefined) {
      errors.push(
        `form field '${name}' is invalid (got '${raw}', resulting to strconv.Atoi: parsing "${raw}": invalid syntax)`,
      )
      return undefined
    }
    const problem = check?.(parsed)
    if (problem) errors.push(`form field '${name}' is invalid (got '${raw}', resulting to ${problem})`)
    return problem ? undefined : parsed
  }
  if (!hasDocuments) errors.push(`no form file found for extensions: [${extensions.map((e) => `.${e}`).join(' ')}]`)

  // LibreOffice's own options, read on its route only (another module's route leaves them to its own reader).
  const isLibreOffice = module === 'libreoffice'
  const landscape = isLibreOffice && bool('landscape', false)
  const exportFilter: Record<string, string | number | boolean> = {}
  for (const name of isLibreOffice ? EXPORT_FIELD_ORDER : []) {
    if (name in EXPORT_FIELDS) {
      if (field(name) !== '') exportFilter[EXPORT_FIELDS[name as keyof typeof EXPORT_FIELDS]] = bool(name, false)
      continue
    }
    const [filterName, check] = NUMBER_FIELDS[name]!
    const value = int(name, check)
    if (value !== undefined) exportFilter[filterName] = value
  }
  for (const [name, filterName] of Object.entries(isLibreOffice ? TEXT_EXPORT_FIELDS : {})) {
    if (field(name)) exportFilter[filterName] = field(name)
  }
  const updateIndexes = isLibreOffice && bool('updateIndexes', true)
  const merge = bool('merge', false)
  const pdfua = bool('pdfua', false)
  const flatten = bool('flatten', false)

  let metadata: Record<string, unknown> | undefined
  if (field('metadata')) {
    try {
      const parsed = JSON.parse(field('metadata'))
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
        throw new Error('metadata must be a JSON object')
      metadata = parsed
    } catch (error) {
      errors.push(
        `form field 'metadata' is invalid (got '${field('metadata')}', resulting to unmarshal metadata: ${goJsonError(field('metadata')) ?? (error as Error).message})`,
      )
    }
  }

  let split: SplitSettings | undefined
  const splitMode = field('splitMode')
  const splitUnify = bool('splitUnify', false)
  if (splitMode !== '') {
    if (splitMode !== 'intervals' && splitMode !== 'pages')
      errors.push(
        `form field 'splitMode' is invalid (got '${splitMode}', resulting to wrong value, expected either 'intervals' or 'pages')`,
      )
    else if (splitMode === 'intervals') {
      const span = int('splitSpan', (n) => (n < 1 ? 'value is inferior to 1' : undefined))
      if (span !== undefined) split = { mode: 'intervals', span, unify: splitUnify }
      else if (field('splitSpan') === '') errors.push("form field 'splitSpan' is required")
    } else if (field('splitSpan') === '') errors.push("form field 'splitSpan' is required")
    else
      split = {
        mode: 'pages',
        span: field('splitSpan'),
        ranges: qpdfRanges(field('splitSpan')) ?? '',
        unify: splitUnify,
      }
  }

  let rotate: RouteSettings['rotate']
  const angle = int('rotateAngle', (n) => ([90, 180, 270].includes(n) ? undefined : 'value is not 90, 180 or 270'))
  if (angle !== undefined) {
    const pages = field('rotatePages') ? qpdfRanges(field('rotatePages')) : undefined
    if (field('rotatePages') && !pages)
      errors.push(
        `form field 'rotatePages' is invalid (got '${field('rotatePages')}', resulting to malformed page ranges)`,
      )
    rotate = { angle: angle as 90 | 180 | 270, pages }
  } else if (field('rotatePages')) errors.push("form field 'rotateAngle' is required when 'rotatePages' is set")

  const overlay = (kind: 'watermark' | 'stamp'): OverlaySettings | undefined => {
    const source = field(`${kind}Source`)
    const expression = field(`${kind}Expression`)
    if (!source && !expression && !field(`${kind}Pages`) && !field(`${kind}Options`)) return undefined
    if (!['text', 'image', 'pdf'].includes(source)) {
      errors.push(
        `form field '${kind}Source' is invalid (got '${source}', resulting to wrong value, expected either 'text', 'image' or 'pdf')`,
      )
      return undefined
    }
    // An image or PDF is the file uploaded in the watermark (stamp) field, as Gotenberg's EnsureWatermarkFile takes
    // it; an expression naming a file of the upload picks that one. Never a path on this server.
    let chosen = expression
    if (source !== 'text') {
      const uploads = [...form.getAll(kind), ...form.getAll('files')].filter(
        (value): value is File => typeof value !== 'string',
      )
      const named =
        uploads.find((file) => file.name === expression) ??
        form.getAll(kind).find((value): value is File => typeof value !== 'string')
      if (!named) {
        errors.push(`a ${kind} file is required for image or pdf source`)
        return undefined
      }
      chosen = named.name
    } else if (!expression) {
      errors.push(`form field '${kind}Expression' is required`)
      return undefined
    }
    const rawPages = field(`${kind}Pages`)
    const pages = rawPages ? qpdfRanges(rawPages) : undefined
    if (rawPages && !pages)
      errors.push(`form field '${kind}Pages' is invalid (got '${rawPages}', resulting to malformed page ranges)`)
    return {
      source: source as OverlaySettings['source'],
      expression: chosen,
      pages,
      options: overlayStyle(`${kind}Options`, field(`${kind}Options`), errors, source),
    }
  }
  const watermark = overlay('watermark')
  const stamp = overlay('stamp')

  let variables: Variables | undefined
  if (field('variables')) {
    const parsed = parseVariables(field('variables'))
    if (typeof parsed === 'string')
      errors.push(`form field 'variables' is invalid (got '${field('variables')}', resulting to ${parsed})`)
    else if (parsed.values.size > 0 || parsed.lists.size > 0) variables = parsed
  }

  const userPassword = field('userPassword') || undefined
  const ownerPassword = field('ownerPassword') || undefined
  const permissions = Object.fromEntries(PERMISSIONS.map((name) => [name, bool(name, true)])) as unknown as Permissions

  let embedsMetadata: RouteSettings['embedsMetadata']
  if (field('embedsMetadata')) {
    try {
      const parsed = JSON.parse(field('embedsMetadata'))
      const valid =
        typeof parsed === 'object' &&
        parsed !== null &&
        !Array.isArray(parsed) &&
        Object.values(parsed).every(
          (entry) =>
            typeof entry === 'object' &&
            entry !== null &&
            !Array.isArray(entry) &&
            Object.values(entry).every((value) => typeof value === 'string'),
        )
      if (!valid) throw new Error('embedsMetadata must be an object of file names to objects of strings')
      embedsMetadata = parsed
    } catch (error) {
      errors.push(
        `form field 'embedsMetadata' is invalid (got '${field('embedsMetadata')}', resulting to unmarshal embeds metadata: ${goJsonError(field('embedsMetadata')) ?? (error as Error).message})`,
      )
    }
  }

  let facturx: RouteSettings['facturx']
  const invoices = form.getAll('facturxXml')
  if (invoices.length > 0 || field('facturxConformanceLevel') || field('facturxDocumentType')) {
    const conformanceLevel = field('facturxConformanceLevel') || 'EN 16931'
    const documentType = field('facturxDocumentType') || 'INVOICE'
    const files = invoices.length === 1 && typeof invoices[0] === 'string' ? 0 : invoices.length
    const refusal = facturXRefusal(
      { invoices: files, conformanceLevel, documentType, pdfa: field('pdfa'), userPassword },
      (name) => `form field '${name}'`,
    )
    if (refusal) errors.push(refusal)
    else facturx = { conformanceLevel, documentType }
  }

  for (const [name, why] of Object.entries(REFUSED_FIELDS)) {
    if (form.has(name)) errors.push(`form field '${name}' is not supported by this server (${why})`)
  }
  if (errors.length > 0) throw new FormError(`Invalid form data: ${errors.join('\n')}`)

  // Checked after the form: Gotenberg answers these with their own messages (its ValidatePdfFormatsCompat and
  // ValidatePdfEncryptCompat), in its order.
  const pdfa = field('pdfa')
  if (pdfa && userPassword) throw new FormError('Invalid form data: PDF/A format is incompatible with encryption')
  const embeds = form.getAll('embeds').filter((value) => typeof value !== 'string').length
  if (pdfa && embeds > 0 && !pdfa.startsWith('PDF/A-3'))
    throw new FormError(
      `Invalid form data: PDF format '${pdfa}' does not support embedded files; only PDF/A-3 variants allow attachments`,
    )
  if (!userPassword && !ownerPassword && Object.values(permissions).includes(false))
    throw new FormError("Invalid form data: permission restrictions require a 'userPassword' or 'ownerPassword'")
  if (pdfa && !['PDF/A-1b', 'PDF/A-2b', 'PDF/A-3b'].includes(pdfa)) {
    throw new FormError(
      module === 'libreoffice'
        ? `The PDF format '${pdfa}' is not supported. Valid formats include PDF/A-1b, PDF/A-2b, PDF/A-3b, and PDF/UA.`
        : 'The requested PDF format is not supported, or no PDF engine could apply it. Valid formats include PDF/A-1b, PDF/A-2b, PDF/A-3b, and PDF/UA.',
    )
  }
  if (split?.mode === 'pages' && !split.ranges)
    throw new FormError(
      "The requested split mode is not supported, or no PDF engine could process it. Valid modes: 'intervals', 'pages'.",
    )

  return {
    password: field('password') || undefined,
    landscape,
    nativePageRanges: field('nativePageRanges') || field('pageRanges') || undefined,
    // Factur-X is PDF/A-3b, asked for or not.
    pdfa: (pdfa || (facturx ? 'PDF/A-3b' : undefined)) as RouteSettings['pdfa'],
    pdfua,
    updateIndexes,
    exportFilter,
    merge,
    split,
    metadata,
    flatten,
    userPassword,
    ownerPassword,
    permissions,
    embedsMetadata,
    rotate,
    watermark,
    stamp,
    variables,
    facturx,
  }
}
