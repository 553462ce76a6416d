// The steps Gotenberg runs on LibreOffice's PDFs, done with Debian's tools: qpdf merges, splits, rotates,
// overlays (watermark underneath, stamp on top), flattens, attaches files and encrypts; exiftool writes the
// metadata. Every step reads and writes files in one request's folder; no argument is a shell string.
import { spawn } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { OverlayStyle, SplitSettings } from './gotenberg-form.ts'

/** A tool refused the PDF (a damaged watermark file, say) or failed: the message names the step. */
export class PostProcessError extends Error {}

/** Runs a tool; rejects with its last stderr lines. qpdf's exit 3 means "succeeded with warnings". */
function run(command: string, args: readonly string[], timeoutMs: number, okCodes: readonly number[] = [0]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] })
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
      else reject(new PostProcessError(`${command} failed (${signal ?? `exit ${code}`}): ${stderr.trim().split('\n').slice(-2).join(' ')}`))
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
    const start = Number(from)
    const end = to === undefined ? start : to === 'z' ? count : Number(to)
    for (let page = start; page <= Math.min(end, count); page++) pages.push(page)
  }
  return pages
}

/** Splits one PDF as Gotenberg does: `<name>_<i>.pdf` from 0, or one `<name>.pdf` when unified; the paths written. */
export async function splitPdf(input: string, split: SplitSettings, folder: string, name: string, timeoutMs: number): Promise<string[]> {
  const count = await pageCount(input, timeoutMs)
  let parts: string[]
  if (split.mode === 'intervals') {
    parts = []
    for (let start = 1; start <= count; start += split.span) parts.push(`${start}-${Math.min(count, start + split.span - 1)}`)
  } else {
    const pages = expandRanges(split.ranges, count)
    if (pages.length === 0) throw new PostProcessError(`the page ranges '${split.span}' select no page of a ${count}-page document`)
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

export async function rotatePdf(input: string, output: string, angle: number, pages: string | undefined, timeoutMs: number): Promise<void> {
  await qpdf([input, output, `--rotate=+${angle}:${pages ?? '1-z'}`], timeoutMs)
}

/** Puts the first page of `layer` under (watermark) or over (stamp) the chosen pages. */
export async function overlayPdf(input: string, output: string, layer: string, where: 'underlay' | 'overlay', pages: string | undefined, timeoutMs: number): Promise<void> {
  await qpdf([input, output, `--${where}`, layer, `--to=${pages ?? '1-z'}`, '--from=', '--repeat=1', '--'], timeoutMs)
}

export async function flattenPdf(input: string, output: string, timeoutMs: number): Promise<void> {
  await qpdf([input, output, '--generate-appearances', '--flatten-annotations=all'], timeoutMs)
}

export async function attachFiles(input: string, output: string, files: readonly { path: string; name: string }[], timeoutMs: number): Promise<void> {
  const args = [input, output]
  for (const file of files) args.push('--add-attachment', file.path, `--key=${file.name}`, `--filename=${file.name}`, '--replace', '--')
  await qpdf(args, timeoutMs)
}

/** qpdf with 256-bit AES; the passwords travel in an argument file (mode 0600), not on a command line `ps` shows. */
export async function encryptPdf(input: string, output: string, userPassword: string, ownerPassword: string | undefined, folder: string, timeoutMs: number): Promise<void> {
  const argsFile = join(folder, 'encrypt.args')
  // Without an owner password anyone could lift the restrictions: the user password then serves as both.
  await writeFile(argsFile, [input, output, '--encrypt', userPassword, ownerPassword ?? userPassword, '256', '--'].join('\n'), { mode: 0o600 })
  await qpdf([`@${argsFile}`], timeoutMs)
}

/** Tags exiftool must never write: writing them renames, moves or links the file on disk. */
const FORBIDDEN_TAGS = ['filename', 'directory', 'hardlink', 'symlink', 'testname', 'filepermissions', 'filemodifydate', 'filecreatedate', 'fileaccessdate', 'fileinodechangedate', 'fileuserid', 'filegroupid']

/** The exiftool arguments for Gotenberg's metadata object, or the reason a key or value is refused. */
export function metadataArguments(metadata: Record<string, unknown>): string[] | string {
  const args: string[] = []
  for (const [key, value] of Object.entries(metadata)) {
    if (!/^[A-Za-z][A-Za-z0-9_-]*(:[A-Za-z][A-Za-z0-9_-]*)?$/.test(key)) return `the key '${key}' is not a tag name`
    const tag = key.split(':').pop()!.toLowerCase()
    const group = key.includes(':') ? key.split(':')[0]!.toLowerCase() : ''
    if (FORBIDDEN_TAGS.includes(tag) || group === 'file' || group === 'system') return `the key '${key}' cannot be written`
    const values = Array.isArray(value) ? value : [value]
    for (const item of values) {
      if (typeof item !== 'string' && typeof item !== 'number' && typeof item !== 'boolean') return `the value of '${key}' is not a string, number, boolean or list of them`
      let text = String(item)
      // ISO 8601 dates (Gotenberg's examples) in exiftool's own date syntax.
      if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}/.test(text)) text = text.replace(/^(\d{4})-(\d{2})-(\d{2})T/, '$1:$2:$3 ')
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
export async function textLayer(like: string, output: string, text: string, style: OverlayStyle, timeoutMs: number): Promise<void> {
  const [width, height] = await pageSize(like, timeoutMs)
  // Standard 14 fonts read one byte per character: characters outside Latin-1 become "?".
  const latin1 = [...text].map((char) => (char.charCodeAt(0) < 256 && char.length === 1 ? char : '?')).join('')
  const escaped = latin1.replace(/[\\()]/g, (char) => `\\${char}`).replace(/[\r\n]/g, ' ')
  const averageWidth = style.font.startsWith('Courier') ? 0.6 : 0.55
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
