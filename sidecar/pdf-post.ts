// The steps Gotenberg runs on LibreOffice's PDFs, done with Debian's tools: qpdf merges, splits, rotates,
// overlays (watermark underneath, stamp on top), flattens, attaches files and encrypts; exiftool writes the
// metadata. Every step reads and writes files in one request's folder; no argument is a shell string.
import { spawn } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import type { OverlayStyle, Permissions, SplitSettings } from './gotenberg-form.ts'
import { toolSandboxed } from './sandbox.ts'

/** A tool refused the PDF (a damaged watermark file, say) or failed: the message names the step. */
export class PostProcessError extends Error {}

/**
 * The folders a tool's arguments name: bare absolute paths and qpdf's `@argument-file` (never an option's value: an
 * exiftool tag value that names a path is not a folder to open up).
 */
export function argumentFolders(args: readonly string[]): string[] {
  return args.filter((arg) => arg.startsWith('/') || arg.startsWith('@/')).map((arg) => dirname(arg.replace(/^@/, '')))
}

/**
 * Runs a tool; rejects with its last stderr lines. qpdf's exit 3 means "succeeded with warnings". Sandboxed in
 * bubblewrap (sidecar/sandbox.ts) with only its arguments' folders, unless SIDECAR_SANDBOX=none (read as server.ts
 * reads it: bwrap when unset).
 */
function run(
  command: string,
  args: readonly string[],
  timeoutMs: number,
  okCodes: readonly number[] = [0],
): Promise<string> {
  const isSandboxed = process.env.SIDECAR_SANDBOX !== 'none'
  const [program, ...programArgs] = isSandboxed
    ? toolSandboxed(argumentFolders(args), [command, ...args])
    : [command, ...args]
  return new Promise((resolve, reject) => {
    const child = spawn(program!, programArgs, { stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout!.on('data', (chunk) => (stdout = (stdout + chunk).slice(-64_000)))
    child.stderr!.on('data', (chunk) => (stderr = (stderr + chunk).slice(-2000)))
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.on('error', (error) => {
      clearTimeout(timer)
      reject(new PostProcessError(`${command} could not start: ${error.message}`))
    })
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      if (code !== null && okCodes.includes(code)) resolve(stdout)
      else
        reject(
          new PostProcessError(
            `${command} failed (${signal ?? `exit ${code}`}): ${stderr.trim().split('\n').slice(-2).join(' ')}`,
          ),
        )
    })
  })
}

const qpdf = (args: readonly string[], timeoutMs: number) => run('qpdf', args, timeoutMs, [0, 3])

export async function pageCount(pdf: string, timeoutMs: number): Promise<number> {
  return Number((await qpdf(['--show-npages', pdf], timeoutMs)).trim())
}

/** The first page's size in points. */
async function pageSize(pdf: string, timeoutMs: number): Promise<[number, number]> {
  const info = await run('pdfinfo', ['-f', '1', '-l', '1', pdf], timeoutMs)
  const match = /Page\s+1 size:\s+([\d.]+) x ([\d.]+)/.exec(info) ?? /Page size:\s+([\d.]+) x ([\d.]+)/.exec(info)
  return match ? [Number(match[1]), Number(match[2])] : [595.28, 841.89]
}

/** Joins PDFs in the given order. The first is the primary input, not --empty: its document-level data, the XMP
 * that declares PDF/A and PDF/UA among it, carries over to the merged PDF. */
export async function mergePdfs(inputs: readonly string[], output: string, timeoutMs: number): Promise<void> {
  await qpdf([inputs[0]!, '--pages', '.', ...inputs.slice(1), '--', output], timeoutMs)
}

/** Each page of a qpdf page-range list ("2-z,5") of a document of `count` pages. */
function expandRanges(ranges: string, count: number): number[] {
  const pages: number[] = []
  for (const part of ranges.split(',')) {
    const [from, to] = part.split('-')
    const start = from === 'z' ? count : Number(from)
    const end = to === undefined ? start : to === 'z' ? count : Number(to)
    for (let page = start; page <= Math.min(end, count); page++) pages.push(page)
  }
  return pages
}

/** Splits one PDF as Gotenberg does: `<name>_<i>.pdf` from 0, or one `<name>.pdf` when unified; the paths written. */
export async function splitPdf(
  input: string,
  split: SplitSettings,
  folder: string,
  name: string,
  timeoutMs: number,
): Promise<string[]> {
  const count = await pageCount(input, timeoutMs)
  let parts: string[]
  if (split.mode === 'intervals') {
    parts = []
    for (let start = 1; start <= count; start += split.span)
      parts.push(`${start}-${Math.min(count, start + split.span - 1)}`)
  } else {
    const pages = expandRanges(split.ranges, count)
    if (pages.length === 0)
      throw new PostProcessError(`the page ranges '${split.span}' select no page of a ${count}-page document`)
    parts = split.unify ? [pages.join(',')] : pages.map(String)
  }
  if (split.mode === 'intervals' && split.unify) parts = [`1-${count}`]
  const outputs: string[] = []
  for (const [i, pages] of parts.entries()) {
    const output = join(folder, parts.length === 1 && split.unify ? `${name}.pdf` : `${name}_${i}.pdf`)
    await qpdf([input, '--pages', '.', pages, '--', output], timeoutMs)
    outputs.push(output)
  }
  return outputs
}

export async function rotatePdf(
  input: string,
  output: string,
  angle: number,
  pages: string | undefined,
  timeoutMs: number,
): Promise<void> {
  await qpdf([input, output, `--rotate=+${angle}:${pages ?? '1-z'}`], timeoutMs)
}

/** Puts the first page of `layer` under (watermark) or over (stamp) the chosen pages. */
export async function overlayPdf(
  input: string,
  output: string,
  layer: string,
  where: 'underlay' | 'overlay',
  pages: string | undefined,
  timeoutMs: number,
): Promise<void> {
  await qpdf([input, output, `--${where}`, layer, `--to=${pages ?? '1-z'}`, '--from=', '--repeat=1', '--'], timeoutMs)
}

export async function flattenPdf(input: string, output: string, timeoutMs: number): Promise<void> {
  await qpdf([input, output, '--generate-appearances', '--flatten-annotations=all'], timeoutMs)
}

export interface Attachment {
  readonly path: string
  readonly name: string
  readonly mimeType?: string
  /** PDF/A-3's /AFRelationship (Data, Source, Alternative, Supplement, Unspecified). */
  readonly relationship?: string
}

const RELATIONSHIPS = [
  'Source',
  'Data',
  'Alternative',
  'Supplement',
  'EncryptedPayload',
  'FormData',
  'Schema',
  'Unspecified',
]

/** Attaches files; those given a relationship are marked with it and listed in the catalog's /AF, as PDF/A-3 asks. */
export async function attachFiles(
  input: string,
  output: string,
  files: readonly Attachment[],
  folder: string,
  timeoutMs: number,
): Promise<void> {
  for (const file of files) {
    if (file.relationship && !RELATIONSHIPS.includes(file.relationship))
      throw new PostProcessError(
        `the relationship '${file.relationship}' of '${file.name}' is not one of ${RELATIONSHIPS.join(', ')}`,
      )
    if (file.mimeType && !/^[\w.+-]+\/[\w.+-]+$/.test(file.mimeType))
      throw new PostProcessError(`the MIME type '${file.mimeType}' of '${file.name}' is not a type/subtype`)
  }
  const related = files.filter((file) => file.relationship)
  const attached = related.length > 0 ? join(folder, 'attached.pdf') : output
  const args = [input, attached]
  for (const file of files)
    args.push(
      '--add-attachment',
      file.path,
      `--key=${file.name}`,
      `--filename=${file.name}`,
      ...(file.mimeType ? [`--mimetype=${file.mimeType}`] : []),
      '--replace',
      '--',
    )
  await qpdf(args, timeoutMs)
  if (related.length === 0) return
  const { header, objects } = await pdfObjects(attached, timeoutMs)
  const root = (objects.trailer?.value as Record<string, string> | undefined)?.['/Root']
  const catalog = root ? (objects[`obj:${root}`]?.value as Record<string, unknown> | undefined) : undefined
  const namesEntry = catalog?.['/Names']
  const names = (typeof namesEntry === 'string' ? objects[`obj:${namesEntry}`]?.value : namesEntry) as
    | Record<string, unknown>
    | undefined
  const update: Record<string, unknown> = {}
  const af: string[] = [
    ...((catalog?.['/AF'] as unknown[]) ?? []).filter((ref): ref is string => typeof ref === 'string'),
  ]
  for (const file of related) {
    const spec = findInNameTree(objects, names?.['/EmbeddedFiles'], file.name)
    if (!spec) continue
    update[`obj:${spec}`] = {
      value: {
        ...(objects[`obj:${spec}`]?.value as Record<string, unknown>),
        '/AFRelationship': `/${file.relationship}`,
      },
    }
    if (!af.includes(spec)) af.push(spec)
  }
  if (!root || !catalog) throw new PostProcessError('the PDF has no catalog to list its associated files in')
  update[`obj:${root}`] = { value: { ...catalog, '/AF': af } }
  const updateFile = join(folder, 'attachments-update.json')
  await writeFile(updateFile, JSON.stringify({ qpdf: [header, update] }))
  await qpdf([attached, `--update-from-json=${updateFile}`, output], timeoutMs)
}

/** The PDF/A part a PDF's XMP declares (1, 2, 3), or undefined. */
export async function declaredPdfAPart(pdf: string, timeoutMs: number): Promise<number | undefined> {
  const part = (await run('exiftool', ['-config', '', '-s3', '-XMP-pdfaid:Part', '--', pdf], timeoutMs, [0, 1])).trim()
  return part ? Number(part) : undefined
}

/** Tags of exiftool's JSON that describe the file on disk or the tool, not the PDF (Gotenberg's systemTags). */
const SYSTEM_TAGS = [
  'SourceFile',
  'FileName',
  'Directory',
  'FileSize',
  'FileModifyDate',
  'FileAccessDate',
  'FileInodeChangeDate',
  'FilePermissions',
  'ExifToolVersion',
  'Error',
  'Warning',
]

/** A PDF's metadata as Gotenberg's metadata/read answers it: exiftool's JSON without the file system's tags. */
export async function readMetadata(pdf: string, timeoutMs: number): Promise<Record<string, unknown>> {
  const [entry] = JSON.parse(await run('exiftool', ['-config', '', '-j', '--', pdf], timeoutMs, [0, 1])) as Record<
    string,
    unknown
  >[]
  if (!entry) throw new PostProcessError('exiftool returned no metadata')
  if (typeof entry.Error === 'string' && entry.Error)
    throw new PostProcessError(`exiftool could not read the PDF: ${entry.Error}`)
  for (const tag of SYSTEM_TAGS) delete entry[tag]
  return entry
}

/** qpdf's restriction flags for each of Gotenberg's permissions that is refused. */
const QPDF_RESTRICTIONS: Readonly<Record<keyof Permissions, string>> = {
  allowPrinting: '--print=none',
  allowCopying: '--extract=n',
  allowModifying: '--modify=none',
  allowAnnotating: '--annotate=n',
  allowFillingForms: '--form=n',
  allowAssembling: '--assemble=n',
}

/**
 * qpdf with 256-bit AES; the passwords travel in an argument file (mode 0600), not on a command line `ps` shows.
 * An owner password alone leaves the PDF readable by anyone, with the refused permissions enforced.
 */
export async function encryptPdf(
  input: string,
  output: string,
  userPassword: string,
  ownerPassword: string | undefined,
  permissions: Permissions,
  folder: string,
  timeoutMs: number,
): Promise<void> {
  const argsFile = join(folder, 'encrypt.args')
  const restrictions = Object.entries(QPDF_RESTRICTIONS)
    .filter(([name]) => !permissions[name as keyof Permissions])
    .map(([, flag]) => flag)
  // Without an owner password anyone could lift the restrictions: the user password then serves as both.
  await writeFile(
    argsFile,
    [input, output, '--encrypt', userPassword, ownerPassword ?? userPassword, '256', ...restrictions, '--'].join('\n'),
    { mode: 0o600 },
  )
  await qpdf([`@${argsFile}`], timeoutMs)
}

/** Gotenberg's answer to metadata it will not write. */
export const METADATA_REFUSED =
  'The requested metadata could not be written; ensure values are valid and free of control characters.'

/**
 * Tags exiftool must never write: writing them renames, moves or links the file on disk, or makes exiftool open the
 * file they name (Geotag reads a GPS track log, and so do Geosync and Geotime with it). Any tag ending in
 * "filename" is refused too (FileName, OriginalFileName, …): a value there is a path to someone.
 */
const FORBIDDEN_TAGS = [
  'filename',
  'directory',
  'hardlink',
  'symlink',
  'testname',
  'filepermissions',
  'filemodifydate',
  'filecreatedate',
  'fileaccessdate',
  'fileinodechangedate',
  'fileuserid',
  'filegroupid',
  'geotag',
  'geosync',
  'geotime',
]

/** The exiftool arguments for Gotenberg's metadata object, or the reason a key or value is refused. Tags that would
 * rename, move or link the file, or make exiftool open one, are refused (Gotenberg drops them without a word). */
export function metadataArguments(metadata: Record<string, unknown>): string[] | string {
  const args: string[] = []
  for (const [key, value] of Object.entries(metadata)) {
    const tag = key.split(':').pop()!.toLowerCase()
    const group = key.includes(':') ? key.split(':')[0]!.toLowerCase() : ''
    if (FORBIDDEN_TAGS.includes(tag) || tag.endsWith('filename') || group === 'file' || group === 'system')
      return `the key '${key}' cannot be written`
    if (!/^[A-Za-z][A-Za-z0-9_-]*(:[A-Za-z][A-Za-z0-9_-]*)?$/.test(key)) return `the key '${key}' is not a tag name`
    const values = Array.isArray(value) ? value : [value]
    for (const item of values) {
      if (typeof item !== 'string' && typeof item !== 'number' && typeof item !== 'boolean')
        return `the value of '${key}' is not a string, number, boolean or list of them`
      let text = String(item)
      if (/[\r\n\0]/.test(text)) return `the value of '${key}' contains a control character`
      // ISO 8601 dates (Gotenberg's examples) in exiftool's own date syntax.
      if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}/.test(text))
        text = text.replace(/^(\d{4})-(\d{2})-(\d{2})T/, '$1:$2:$3 ')
      args.push(`-${key}${Array.isArray(value) ? '+' : ''}=${text}`)
    }
  }
  return args
}

export async function writeMetadata(pdf: string, args: readonly string[], timeoutMs: number): Promise<void> {
  if (args.length === 0) return
  // -m: a tag exiftool cannot write (PDFVersion, say) is a warning, not a failure, as in Gotenberg.
  await run('exiftool', ['-config', '', '-m', '-q', '-q', '-overwrite_original', ...args, '--', pdf], timeoutMs)
}

/** A one-page PDF the size of `like`'s first page with `text` centred and turned (Helvetica-family, WinAnsi). */
export async function textLayer(
  like: string,
  output: string,
  text: string,
  style: OverlayStyle,
  timeoutMs: number,
): Promise<void> {
  const [width, height] = await pageSize(like, timeoutMs)
  // Standard 14 fonts read one byte per character: characters outside Latin-1 become "?".
  const latin1 = [...text].map((char) => (char.charCodeAt(0) < 256 && char.length === 1 ? char : '?')).join('')
  const escaped = latin1.replace(/[\\()]/g, (char) => `\\${char}`).replace(/[\r\n]/g, ' ')
  const averageWidth = style.font.startsWith('Courier') ? 0.6 : 0.55
  const points = !style.scale
    ? style.points
    : style.scale.isAbsolute
      ? 24 * style.scale.factor
      : (style.scale.factor * width) / Math.max(1, latin1.length * averageWidth)
  style = { ...style, points }
  const textWidth = latin1.length * style.points * averageWidth
  const radians = (style.rotation * Math.PI) / 180
  const [cos, sin] = [Math.cos(radians), Math.sin(radians)]
  // The text's centre on the page's centre: start point = centre - R·(w/2, size/3).
  const x = width / 2 - (cos * textWidth) / 2 + (sin * style.points) / 3
  const y = height / 2 - (sin * textWidth) / 2 - (cos * style.points) / 3
  const f = (n: number) => n.toFixed(4)
  const content = `q /GS1 gs ${style.color.map(f).join(' ')} rg BT /F1 ${f(style.points)} Tf ${f(cos)} ${f(sin)} ${f(-sin)} ${f(cos)} ${f(x)} ${f(y)} Tm (${escaped}) Tj ET Q`
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${f(width)} ${f(height)}] /Resources << /Font << /F1 4 0 R >> /ExtGState << /GS1 5 0 R >> >> /Contents 6 0 R >>`,
    `<< /Type /Font /Subtype /Type1 /BaseFont /${style.font} /Encoding /WinAnsiEncoding >>`,
    `<< /Type /ExtGState /ca ${f(style.opacity)} /CA ${f(style.opacity)} >>`,
    `<< /Length ${Buffer.byteLength(content, 'latin1')} >>\nstream\n${content}\nendstream`,
  ]
  let body = '%PDF-1.7\n'
  const offsets: number[] = []
  for (const [i, object] of objects.entries()) {
    offsets.push(Buffer.byteLength(body, 'latin1'))
    body += `${i + 1} 0 obj\n${object}\nendobj\n`
  }
  const xref = Buffer.byteLength(body, 'latin1')
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`
  await writeFile(output, Buffer.from(body, 'latin1'))
}

export interface FacturXSettings {
  readonly conformanceLevel: string
  readonly documentType: string
}

const FX_NAMESPACE = 'urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#'
const FX_PROPERTIES: ReadonlyArray<[string, string]> = [
  ['DocumentFileName', 'The name of the embedded XML document'],
  ['DocumentType', 'The type of the hybrid document in capital letters, e.g. INVOICE or ORDER'],
  ['Version', 'The actual version of the standard applying to the embedded XML document'],
  ['ConformanceLevel', 'The conformance level of the embedded XML document'],
]

/** The Factur-X properties and, for PDF/A, their extension schema, added to an XMP packet. */
function facturXmp(xmp: string, settings: FacturXSettings): string {
  const xmlText = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;')
  const values = `<rdf:Description rdf:about="" xmlns:fx="${FX_NAMESPACE}"><fx:DocumentType>${xmlText(settings.documentType)}</fx:DocumentType><fx:DocumentFileName>factur-x.xml</fx:DocumentFileName><fx:Version>1.0</fx:Version><fx:ConformanceLevel>${xmlText(settings.conformanceLevel)}</fx:ConformanceLevel></rdf:Description>`
  const properties = FX_PROPERTIES.map(
    ([name, description]) =>
      `<rdf:li rdf:parseType="Resource"><pdfaProperty:name>${name}</pdfaProperty:name><pdfaProperty:valueType>Text</pdfaProperty:valueType><pdfaProperty:category>external</pdfaProperty:category><pdfaProperty:description>${description}</pdfaProperty:description></rdf:li>`,
  ).join('')
  const schema = `<rdf:li rdf:parseType="Resource" xmlns:pdfaSchema="http://www.aiim.org/pdfa/ns/schema#" xmlns:pdfaProperty="http://www.aiim.org/pdfa/ns/property#"><pdfaSchema:schema>Factur-X PDFA Extension Schema</pdfaSchema:schema><pdfaSchema:namespaceURI>${FX_NAMESPACE}</pdfaSchema:namespaceURI><pdfaSchema:prefix>fx</pdfaSchema:prefix><pdfaSchema:property><rdf:Seq>${properties}</rdf:Seq></pdfaSchema:property></rdf:li>`
  // One pdfaExtension:schemas property per packet: join an existing bag rather than declare a second one.
  const bag = /<pdfaExtension:schemas>\s*<rdf:Bag>/.exec(xmp)
  if (bag) {
    const at = bag.index + bag[0].length
    return xmp.slice(0, at) + schema + xmp.slice(at).replace('</rdf:RDF>', `${values}</rdf:RDF>`)
  }
  const extension = `<rdf:Description rdf:about="" xmlns:pdfaExtension="http://www.aiim.org/pdfa/ns/extension/"><pdfaExtension:schemas><rdf:Bag>${schema}</rdf:Bag></pdfaExtension:schemas></rdf:Description>`
  return xmp.replace('</rdf:RDF>', `${values}${extension}</rdf:RDF>`)
}

type QpdfObjects = Record<string, { value?: unknown; stream?: { dict: Record<string, unknown>; data?: string } }>

/** qpdf's JSON (version 2) of a PDF's objects; stream data only for the objects named. */
async function pdfObjects(
  pdf: string,
  timeoutMs: number,
  withData: readonly string[] = [],
): Promise<{ header: unknown; objects: QpdfObjects }> {
  const args = [
    '--json-output=2',
    '--json-key=qpdf',
    `--json-stream-data=${withData.length > 0 ? 'inline' : 'none'}`,
    ...withData.map((ref) => `--json-object=${ref.replace(/ 0 R$/, '')}`),
    pdf,
  ]
  const [header, objects] = JSON.parse(await qpdf(args, timeoutMs)).qpdf
  return { header, objects: (objects ?? {}) as QpdfObjects }
}

/** The file specification a name tree maps `key` to (qpdf writes Factur-X's tree flat; /Kids are walked too). */
function findInNameTree(objects: QpdfObjects, node: unknown, key: string, depth = 0): string | undefined {
  const dict = (typeof node === 'string' ? objects[`obj:${node}`]?.value : node) as Record<string, unknown> | undefined
  if (!dict || depth > 32) return undefined
  const names = (dict['/Names'] ?? []) as unknown[]
  for (let i = 0; i + 1 < names.length; i += 2)
    if (names[i] === `u:${key}` || names[i] === `b:${Buffer.from(key).toString('hex')}`) return names[i + 1] as string
  for (const kid of (dict['/Kids'] ?? []) as unknown[]) {
    const found = findInNameTree(objects, kid, key, depth + 1)
    if (found) return found
  }
  return undefined
}

/**
 * Factur-X / ZUGFeRD on a PDF/A-3 PDF. The invoice XML is attached as factur-x.xml (text/xml). Its file
 * specification is marked /AFRelationship /Alternative and listed in the catalog's /AF array. The XMP gets the
 * fx: properties with their PDF/A extension schema. qpdf attaches; qpdf's JSON update writes the rest.
 */
export async function attachFacturX(
  input: string,
  output: string,
  xml: string,
  settings: FacturXSettings,
  folder: string,
  timeoutMs: number,
): Promise<void> {
  const attached = join(folder, 'facturx-attached.pdf')
  const now = `D:${new Date().toISOString().replace(/[-:T]/g, '').slice(0, 14)}Z`
  await qpdf(
    [
      input,
      '--add-attachment',
      xml,
      '--key=factur-x.xml',
      '--filename=factur-x.xml',
      '--mimetype=text/xml',
      '--description=Factur-X invoice',
      `--creationdate=${now}`,
      `--moddate=${now}`,
      '--replace',
      '--',
      attached,
    ],
    timeoutMs,
  )
  const { header, objects } = await pdfObjects(attached, timeoutMs)
  const root = (objects.trailer?.value as Record<string, string> | undefined)?.['/Root']
  const catalog = root ? (objects[`obj:${root}`]?.value as Record<string, unknown> | undefined) : undefined
  const namesEntry = catalog?.['/Names']
  const names = (typeof namesEntry === 'string' ? objects[`obj:${namesEntry}`]?.value : namesEntry) as
    | Record<string, unknown>
    | undefined
  const tree = names?.['/EmbeddedFiles']
  const fileSpec = findInNameTree(objects, tree, 'factur-x.xml')
  const metadata = catalog?.['/Metadata'] as string | undefined
  if (!root || !catalog || !fileSpec || !metadata)
    throw new PostProcessError('Factur-X: the PDF has no XMP metadata or attachment to mark (PDF/A-3b is required)')
  const xmpObject = (await pdfObjects(attached, timeoutMs, [metadata])).objects[`obj:${metadata}`]
  const xmp = Buffer.from(xmpObject?.stream?.data ?? '', 'base64').toString('utf8')
  if (!xmp.includes('</rdf:RDF>') || xmpObject?.stream?.dict['/Filter'] !== undefined)
    throw new PostProcessError("Factur-X: the PDF's XMP metadata cannot be read")
  const specValue = objects[`obj:${fileSpec}`]?.value as Record<string, unknown>
  const update = {
    qpdf: [
      header,
      {
        [`obj:${root}`]: { value: { ...catalog, '/AF': [fileSpec] } },
        [`obj:${fileSpec}`]: { value: { ...specValue, '/AFRelationship': '/Alternative' } },
        [`obj:${metadata}`]: {
          stream: {
            dict: { '/Type': '/Metadata', '/Subtype': '/XML' },
            data: Buffer.from(facturXmp(xmp, settings)).toString('base64'),
          },
        },
      },
    ],
  }
  const updateFile = join(folder, 'facturx-update.json')
  await writeFile(updateFile, JSON.stringify(update))
  await qpdf([attached, `--update-from-json=${updateFile}`, output], timeoutMs)
}
