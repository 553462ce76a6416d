// gotenberg-js-client, the npm client of the design card, unmodified against our sidecar: it speaks Gotenberg 6
// (POST /convert/office, /convert/html, /convert/url, /convert/markdown and /merge; fields landscape, pageRanges,
// resultFilename, remoteURL, waitDelay in seconds, paper and margins in inches), which the sidecar serves as aliases
// of Gotenberg 8's LibreOffice, Chromium and PDF engines routes. Its README's examples are what the calls follow.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createServer, type Server } from 'node:http'
import {
  a4,
  convert,
  delay,
  gotenberg,
  html,
  landscape,
  markdown,
  merge,
  noMargins,
  office,
  pipe,
  please,
  range,
  set,
  to,
  url,
} from 'gotenberg-js-client'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { optionsFromEnv, startSidecar, type RunningSidecar } from '../../sidecar/server'

const scratch = mkdtempSync(join(tmpdir(), 'gotenberg-js-client-'))
const fixture = (name: string) => `file://${join(inject('officeDocumentsDir'), name)}`

async function bytesOf(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer))
  return Buffer.concat(chunks)
}

function pdfInfo(pdf: Buffer): string {
  const path = join(scratch, `${Math.random()}.pdf`)
  writeFileSync(path, pdf)
  return execFileSync('pdfinfo', [path], { encoding: 'utf8' })
}

const pageText = (pdf: Buffer) => {
  const path = join(scratch, `${Math.random()}.pdf`)
  writeFileSync(path, pdf)
  return execFileSync('pdftotext', ['-layout', path, '-'], { encoding: 'utf8' })
}

let sidecar: RunningSidecar
/** A page the url() call points at: loopback, which the sidecar reaches only because the test lists 127.0.0.1. */
let site: Server
let siteUrl = ''
beforeAll(async () => {
  sidecar = await startSidecar({
    ...optionsFromEnv({ SIDECAR_ALLOWED_PRIVATE_HOSTS: '127.0.0.1' }),
    port: 0,
    processes: 1,
  })
  site = createServer((request, response) => {
    if (request.url === '/style.css')
      return void response.writeHead(200, { 'content-type': 'text/css' }).end('h1 { color: red }')
    response
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      .end('<html><head><link rel="stylesheet" href="/style.css"></head><body><h1>Served page</h1></body></html>')
  })
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve))
  siteUrl = `http://127.0.0.1:${(site.address() as { port: number }).port}/`
})
afterAll(async () => {
  site?.close()
  await sidecar?.close()
})

describe('gotenberg-js-client against the sidecar', () => {
  it('converts an Office document', async () => {
    const toPdf = pipe(gotenberg(sidecar.url), convert, office, please)
    const pdf = await bytesOf(await toPdf(fixture('hello.docx')))
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-')
    expect(pdfInfo(pdf)).toMatch(/Pages:\s+1/)
  })

  it('applies its landscape and page-range modifiers', async () => {
    const turned = pipe(gotenberg(sidecar.url), convert, office, to(landscape), please)
    const [, width, height] = /Page size:\s+([\d.]+) x ([\d.]+)/.exec(
      pdfInfo(await bytesOf(await turned(fixture('hello.docx')))),
    )!
    expect(Number(width)).toBeGreaterThan(Number(height))
    const second = pipe(gotenberg(sidecar.url), convert, office, to(range('2')), please)
    expect(pdfInfo(await bytesOf(await second(fixture('slides.pptx'))))).toMatch(/Pages:\s+1/)
  })

  it('converts HTML with its assets (README: "Assets")', async () => {
    const toPdf = pipe(gotenberg(sidecar.url), convert, html, to(a4, noMargins), please)
    const pdf = await bytesOf(
      await toPdf({
        'index.html':
          '<html><head><link rel="stylesheet" href="style.css"></head><body><h1>Hello from HTML</h1><img src="dot.svg"></body></html>',
        'style.css': 'h1 { font-size: 40px }',
        'dot.svg': '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><circle cx="5" cy="5" r="5"/></svg>',
      } as never),
    )
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-')
    expect(pageText(pdf)).toContain('Hello from HTML')
    // a4: 8.27 × 11.7 inches, 595 × 842 points.
    expect(pdfInfo(pdf)).toMatch(/Page size:\s+59[45](\.\d+)? x 84[12]/)
  })

  it('converts a URL, with a delay', async () => {
    const toPdf = pipe(gotenberg(sidecar.url), convert, url, set(delay(0.2)), please)
    const pdf = await bytesOf(await toPdf(siteUrl))
    expect(pageText(pdf)).toContain('Served page')
  })

  it('converts Markdown through its index.html template', async () => {
    const toPdf = pipe(gotenberg(sidecar.url), convert, markdown, please)
    const pdf = await bytesOf(
      await toPdf({
        'index.html': '<html><body>{{ toHTML "notes.md" }}</body></html>',
        'notes.md': '# Release notes\n\n| Item | Qty |\n| --- | --- |\n| Widget | 2 |\n',
      } as never),
    )
    const text = pageText(pdf)
    expect(text).toContain('Release notes')
    expect(text).toMatch(/Widget\s+2/)
  })

  it('merges PDFs in the order of their names', async () => {
    const toPdf = pipe(gotenberg(sidecar.url), convert, html, please)
    const first = await bytesOf(await toPdf('<html><body><h1>First part</h1></body></html>'))
    const second = await bytesOf(await toPdf('<html><body><h1>Second part</h1></body></html>'))
    const join2 = pipe(gotenberg(sidecar.url), merge, please)
    const merged = await bytesOf(await join2({ '2.pdf': second, '1.pdf': first } as never))
    expect(pdfInfo(merged)).toMatch(/Pages:\s+2/)
    expect(pageText(merged)).toMatch(/First part[\s\S]*Second part/)
  })

  it("surfaces the sidecar's refusal as an error", async () => {
    const toPdf = pipe(gotenberg(sidecar.url), convert, office, please)
    await expect(toPdf(['broken.docx', Buffer.from('PK\u0003\u0004 not a document')] as never)).rejects.toThrow(/400/)
  })
})
