// Reads the form of Gotenberg 8's LibreOffice route into settings, validated as Gotenberg validates it: every
// invalid field is named in one 400 ("Invalid form data: ..."), booleans follow Go's strconv.ParseBool, and a
// Gotenberg option this server cannot honour is refused with a 400 naming it, never accepted and ignored.
import { facturXRefusal, parseVariables, type Variables } from './form-rules.ts'

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
  openBookmarkLevels: ['OpenBookmarkLevels', (n) => (n === -1 || (n >= 1 && n <= 10) ? undefined : 'value is not -1 or between 1 and 10')],
  quality: ['Quality', (n) => (n < 1 ? 'value is inferior to 1' : n > 100 ? 'value is superior to 100' : undefined)],
  maxImageResolution: ['MaxImageResolution', (n) => ([75, 150, 300, 600, 1200].includes(n) ? undefined : 'value is not 75, 150, 300, 600 or 1200')],
  nativeWatermarkColor: ['WatermarkColor', (n) => (n < 0 || n > 0xffffff ? 'value is not a RGB color between 0 and 16777215' : undefined)],
  nativeWatermarkFontHeight: ['WatermarkFontHeight', (n) => (n < 1 ? 'value is inferior to 1' : undefined)],
  nativeWatermarkRotateAngle: ['WatermarkRotateAngle', (n) => (n < 0 || n > 3600 ? 'value is not between 0 and 3600 (tenths of a degree)' : undefined)],
}

const TEXT_EXPORT_FIELDS = { nativeWatermarkText: 'Watermark', nativeTiledWatermarkText: 'TiledWatermark', nativeWatermarkFontName: 'WatermarkFontName' } as const

/** Gotenberg options this server refuses, and why (the table in docs/conversion-and-previews.md says the same). */
export const REFUSED_FIELDS: Readonly<Record<string, string>> = {
  nativePdfFormats: 'PDF/A and PDF/UA are always made by LibreOffice here',
}

/** The form fields that carry files other than the documents to convert. */
export const ATTACHMENT_FIELDS = ['embeds', 'watermark', 'stamp', 'facturxXml']

export type SplitSettings = { mode: 'intervals'; span: number; unify: boolean } | { mode: 'pages'; span: string; ranges: string; unify: boolean }

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
}

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
    const match = /^(\d+)?(-)?(\d+)?$/.exec(part)
    if (!match || (!match[1] && !match[3]) || (match[1] === '0' || match[3] === '0')) return undefined
    if (!match[2]) {
      if (match[3] !== undefined) return undefined
      out.push(match[1]!)
    } else out.push(`${match[1] ?? '1'}-${match[3] ?? 'z'}`)
  }
  return out.join(',')
}

const NAMED_COLORS: Record<string, string> = { black: '#000000', gray: '#808080', grey: '#808080', red: '#ff0000', green: '#008000', blue: '#0000ff', white: '#ffffff' }
const STANDARD_FONTS = ['Helvetica', 'Helvetica-Bold', 'Times-Roman', 'Times-Bold', 'Courier', 'Courier-Bold']

function overlayStyle(field: string, raw: string, errors: string[]): OverlayStyle {
  const style = { font: 'Helvetica', points: 48, color: [0.5, 0.5, 0.5] as [number, number, number], rotation: 45, opacity: 0.5 }
  if (!raw) return style
  let parsed: unknown
  try {
    parsed = JSON.parse(raw)
  } catch (error) {
    errors.push(`form field '${field}' is invalid (got '${raw}', resulting to unmarshal options: ${(error as Error).message})`)
    return style
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    errors.push(`form field '${field}' is invalid (got '${raw}', resulting to options must be a JSON object)`)
    return style
  }
  for (const [key, value] of Object.entries(parsed)) {
    const bad = (why: string) => errors.push(`form field '${field}' is invalid (got '${raw}', resulting to ${why})`)
    if (key === 'font' && typeof value === 'string' && STANDARD_FONTS.includes(value)) style.font = value
    else if (key === 'font') bad(`font '${value}' is not one of ${STANDARD_FONTS.join(', ')}`)
    else if ((key === 'points' || key === 'fontsize') && typeof value === 'number' && value > 0 && value <= 500) style.points = value
    else if (key === 'rotation' && typeof value === 'number' && Math.abs(value) <= 360) style.rotation = value
    else if (key === 'opacity' && typeof value === 'number' && value >= 0 && value <= 1) style.opacity = value
    else if (key === 'color' && typeof value === 'string' && /^#[0-9a-f]{6}$/i.test(NAMED_COLORS[value.toLowerCase()] ?? value)) {
      const hex = NAMED_COLORS[value.toLowerCase()] ?? value
      style.color = [1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16) / 255) as [number, number, number]
    } else bad(`option '${key}' is not supported here (supported: font, points, color, rotation, opacity)`)
  }
  return style
}

/** Reads and validates every option of the route; throws FormError with every problem at once. */
export function readRouteSettings(form: FormData, hasDocuments: boolean, extensions: readonly string[]): RouteSettings {
  const errors: string[] = []
  const field = (name: string) => {
    const value = form.get(name)
    return typeof value === 'string' ? value : ''
  }
  const bool = (name: string, fallback: boolean) => {
    const raw = field(name)
    if (raw === '') return fallback
    const parsed = parseGoBool(raw)
    if (parsed === undefined) errors.push(`form field '${name}' is invalid (got '${raw}', resulting to strconv.ParseBool: parsing "${raw}": invalid syntax)`)
    return parsed ?? fallback
  }
  const int = (name: string, check?: (n: number) => string | undefined) => {
    const raw = field(name)
    if (raw === '') return undefined
    const parsed = parseGoInt(raw)
    if (parsed === undefined) {
      errors.push(`form field '${name}' is invalid (got '${raw}', resulting to strconv.Atoi: parsing "${raw}": invalid syntax)`)
      return undefined
    }
    const problem = check?.(parsed)
    if (problem) errors.push(`form field '${name}' is invalid (got '${raw}', resulting to ${problem})`)
    return problem ? undefined : parsed
  }
  if (!hasDocuments) errors.push(`no form file found for extensions: [${extensions.map((e) => `.${e}`).join(' ')}]`)

  const landscape = bool('landscape', false)
  const exportFilter: Record<string, string | number | boolean> = {}
  for (const [name, filterName] of Object.entries(EXPORT_FIELDS)) {
    if (field(name) !== '') exportFilter[filterName] = bool(name, false)
  }
  for (const [name, [filterName, check]] of Object.entries(NUMBER_FIELDS)) {
    const value = int(name, check)
    if (value !== undefined) exportFilter[filterName] = value
  }
  for (const [name, filterName] of Object.entries(TEXT_EXPORT_FIELDS)) {
    if (field(name)) exportFilter[filterName] = field(name)
  }
  const updateIndexes = bool('updateIndexes', true)
  const merge = bool('merge', false)
  const pdfua = bool('pdfua', false)
  const flatten = bool('flatten', false)

  let metadata: Record<string, unknown> | undefined
  if (field('metadata')) {
    try {
      const parsed = JSON.parse(field('metadata'))
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('metadata must be a JSON object')
      metadata = parsed
    } catch (error) {
      errors.push(`form field 'metadata' is invalid (got '${field('metadata')}', resulting to unmarshal metadata: ${(error as Error).message})`)
    }
  }

  let split: SplitSettings | undefined
  const splitMode = field('splitMode')
  const splitUnify = bool('splitUnify', false)
  if (splitMode !== '') {
    if (splitMode !== 'intervals' && splitMode !== 'pages') errors.push(`form field 'splitMode' is invalid (got '${splitMode}', resulting to wrong value, expected either 'intervals' or 'pages')`)
    else if (splitMode === 'intervals') {
      const span = int('splitSpan', (n) => (n < 1 ? 'value is inferior to 1' : undefined))
      if (span !== undefined) split = { mode: 'intervals', span, unify: splitUnify }
      else if (field('splitSpan') === '') errors.push("form field 'splitSpan' is required")
    } else if (field('splitSpan') === '') errors.push("form field 'splitSpan' is required")
    else split = { mode: 'pages', span: field('splitSpan'), ranges: qpdfRanges(field('splitSpan')) ?? '', unify: splitUnify }
  }

  let rotate: RouteSettings['rotate']
  const angle = int('rotateAngle', (n) => ([90, 180, 270].includes(n) ? undefined : 'value is not 90, 180 or 270'))
  if (angle !== undefined) {
    const pages = field('rotatePages') ? qpdfRanges(field('rotatePages')) : undefined
    if (field('rotatePages') && !pages) errors.push(`form field 'rotatePages' is invalid (got '${field('rotatePages')}', resulting to malformed page ranges)`)
    rotate = { angle: angle as 90 | 180 | 270, pages }
  } else if (field('rotatePages')) errors.push("form field 'rotateAngle' is required when 'rotatePages' is set")

  const overlay = (kind: 'watermark' | 'stamp'): OverlaySettings | undefined => {
    const source = field(`${kind}Source`)
    const expression = field(`${kind}Expression`)
    if (!source && !expression && !field(`${kind}Pages`) && !field(`${kind}Options`)) return undefined
    if (!['text', 'image', 'pdf'].includes(source)) {
      errors.push(`form field '${kind}Source' is invalid (got '${source}', resulting to wrong value, expected either 'text', 'image' or 'pdf')`)
      return undefined
    }
    if (!expression) {
      errors.push(`form field '${kind}Expression' is required`)
      return undefined
    }
    if (source !== 'text') {
      // The expression names an uploaded file, never a path on this server.
      const uploaded = form.getAll(kind).some((value) => typeof value !== 'string' && value.name === expression) || form.getAll('files').some((value) => typeof value !== 'string' && value.name === expression)
      if (!uploaded) {
        errors.push(`a ${kind} file is required for image or pdf source`)
        return undefined
      }
    }
    const rawPages = field(`${kind}Pages`)
    const pages = rawPages ? qpdfRanges(rawPages) : undefined
    if (rawPages && !pages) errors.push(`form field '${kind}Pages' is invalid (got '${rawPages}', resulting to malformed page ranges)`)
    return { source: source as OverlaySettings['source'], expression, pages, options: overlayStyle(`${kind}Options`, field(`${kind}Options`), errors) }
  }
  const watermark = overlay('watermark')
  const stamp = overlay('stamp')

  let variables: Variables | undefined
  if (field('variables')) {
    const parsed = parseVariables(field('variables'))
    if (typeof parsed === 'string') errors.push(`form field 'variables' is invalid (got '${field('variables')}', resulting to ${parsed})`)
    else if (parsed.values.size > 0 || parsed.lists.size > 0) variables = parsed
  }

  const userPassword = field('userPassword') || undefined
  const ownerPassword = field('ownerPassword') || undefined
  if (ownerPassword && !userPassword) errors.push("form field 'userPassword' is required when 'ownerPassword' is set")

  let facturx: RouteSettings['facturx']
  const invoices = form.getAll('facturxXml')
  if (invoices.length > 0 || field('facturxConformanceLevel') || field('facturxDocumentType')) {
    const conformanceLevel = field('facturxConformanceLevel') || 'EN 16931'
    const documentType = field('facturxDocumentType') || 'INVOICE'
    const files = invoices.length === 1 && typeof invoices[0] === 'string' ? 0 : invoices.length
    const refusal = facturXRefusal({ invoices: files, conformanceLevel, documentType, pdfa: field('pdfa'), userPassword }, (name) => `form field '${name}'`)
    if (refusal) errors.push(refusal)
    else facturx = { conformanceLevel, documentType }
  }

  for (const [name, why] of Object.entries(REFUSED_FIELDS)) {
    if (form.has(name)) errors.push(`form field '${name}' is not supported by this server (${why})`)
  }
  if (errors.length > 0) throw new FormError(`Invalid form data: ${errors.join('\n')}`)

  // Checked after the form: Gotenberg answers these with their own messages, not as "Invalid form data".
  const pdfa = field('pdfa')
  if (pdfa && !['PDF/A-1b', 'PDF/A-2b', 'PDF/A-3b'].includes(pdfa)) throw new FormError(`The PDF format '${pdfa}' is not supported. Valid formats include PDF/A-1b, PDF/A-2b, PDF/A-3b, and PDF/UA.`)
  if (split?.mode === 'pages' && !split.ranges) throw new FormError("The requested split mode is not supported, or no PDF engine could process it. Valid modes: 'intervals', 'pages'.")

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
    rotate,
    watermark,
    stamp,
    variables,
    facturx,
  }
}
