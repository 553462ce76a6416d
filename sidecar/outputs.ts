// What a conversion's PDFs become before they are answered: Gotenberg's steps after the conversion (merge, split,
// watermark, stamp, rotate, flatten, PDF/A, embeds, metadata, Factur-X, encryption), and the answer's naming: one
// PDF, or a zip of several. Shared by the LibreOffice, PDF engines and Chromium routes.
import { randomUUID } from 'node:crypto'
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { OverlaySettings, RouteSettings } from './gotenberg-form.ts'
import type { LibreOfficePool } from './libreoffice.ts'
import {
  attachFacturX,
  attachFiles,
  encryptPdf,
  flattenPdf,
  mergePdfs,
  metadataArguments,
  overlayPdf,
  rotatePdf,
  splitPdf,
  textLayer,
  writeMetadata,
} from './pdf-post.ts'
import { zip } from './zip.ts'

/** A file name safe on disk and in a zip, at most 200 bytes, that keeps its extension (Gotenberg's issue 1500). */
export function safeName(name: string): string {
  const clean = (name.split(/[\\/]/).pop() ?? '').replace(/[^\p{L}\p{N} ._()-]/gu, '_') || 'document'
  const dot = clean.lastIndexOf('.')
  const extension = dot > 0 && clean.length - dot <= 16 ? clean.slice(dot) : ''
  let stem = [...clean.slice(0, clean.length - extension.length)].slice(0, 200)
  while (stem.length > 1 && Buffer.byteLength(stem.join('') + extension) > 200) stem = stem.slice(0, -1)
  return stem.join('') + extension
}

/** Names unique within one answer: a second "a.docx.pdf" becomes "a.docx (2).pdf". */
export function uniqueNames(names: readonly string[]): string[] {
  const seen = new Map<string, number>()
  return names.map((name) => {
    const count = (seen.get(name) ?? 0) + 1
    seen.set(name, count)
    return count === 1 ? name : name.replace(/\.pdf$/, ` (${count}).pdf`)
  })
}

export interface Output {
  path: string
  /** Its name in a zip, or as the only file without Gotenberg-Output-Filename. */
  name: string
}

/** Rewrites every output in place through a step that reads one file and writes another. */
async function eachOutput(outputs: Output[], step: (input: string, output: string) => Promise<void>): Promise<void> {
  for (const output of outputs) {
    const next = `${output.path}.next.pdf`
    await step(output.path, next)
    await rename(next, output.path)
  }
}

/** The one-page PDF a watermark or stamp puts on the pages, or undefined for text (made per output). */
async function overlayLayer(
  overlay: OverlaySettings,
  kind: string,
  form: FormData,
  folder: string,
  pool: LibreOfficePool,
  trace: string,
): Promise<string | undefined> {
  if (overlay.source === 'text') return undefined
  const file = [...form.getAll(kind), ...form.getAll('files')].find(
    (value): value is File => typeof value !== 'string' && value.name === overlay.expression,
  )!
  const bytes = new Uint8Array(await file.arrayBuffer())
  const path = join(folder, `${kind}-layer.pdf`)
  // An image becomes a page through LibreOffice Draw, as any document does.
  await writeFile(path, overlay.source === 'pdf' ? bytes : await pool.convert(safeName(file.name), bytes, {}, trace))
  return path
}

/** What the PDF engines routes add to the steps: their PDF/A and PDF/UA conversion (LibreOffice's, as Gotenberg's
 * libreoffice-pdfengine does it), which the LibreOffice route does while exporting. */
export interface PostSteps {
  readonly convertFormats?: boolean
}

/** Gotenberg's steps after the conversion, in its order: merge, split, rotate, watermark, stamp, flatten, PDF/A and
 * PDF/UA (PDF engines routes), embeds, metadata, Factur-X, encryption. */
export async function postProcess(
  outputs: Output[],
  settings: RouteSettings,
  form: FormData,
  folder: string,
  pool: LibreOfficePool,
  timeoutMs: number,
  trace: string,
  steps: PostSteps = {},
): Promise<Output[]> {
  if (settings.merge && outputs.length > 1) {
    const merged = join(folder, 'merged.pdf')
    await mergePdfs(
      outputs.map((output) => output.path),
      merged,
      timeoutMs,
    )
    outputs = [{ path: merged, name: `${randomUUID()}.pdf` }]
  }
  if (settings.split) {
    const split = settings.split
    const parts: Output[] = []
    for (const [i, output] of outputs.entries()) {
      const partFolder = join(folder, `split-${i}`)
      await mkdir(partFolder)
      const paths = await splitPdf(output.path, split, partFolder, output.name.replace(/\.pdf$/, ''), timeoutMs)
      parts.push(...paths.map((path) => ({ path, name: path.slice(partFolder.length + 1) })))
    }
    outputs = parts
  }
  if (settings.rotate) {
    const { angle, pages } = settings.rotate
    await eachOutput(outputs, (input, output) => rotatePdf(input, output, angle, pages, timeoutMs))
  }
  for (const [kind, overlay, where] of [
    ['watermark', settings.watermark, 'underlay'],
    ['stamp', settings.stamp, 'overlay'],
  ] as const) {
    if (!overlay) continue
    const layer = await overlayLayer(overlay, kind, form, folder, pool, trace)
    await eachOutput(outputs, async (input, output) => {
      const page = layer ?? join(folder, `${kind}-text.pdf`)
      if (!layer) await textLayer(input, page, overlay.expression, overlay.options, timeoutMs)
      await overlayPdf(input, output, page, where, overlay.pages, timeoutMs)
    })
  }
  if (settings.flatten) await eachOutput(outputs, (input, output) => flattenPdf(input, output, timeoutMs))
  if (steps.convertFormats && (settings.pdfa || settings.pdfua)) {
    const formats = { pdfa: settings.pdfa, pdfua: settings.pdfua }
    // LibreOffice opens the PDF in Draw and exports it again under the formats, as Gotenberg's LibreOffice engine does.
    await eachOutput(outputs, async (input, output) =>
      writeFile(output, await pool.convert('document.pdf', new Uint8Array(await readFile(input)), formats, trace)),
    )
  }
  const embeds = form.getAll('embeds').filter((value): value is File => typeof value !== 'string')
  if (embeds.length > 0) {
    const files = await Promise.all(
      embeds.map(async (file, i) => {
        const path = join(folder, `embed-${i}`)
        await writeFile(path, new Uint8Array(await file.arrayBuffer()))
        const name = safeName(file.name)
        return { path, name, ...settings.embedsMetadata?.[file.name] }
      }),
    )
    await eachOutput(outputs, (input, output) => attachFiles(input, output, files, folder, timeoutMs))
  }
  if (settings.metadata) {
    const args = metadataArguments(settings.metadata) as string[]
    for (const output of outputs) await writeMetadata(output.path, args, timeoutMs)
  }
  if (settings.facturx) {
    const invoice = join(folder, 'factur-x.xml')
    await writeFile(invoice, new Uint8Array(await (form.get('facturxXml') as File).arrayBuffer()))
    const facturx = settings.facturx
    await eachOutput(outputs, (input, output) => attachFacturX(input, output, invoice, facturx, folder, timeoutMs))
  }
  if (settings.userPassword || settings.ownerPassword) {
    const { userPassword = '', ownerPassword, permissions } = settings
    await eachOutput(outputs, (input, output) =>
      encryptPdf(input, output, userPassword, ownerPassword, permissions, folder, timeoutMs),
    )
  }
  return outputs
}

export interface Answer {
  readonly body: Uint8Array
  readonly type: string
  readonly name: string
}

/** Whether any of Gotenberg's steps after the conversion applies to this request. */
export function needsPostProcessing(settings: RouteSettings, form: FormData, documents: number): boolean {
  const { merge, split, rotate, watermark, stamp, flatten, metadata, facturx, userPassword, ownerPassword } = settings
  return (
    (merge && documents > 1) ||
    !!(split || rotate || watermark || stamp || flatten || metadata || facturx || userPassword || ownerPassword) ||
    form.getAll('embeds').some((value) => typeof value !== 'string')
  )
}

/** One PDF, or a zip of several, named as Gotenberg names them. */
export function answerOf(
  entries: ReadonlyArray<{ name: string; bytes: Uint8Array }>,
  given: string,
  isSplit: boolean,
): Answer {
  if (entries.length === 1) {
    // A split part keeps its own name when the client gave none, as Gotenberg's split answers do.
    const name = given ? `${safeName(given)}.pdf` : isSplit ? entries[0]!.name : `${randomUUID()}.pdf`
    return { body: entries[0]!.bytes, type: 'application/pdf', name }
  }
  return { body: zip(entries), type: 'application/zip', name: `${safeName(given || randomUUID())}.zip` }
}
