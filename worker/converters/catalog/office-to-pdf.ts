// Office documents → PDF (worker/converters/office-to-pdf.ts): what it reads, and Gotenberg 8's LibreOffice-route
// options a job may ask for, checked in the API Worker before a job exists.
import { z } from '@hono/zod-openapi'
import {
  appliesVariables,
  FACTURX_LEVELS,
  FACTURX_TYPES,
  facturXRefusal,
  parseVariables,
  VARIABLES_EXTENSIONS,
} from '../../../shared/form-rules.ts'
import { describeConverter, type OptionValues } from '../converter'

/**
 * The sniffed types (worker/files/sniff.ts) of office documents: a zip (typed by its office extension, or plain
 * application/zip for .docm, .xlsm, .ppsx …), an OLE2 compound file, RTF by its magic, CSV by its extension.
 */
const OFFICE_TYPES = [
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  'application/vnd.oasis.opendocument.text',
  'application/vnd.oasis.opendocument.spreadsheet',
  'application/vnd.oasis.opendocument.presentation',
  'application/zip',
  'application/msword',
  'application/vnd.ms-excel',
  'application/vnd.ms-powerpoint',
  'application/x-ole-storage',
  'application/rtf',
  'text/csv',
]

/** The extensions of the documents LibreOffice converts here: Word, Excel, PowerPoint, OpenDocument, RTF and CSV. */
const OFFICE_EXTENSIONS = [
  '.doc',
  '.docx',
  '.docm',
  '.dotx',
  '.odt',
  '.ott',
  '.rtf',
  '.xls',
  '.xlsx',
  '.xlsm',
  '.ods',
  '.csv',
  '.ppt',
  '.pptx',
  '.pps',
  '.ppsx',
  '.odp',
  '.odg',
]

/** The settings of a converter that posts a document whole to the Gotenberg sidecar (Office, HTML and Markdown). */
export const GOTENBERG_SETTINGS = [
  'GOTENBERG_URL',
  'GOTENBERG_USERNAME',
  'GOTENBERG_PASSWORD',
  'GOTENBERG_ACCESS_CLIENT_ID',
  'GOTENBERG_ACCESS_CLIENT_SECRET',
  'GOTENBERG_TIMEOUT_MS',
  'OFFICE_MAX_BYTES',
] as const

const flag = z.union([z.boolean(), z.enum(['true', 'false'])])
const PAGE_RANGES = /^\d+(-\d*)?(,\d+(-\d*)?)*$/
const jsonObject = (what: string) =>
  z
    .string()
    .max(1000)
    .refine((value) => {
      try {
        const parsed = JSON.parse(value)
        return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      } catch {
        return false
      }
    }, `${what} must be a JSON object`)
const overlay = (kind: 'watermark' | 'stamp') => ({
  [`${kind}Source`]: z
    .literal('text')
    .openapi({ description: `Gotenberg's ${kind}Source: only "text" here (one document per job, so no ${kind} file)` }),
  [`${kind}Expression`]: z.string().min(1).max(200),
  [`${kind}Pages`]: z.string().regex(PAGE_RANGES).max(200),
  [`${kind}Options`]: jsonObject(`${kind}Options`).openapi({
    description: 'JSON: font, points, color, rotation, opacity',
  }),
})

/**
 * `variables` as JSON text at most (the job keeps it in its D1 row, beside the Factur-X XML: both together stay
 * under the 1 MiB JSON body and D1's 2 MB row). Gotenberg sets no bound of its own; the sidecar's are 10,000 rows
 * a list and 64 MiB a filled part, which 512 KiB of values cannot reach on a document within OFFICE_MAX_BYTES.
 */
export const VARIABLES_MAX_CHARS = 512 * 1024
/**
 * The Factur-X invoice XML, inline. A Factur-X/ZUGFeRD CII invoice is a few KiB, a few hundred for long EXTENDED
 * ones.
 */
export const FACTURX_XML_MAX_CHARS = 384 * 1024

/** Gotenberg's `variables`: name → string, or list → rows (objects of strings) repeating a table row. Checked by
 * the sidecar's own parser (shared/form-rules.ts), so the Worker refuses exactly what the sidecar would. */
const variables = z
  .record(z.string(), z.union([z.string(), z.array(z.record(z.string(), z.string()))]))
  .superRefine((value, ctx) => {
    const text = JSON.stringify(value)
    const problem =
      text.length > VARIABLES_MAX_CHARS
        ? `${text.length} characters as JSON: the maximum is ${VARIABLES_MAX_CHARS}`
        : parseVariables(text)
    if (typeof problem === 'string') ctx.addIssue({ code: 'custom', message: problem })
  })
  .openapi({
    description: `Gotenberg's variables, for Word sources (${VARIABLES_EXTENSIONS.join(', ')}): \${name} placeholders take the strings, a table row using \${list.field} repeats per element of the list; at most ${VARIABLES_MAX_CHARS} characters as JSON`,
    example: { company: 'Smith & Sons', items: [{ name: 'Widget', qty: '2' }] },
  })

/**
 * Gotenberg 8's LibreOffice-route options a job may ask for, with Gotenberg's names and ranges. Left out: merge and
 * split (one document per job, one PDF out), and the options the sidecar refuses (docs/conversion-and-previews.md,
 * Office to PDF).
 */
export const OFFICE_OPTIONS = {
  landscape: flag,
  nativePageRanges: z.string().regex(PAGE_RANGES).max(200),
  pdfa: z.enum(['PDF/A-1b', 'PDF/A-2b', 'PDF/A-3b']),
  pdfua: flag,
  password: z
    .string()
    .min(1)
    .max(256)
    .openapi({ description: "opens a password-protected document (Office or PDF); never shown in the job's view" }),
  updateIndexes: flag,
  exportFormFields: flag,
  allowDuplicateFieldNames: flag,
  exportBookmarks: flag,
  exportBookmarksToPdfDestination: flag,
  exportPlaceholders: flag,
  exportNotes: flag,
  exportNotesPages: flag,
  exportOnlyNotesPages: flag,
  exportNotesInMargin: flag,
  convertOooTargetToPdfTarget: flag,
  exportLinksRelativeFsys: flag,
  exportHiddenSlides: flag,
  skipEmptyPages: flag,
  addOriginalDocumentAsStream: flag,
  singlePageSheets: flag,
  losslessImageCompression: flag,
  quality: z.number().int().min(1).max(100),
  reduceImageResolution: flag,
  maxImageResolution: z.union([z.literal(75), z.literal(150), z.literal(300), z.literal(600), z.literal(1200)]),
  nativeWatermarkText: z.string().min(1).max(200),
  nativeTiledWatermarkText: z.string().min(1).max(200),
  nativeWatermarkColor: z.number().int().min(0).max(0xffffff),
  nativeWatermarkFontHeight: z.number().int().min(1).max(1000),
  nativeWatermarkRotateAngle: z.number().int().min(0).max(3600),
  nativeWatermarkFontName: z.string().min(1).max(100),
  metadata: jsonObject('metadata').openapi({
    description: 'JSON object of PDF metadata (exiftool tags), as Gotenberg takes it',
  }),
  flatten: flag,
  rotateAngle: z.union([z.literal(90), z.literal(180), z.literal(270)]),
  rotatePages: z.string().regex(PAGE_RANGES).max(200),
  ...overlay('watermark'),
  ...overlay('stamp'),
  userPassword: z.string().min(1).max(256).openapi({
    description:
      "encrypts the PDF (AES-256); the job fails rather than store it unencrypted; never shown in the job's view",
  }),
  ownerPassword: z
    .string()
    .min(1)
    .max(256)
    .openapi({ description: 'with userPassword: the password that lifts restrictions' }),
  variables,
  facturxXml: z
    .string()
    .min(1)
    .max(FACTURX_XML_MAX_CHARS)
    .regex(/^\uFEFF?\s*</, 'must be XML')
    .openapi({
      description: `Factur-X / ZUGFeRD: the invoice's CII XML itself (Gotenberg's facturxXml file, inline), attached to the PDF/A-3b as factur-x.xml; at most ${FACTURX_XML_MAX_CHARS} characters`,
    }),
  facturxConformanceLevel: z.enum(FACTURX_LEVELS).openapi({ description: 'with facturxXml (default EN 16931)' }),
  facturxDocumentType: z.enum(FACTURX_TYPES).openapi({ description: 'with facturxXml (default INVOICE)' }),
}

/** Factur-X's fields checked together with the sidecar's own rule. */
function refuseOptions(options: Readonly<Record<string, unknown>>): string | undefined {
  const { facturxXml, facturxConformanceLevel, facturxDocumentType, pdfa, userPassword } = options as Partial<
    Record<keyof typeof OFFICE_OPTIONS, string>
  >
  return facturXRefusal(
    {
      invoices: facturxXml ? 1 : 0,
      conformanceLevel: facturxConformanceLevel,
      documentType: facturxDocumentType,
      pdfa,
      userPassword,
    },
    (name) => `option '${name}'`,
  )
}

/**
 * The options as a job keeps them (variables as its JSON text, Gotenberg's form value), or why the source cannot
 * take them. Variables fill Word templates only; Factur-X needs the Office conversion. The sidecar would answer
 * 400, so they are refused before a job exists.
 */
function storeOptions(
  extension: string,
  options: Readonly<Record<string, unknown>>,
): { options: OptionValues } | { refusal: string } {
  const { variables: values, ...rest } = options as OptionValues & { variables?: unknown }
  if (values && !appliesVariables(extension))
    return {
      refusal: `option 'variables' applies to Word documents (${VARIABLES_EXTENSIONS.join(', ')}) only, not to ${extension || 'a file without extension'}`,
    }
  if (options.facturxXml && !OFFICE_EXTENSIONS.includes(extension))
    return {
      refusal: `option 'facturxXml' applies to Office documents converted to PDF only, not to ${extension || 'a file without extension'}`,
    }
  return { options: values ? { ...rest, variables: JSON.stringify(values) } : rest }
}

export const officeToPdfInfo = describeConverter({
  name: 'office-to-pdf',
  settings: GOTENBERG_SETTINGS,
  from: OFFICE_EXTENSIONS,
  accepts: OFFICE_TYPES,
  to: '.pdf',
  // A preview draws from this PDF and a conversion continues from it: one LibreOffice run per document content.
  reusable: true,
  options: {
    fields: OFFICE_OPTIONS,
    // The longest a job keeps: variables as its JSON text, or the Factur-X XML.
    storedMaxChars: Math.max(VARIABLES_MAX_CHARS, FACTURX_XML_MAX_CHARS),
    secrets: ['password', 'userPassword', 'ownerPassword'],
    refuse: refuseOptions,
    store: storeOptions,
  },
})
