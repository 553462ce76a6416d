// Gotenberg 8's PDF engines module: POST /forms/pdfengines/{merge, split, flatten, convert, metadata/read,
// metadata/write, encrypt, embed, rotate, watermark, stamp}. Each route reads its form as Gotenberg reads it (the
// route's mandatory fields first, then the PDFs), then runs the same steps as the LibreOffice route's output
// (sidecar/outputs.ts) on the uploaded PDFs: qpdf and exiftool, and LibreOffice for PDF/A and PDF/UA.
import { readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { addDownloads, type DownloadSettings } from './download.ts'
import { ATTACHMENT_FIELDS, FormError, readRouteSettings, type RouteSettings } from './gotenberg-form.ts'
import type { LibreOfficePool } from './libreoffice.ts'
import { type Answer, answerOf, type Output, postProcess, safeName, uniqueNames } from './outputs.ts'
import { declaredPdfAPart, METADATA_REFUSED, metadataArguments, readMetadata } from './pdf-post.ts'

export const PDF_ENGINE_ROUTES = [
  'merge',
  'split',
  'flatten',
  'convert',
  'metadata/read',
  'metadata/write',
  'encrypt',
  'embed',
  'rotate',
  'watermark',
  'stamp',
  'factur-x',
] as const
export type PdfEngineRoute = (typeof PDF_ENGINE_ROUTES)[number]

/** The fields a route cannot do without, as Gotenberg's MandatoryCustom words them. */
const MANDATORY: Partial<Record<PdfEngineRoute, readonly string[]>> = {
  split: ['splitMode', 'splitSpan'],
  'metadata/write': ['metadata'],
  rotate: ['rotateAngle'],
  watermark: ['watermarkSource'],
  stamp: ['stampSource'],
}

export interface PdfEngineContext {
  readonly pool: LibreOfficePool
  readonly timeoutMs: number
  readonly download: DownloadSettings
  readonly trace: string
  /** The Gotenberg-Output-Filename header, or ''. */
  readonly outputName: string
}

/** The uploaded PDFs, in file-name order (the order of a merge, as Gotenberg sorts them). */
function pdfFiles(form: FormData): File[] {
  return [...form.entries()]
    .filter(
      (entry): entry is [string, File] =>
        typeof entry[1] !== 'string' &&
        !ATTACHMENT_FIELDS.includes(entry[0]) &&
        entry[1].name.toLowerCase().endsWith('.pdf'),
    )
    .map(([, file]) => file)
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}

/** Refuses what each route needs and lacks, before anything else is read, in Gotenberg's words. */
function checkMandatory(route: PdfEngineRoute, form: FormData, settings: () => RouteSettings, hasFiles: boolean): void {
  const missing = (MANDATORY[route] ?? []).filter((name) => typeof form.get(name) !== 'string' || form.get(name) === '')
  const problems = [
    ...missing.map((name) => `form field '${name}' is required`),
    ...(hasFiles ? [] : ['no form file found for extensions: [.pdf]']),
  ]
  if (problems.length > 0) throw new FormError(`Invalid form data: ${problems.join('\n')}`)
  const read = settings()
  if (route === 'convert' && !read.pdfa && !read.pdfua)
    throw new FormError("Invalid form data: either 'pdfa' or 'pdfua' form fields must be provided")
  if (route === 'encrypt' && !read.userPassword && !read.ownerPassword)
    throw new FormError("Invalid form data: a 'userPassword' or 'ownerPassword' is required")
  if (route === 'embed' && !form.getAll('embeds').some((value) => typeof value !== 'string'))
    throw new FormError("Invalid form data: form field 'embeds' is required")
  if (route === 'factur-x' && !read.facturx)
    throw new FormError("Invalid form data: form field 'facturxXml' is required")
}

/** The settings of the route: the shared ones, each route's own step switched on, the others off. */
function routeSettings(route: PdfEngineRoute, settings: RouteSettings): RouteSettings {
  switch (route) {
    case 'merge':
      return { ...settings, merge: true }
    case 'flatten':
      return { ...settings, flatten: true }
    // One step each: what the form says besides is Gotenberg's other routes' business.
    case 'convert':
      return only(settings, { pdfa: settings.pdfa, pdfua: settings.pdfua })
    case 'metadata/write':
      return only(settings, { metadata: settings.metadata })
    case 'encrypt':
      return only(settings, {
        userPassword: settings.userPassword,
        ownerPassword: settings.ownerPassword,
        permissions: settings.permissions,
      })
    case 'embed':
      return only(settings, { embedsMetadata: settings.embedsMetadata })
    case 'rotate':
      return only(settings, { rotate: settings.rotate })
    case 'watermark':
      return only(settings, { watermark: settings.watermark })
    case 'stamp':
      return only(settings, { stamp: settings.stamp })
    // PDF/A-3b unless every PDF already is one (decided once the files are read).
    case 'factur-x':
      return only(settings, { facturx: settings.facturx, pdfa: 'PDF/A-3b' })
    default:
      return settings
  }
}

function only(settings: RouteSettings, kept: Partial<RouteSettings>): RouteSettings {
  return {
    landscape: false,
    pdfua: false,
    updateIndexes: false,
    exportFilter: {},
    merge: false,
    flatten: false,
    permissions: settings.permissions,
    ...kept,
  }
}

/** Runs one PDF engines route on a read form: Gotenberg's answer, a PDF, a zip, or metadata as JSON. */
export async function runPdfEngineRoute(
  route: PdfEngineRoute,
  form: FormData,
  context: PdfEngineContext,
): Promise<Answer> {
  await addDownloads(form, context.download)
  const files = pdfFiles(form)
  let settings: RouteSettings | undefined
  const read = () => (settings ??= readRouteSettings(form, files.length > 0, ['pdf'], 'pdfengines'))
  checkMandatory(route, form, read, files.length > 0)
  const chosen = routeSettings(route, read())
  if (route === 'split' && chosen.split?.mode === 'pages' && !chosen.split.ranges)
    throw new FormError(
      "The requested split mode is not supported, or no PDF engine could process it. Valid modes: 'intervals', 'pages'.",
    )
  if (route === 'rotate' && !chosen.rotate)
    throw new FormError("Invalid form data: form field 'rotateAngle' is required")
  if (chosen.metadata && typeof metadataArguments(chosen.metadata) === 'string') throw new FormError(METADATA_REFUSED)
  if (route !== 'embed' && route !== 'merge' && route !== 'split') {
    // Embeds belong to the routes that take them; on another they are left out, as Gotenberg leaves them.
    form.delete('embeds')
  }
  const folder = await context.pool.scratch('pdfengines-')
  try {
    const names = uniqueNames(files.map((file) => safeName(file.name)))
    let outputs: Output[] = await Promise.all(
      files.map(async (file, i) => {
        const path = join(folder, `input-${i}.pdf`)
        await writeFile(path, new Uint8Array(await file.arrayBuffer()))
        return { path, name: names[i]! }
      }),
    )
    if (route === 'metadata/read') {
      const entries = await Promise.all(
        outputs.map(async (output) => [output.name, await readMetadata(output.path, context.timeoutMs)] as const),
      )
      return {
        body: new TextEncoder().encode(JSON.stringify(Object.fromEntries(entries))),
        type: 'application/json',
        name: '',
      }
    }
    // Factur-X on PDFs that are PDF/A-3 already keeps them as they are, as Gotenberg's detection does.
    const isPdfA3 =
      route === 'factur-x' &&
      (await Promise.all(outputs.map((output) => declaredPdfAPart(output.path, context.timeoutMs)))).every(
        (part) => part === 3,
      )
    outputs = await postProcess(
      outputs,
      isPdfA3 ? { ...chosen, pdfa: undefined } : chosen,
      form,
      folder,
      context.pool,
      context.timeoutMs,
      context.trace,
      { convertFormats: true },
    )
    const entries = await Promise.all(
      outputs.map(async (output) => ({ name: output.name, bytes: new Uint8Array(await readFile(output.path)) })),
    )
    // One PDF keeps its own name (the upload's, or a merge's new one), as Gotenberg names an output path.
    return answerOf(entries, context.outputName, true)
  } finally {
    await rm(folder, { recursive: true, force: true })
  }
}
