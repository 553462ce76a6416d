// Gotenberg 8's Chromium routes: POST /forms/chromium/convert/{html,url,markdown} and
// /forms/chromium/screenshot/{html,url,markdown}. Each reads its form as Gotenberg does, renders the page with
// sidecar/chromium.ts, and (PDFs) runs the same steps after it as the other routes (sidecar/outputs.ts).
import { readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { marked } from 'marked'
import {
  type ChromiumBrowser,
  ChromiumPageError,
  type ChromiumRoute,
  contentTypeOf,
  FormReader,
  PAGE_ORIGIN,
  type PageJob,
  readPageSettings,
} from './chromium.ts'
import { addDownloads, type DownloadSettings } from './download.ts'
import { ATTACHMENT_FIELDS, FormError, readRouteSettings } from './gotenberg-form.ts'
import { UrlRefusedError } from './outbound.ts'
import type { LibreOfficePool } from './libreoffice.ts'
import { type Answer, answerOf, needsPostProcessing, type Output, postProcess } from './outputs.ts'
import { METADATA_REFUSED, metadataArguments } from './pdf-post.ts'

export interface ChromiumContext {
  readonly browser: ChromiumBrowser
  readonly pool: LibreOfficePool
  readonly timeoutMs: number
  readonly download: DownloadSettings
  readonly trace: string
  readonly outputName: string
  readonly log: (entry: Record<string, unknown>) => void
}

/** Whether the route's source is there (an option's own 400 comes only for a request that could convert). */
const hasSource = (source: string, files: Map<string, File>, field: (name: string) => string) =>
  source === 'url' ? field('url') !== '' : files.has('index.html')

/** The form's files by name: what the page may load from its own origin. */
function formFiles(form: FormData): Map<string, File> {
  const files = new Map<string, File>()
  for (const [field, value] of form.entries()) {
    if (typeof value === 'string' || ATTACHMENT_FIELDS.includes(field)) continue
    files.set(value.name.split(/[\\/]/).pop()!, value)
  }
  return files
}

/**
 * Gotenberg's Markdown route: index.html's {{ toHTML "file.md" }} become the Markdown files as HTML (GitHub's flavour).
 */
async function markdownIndex(index: string, files: Map<string, File>): Promise<string> {
  const calls = [...index.matchAll(/\{\{\s*toHTML\s+"([^"]+)"\s*\}\}/g)]
  const missing = [...new Set(calls.map((call) => call[1]!).filter((name) => !files.has(name)))]
  if (missing.length > 0)
    throw new FormError(`Markdown file(s) not found: ${missing.map((name) => `'${name}'`).join('\n')}`)
  let out = ''
  let cursor = 0
  for (const call of calls) {
    out +=
      index.slice(cursor, call.index) +
      (await marked.parse(await files.get(call[1]!)!.text(), { gfm: true, async: true }))
    cursor = call.index + call[0].length
  }
  return out + index.slice(cursor)
}

const FORMATS = ['png', 'jpeg', 'webp'] as const

export async function runChromiumRoute(
  route: ChromiumRoute,
  form: FormData,
  context: ChromiumContext,
): Promise<Answer> {
  await addDownloads(form, context.download)
  const [kind, source] = route.split('/') as ['convert' | 'screenshot', 'html' | 'url' | 'markdown']
  const reader = new FormReader(form)
  const { errors } = reader
  const field = (name: string) => reader.field(name)
  const files = formFiles(form)
  // Gotenberg's order: the page's settings, then the output's, then the files the route needs.
  const settings = readPageSettings(reader)
  let output: PageJob['output']
  if (kind === 'convert') {
    const omitBackground = reader.bool('omitBackground', false)
    const print: Record<string, unknown> = {
      landscape: reader.bool('landscape', false),
      printBackground: reader.bool('printBackground', false),
      scale: reader.float('scale', 1, (n) => (n < 0.1 || n > 2 ? 'value is not between 0.1 and 2' : undefined)),
      singlePage: reader.bool('singlePage', false),
      paperWidth: reader.inches('paperWidth', 8.5),
      paperHeight: reader.inches('paperHeight', 11),
      marginTop: reader.inches('marginTop', 0.39),
      marginBottom: reader.inches('marginBottom', 0.39),
      marginLeft: reader.inches('marginLeft', 0.39),
      marginRight: reader.inches('marginRight', 0.39),
      preferCSSPageSize: reader.bool('preferCssPageSize', false),
      generateDocumentOutline: reader.bool('generateDocumentOutline', false),
      generateTaggedPDF: reader.bool('generateTaggedPdf', false),
      pageRanges: field('nativePageRanges'),
    }
    Object.assign(settings, { omitBackground })
    if (omitBackground && !print.printBackground && errors.length === 0 && hasSource(source, files, field))
      throw new FormError('omitBackground requires printBackground set to true')
    const header = files.get('header.html')
    const footer = files.get('footer.html')
    output = {
      kind: 'pdf',
      print,
      header: header ? await header.text() : undefined,
      footer: footer ? await footer.text() : undefined,
    }
  } else {
    const format = field('format') || 'png'
    const size = (n: number) =>
      !Number.isInteger(n) || n < 1 ? 'value is inferior to 1' : n > 16_384 ? 'value is superior to 16384' : undefined
    const width = reader.int('width', 800, size)
    const height = reader.int('height', 600, size)
    const clip = reader.bool('clip', false)
    if (!(FORMATS as readonly string[]).includes(format))
      errors.push(
        `form field 'format' is invalid (got '${format}', resulting to wrong value, expected either 'png', 'jpeg' or 'webp')`,
      )
    const quality = reader.int('quality', 100, (n) => (n < 0 || n > 100 ? 'value is not between 0 and 100' : undefined))
    Object.assign(settings, { omitBackground: reader.bool('omitBackground', false) })
    const optimizeForSpeed = reader.bool('optimizeForSpeed', false)
    const capture: Record<string, unknown> = { format, optimizeForSpeed, ...(format === 'png' ? {} : { quality }) }
    if (clip) capture.clip = { x: 0, y: 0, width, height, scale: 1 }
    output = { kind: 'screenshot', capture, width, height, clip }
  }
  const pdfSettings = kind === 'convert' ? readPostSettings(form, errors) : undefined
  if (source === 'url' && !field('url')) errors.push("form field 'url' is required")
  if (source !== 'url' && !files.has('index.html')) errors.push("form file 'index.html' is required")
  if (source === 'markdown' && ![...files.keys()].some((name) => name.toLowerCase().endsWith('.md')))
    errors.push('no form file found for extensions: [.md]')
  if (errors.length > 0) throw new FormError(`Invalid form data: ${errors.join('\n')}`)
  if (pdfSettings?.metadata && typeof metadataArguments(pdfSettings.metadata) === 'string')
    throw new FormError(METADATA_REFUSED)

  const served = new Map<string, { bytes: Uint8Array; type: string }>()
  for (const [name, file] of files)
    served.set(name, { bytes: new Uint8Array(await file.arrayBuffer()), type: contentTypeOf(name) })
  if (source === 'markdown')
    served.set('index.html', {
      bytes: new TextEncoder().encode(await markdownIndex(await files.get('index.html')!.text(), files)),
      type: 'text/html; charset=utf-8',
    })
  const url = source === 'url' ? field('url') : `${PAGE_ORIGIN}/index.html`
  if (source === 'url' && /^file:/i.test(url))
    throw new FormError(
      'file:// URLs are not accepted on this route. Use the /convert/html or /convert/markdown routes to render local HTML',
    )
  if (source === 'url' && !/^https?:\/\//i.test(url))
    throw new FormError(
      `Invalid form data: form field 'url' is invalid (got '${url}', resulting to the URL must be http or https)`,
    )
  if (source === 'url') {
    try {
      context.browser.checkUrl(url)
    } catch (error) {
      // Gotenberg answers a bare "Forbidden" and logs why.
      if (!(error instanceof UrlRefusedError)) throw error
      context.log({ level: 'warn', message: error.message, trace: context.trace, correlation_id: context.trace })
      throw new ChromiumPageError(403, 'Forbidden')
    }
  }
  const bytes = await context.browser.render({ url, trace: context.trace, files: served, settings, output })

  if (output.kind === 'screenshot') {
    const format = (output.capture.format as string) ?? 'png'
    const name = `${context.outputName || crypto.randomUUID()}.${format}`
    return { body: bytes, type: `image/${format}`, name }
  }
  const settingsAfter = pdfSettings!
  if (!needsPostProcessing(settingsAfter, form, 1) && !settingsAfter.pdfa && !settingsAfter.pdfua)
    return answerOf([{ name: 'index.pdf', bytes }], context.outputName, false)
  const folder = await context.pool.scratch('chromium-')
  try {
    const path = join(folder, 'page.pdf')
    await writeFile(path, bytes)
    // Split parts are named after the output (foo_0.pdf), as Gotenberg names them.
    let outputs: Output[] = [{ path, name: `${context.outputName || crypto.randomUUID()}.pdf` }]
    outputs = await postProcess(outputs, settingsAfter, form, folder, context.pool, context.timeoutMs, context.trace, {
      convertFormats: true,
    })
    const entries = await Promise.all(
      outputs.map(async (item) => ({ name: item.name, bytes: new Uint8Array(await readFile(item.path)) })),
    )
    return answerOf(entries, context.outputName, settingsAfter.split !== undefined)
  } finally {
    await rm(folder, { recursive: true, force: true })
  }
}

/** The steps after the page (split, PDF/A, metadata, …), read as the PDF engines routes read them. */
function readPostSettings(form: FormData, errors: string[]) {
  try {
    // The page is the document: the files check of the shared reader does not apply here.
    return readRouteSettings(form, true, ['pdf'], 'pdfengines')
  } catch (error) {
    if (error instanceof FormError && error.message.startsWith('Invalid form data: ')) {
      errors.push(...error.message.slice('Invalid form data: '.length).split('\n'))
      return undefined
    }
    throw error
  }
}
