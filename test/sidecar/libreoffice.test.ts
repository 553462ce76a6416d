// The sidecar's LibreOffice for real: the sandbox against a document that links a URL and a local file (the
// Gotenberg SSRF class), zip bombs, passwords, landscape, presentations. What happens to the processes themselves
// (a timeout, a kill mid-conversion, recycling) is in libreoffice-processes.test.ts, a file of its own so that the
// two run side by side.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningSidecar } from '../../sidecar/server'
import { docx, linkedPicture } from '../support/linking-documents'
import { convert, fixture, start } from '../support/sidecar-runs'

const scratch = mkdtempSync(join(tmpdir(), 'sidecar-lo-test-'))

function pdfFacts(bytes: ArrayBuffer) {
  const path = join(scratch, `${Math.random()}.pdf`)
  writeFileSync(path, Buffer.from(bytes))
  const info = execFileSync('pdfinfo', [path], { encoding: 'utf8' })
  const [width, height] = (/Page size:\s+([\d.]+) x ([\d.]+)/.exec(info) ?? []).slice(1).map(Number)
  return {
    pages: Number(/Pages:\s+(\d+)/.exec(info)?.[1]),
    tagged: /Tagged:\s+yes/.test(info),
    width: width!,
    height: height!,
    text: execFileSync('pdftotext', [path, '-'], { encoding: 'utf8' }),
    images: execFileSync('pdfimages', ['-list', path], { encoding: 'utf8' }).trim().split('\n').length - 2,
  }
}

// One LibreOffice (sandboxed, as by default) for every test below that needs nothing else of it: starting one
// costs seconds (33 s under stress-ng). Servers with their own options share its pool; tests that need another
// pool (no sandbox) start their own.
let shared: RunningSidecar
beforeAll(async () => {
  shared = await start()
})
afterAll(() => shared?.close())

const field = (instruction: string, cached: string) =>
  `<w:p><w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText xml:space="preserve"> ${instruction} </w:instrText></w:r><w:r><w:fldChar w:fldCharType="separate"/></w:r><w:r><w:t>${cached}</w:t></w:r><w:r><w:fldChar w:fldCharType="end"/></w:r></w:p>`

/** A 1×1 PNG. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC',
  'base64',
)

describe('sidecar: a document cannot reach the network or local files', () => {
  const hits: string[] = []
  const canary = createServer((request, response) => {
    hits.push(request.url ?? '')
    response.writeHead(200, { 'content-type': 'image/png' }).end(PNG)
  })
  let document: Uint8Array

  beforeAll(async () => {
    await new Promise<void>((resolve) => canary.listen(0, '127.0.0.1', resolve))
    const { port } = canary.address() as AddressInfo
    const secrets = mkdtempSync(join(tmpdir(), 'sidecar-secret-'))
    writeFileSync(join(secrets, 'secret.png'), PNG)
    writeFileSync(join(secrets, 'secret.txt'), 'TOP-SECRET-LOCAL-FILE')
    document = docx(
      `<w:p><w:r><w:t>Canary document</w:t></w:r></w:p>${linkedPicture('rIdRemote', 1)}${linkedPicture('rIdLocal', 2)}` +
        field(`INCLUDETEXT "${join(secrets, 'secret.txt')}"`, 'cached local') +
        field(`INCLUDETEXT "http://127.0.0.1:${port}/include.txt"`, 'cached remote') +
        field(`INCLUDEPICTURE "http://127.0.0.1:${port}/include.png" \\d`, 'cached picture'),
      `<Relationship Id="rIdRemote" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" Target="http://127.0.0.1:${port}/linked.png" TargetMode="External"/>` +
        `<Relationship Id="rIdLocal" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" Target="file://${join(secrets, 'secret.png')}" TargetMode="External"/>`,
    )
  })
  afterAll(() => new Promise<void>((resolve) => canary.close(() => resolve())))

  it('converts it without one request to the canary and without embedding the local files', async () => {
    const res = await convert(shared, 'canary.docx', document)
    expect(res.status).toBe(200)
    const facts = pdfFacts(res.body)
    expect(facts.text).toContain('Canary document')
    expect(facts.text).not.toContain('TOP-SECRET-LOCAL-FILE')
    expect(facts.images).toBe(0)
    expect(hits).toEqual([])
  }, 180_000)

  it('(the control: without the sandbox, LibreOffice does fetch the canary and embed the local picture)', async () => {
    const unsandboxed = await start({ sandbox: 'none' })
    try {
      const res = await convert(unsandboxed, 'canary.docx', document)
      expect(res.status).toBe(200)
      expect(hits.length).toBeGreaterThan(0)
      expect(pdfFacts(res.body).images).toBeGreaterThan(0)
    } finally {
      await unsandboxed.close()
      hits.length = 0
    }
  }, 180_000)
})

describe('sidecar: documents', () => {
  let sidecar: RunningSidecar
  beforeAll(async () => {
    // The expansion limit is the server's (checked before LibreOffice sees the document): the shared pool serves.
    sidecar = await start({ maxExpandedBytes: 16 * 1024 * 1024 }, shared.pool)
  })
  afterAll(() => sidecar.close())

  it('refuses a zip bomb before LibreOffice opens it, whether its sizes are declared or hidden', async () => {
    const bomb = docx('<w:p><w:r><w:t>bomb</w:t></w:r></w:p>', '', [
      { name: 'word/media/zeros.bin', bytes: new Uint8Array(64 * 1024 * 1024), deflate: true },
    ])
    expect(bomb.length).toBeLessThan(200 * 1024)
    const declared = await convert(sidecar, 'bomb.docx', bomb)
    expect(declared.status).toBe(400)
    expect(new TextDecoder().decode(declared.body)).toContain('zip bomb')
    // The same archive with its central directory claiming 1 KiB for the entry: inflating finds the truth.
    const lying = new Uint8Array(bomb)
    const view = new DataView(lying.buffer)
    for (let at = lying.length - 22; at >= 0; at--) {
      if (view.getUint32(at, true) !== 0x02014b50) continue
      const name = new TextDecoder().decode(lying.subarray(at + 46, at + 46 + view.getUint16(at + 28, true)))
      if (name === 'word/media/zeros.bin') view.setUint32(at + 24, 1024, true)
    }
    const hidden = await convert(sidecar, 'bomb.docx', lying)
    expect(hidden.status).toBe(400)
    expect(new TextDecoder().decode(hidden.body)).toContain('zip bomb')
  })

  it('refuses a zip cut short (no end of central directory record) before LibreOffice opens it', async () => {
    // LibreOffice cannot read such a file as a package and its type detection goes on to other import filters:
    // 7.4 opened the first 300 bytes of a DOCX it had written as WordPerfect (a PDF reading "PK…") when the
    // timestamp in its first local header happened to be one value, and failed it for another.
    const whole = docx('<w:p><w:r><w:t>cut short</w:t></w:r></w:p>')
    for (const cut of [300, whole.length - 10]) {
      const answer = await convert(sidecar, 'cut.docx', whole.subarray(0, cut))
      expect(answer.status).toBe(400)
      expect(new TextDecoder().decode(answer.body)).toBe(
        "Bad Request: the document 'cut.docx' is a truncated or damaged zip: its end of central directory record is missing",
      )
    }
    expect((await convert(sidecar, 'whole.docx', whole)).status).toBe(200)
  })

  it('refuses a document LibreOffice could open only with a filter its name does not call for', async () => {
    // LibreOffice detects the type from the bytes and goes on to its other import filters when the named kind does
    // not read them (seen in LibreOffice 7.4): an XLS cut short opened as CSV text, an HTML or text file named .docx
    // as HTML or Text, a DOCX cut short as WordPerfect. Each would have "converted" to a PDF of garbage.
    const cases: Array<[string, Uint8Array, RegExp]> = [
      [
        'cut.xls',
        new Uint8Array(fixture('data.xls')).subarray(0, 4096),
        /only as plain text \(Text - txt - csv \(StarCalc\)\), not as a xls document/,
      ],
      [
        'page.docx',
        new TextEncoder().encode('<html><body><p>a web page</p></body></html>'),
        /only as HTML.*, not as a docx document/,
      ],
      ['notes.pptx', new TextEncoder().encode('just some notes'), /LibreOffice could (open it only as|not open)/],
    ]
    for (const [name, bytes, reason] of cases) {
      const answer = await convert(sidecar, name, bytes)
      expect(answer.status, name).toBe(400)
      expect(new TextDecoder().decode(answer.body), name).toMatch(reason)
    }
    // What each name does call for still converts: the XLS whole, text as .txt, HTML as .html.
    expect((await convert(sidecar, 'data.xls', new Uint8Array(fixture('data.xls')))).status).toBe(200)
    expect((await convert(sidecar, 'notes.txt', new TextEncoder().encode('just some notes'))).status).toBe(200)
    expect(
      (await convert(sidecar, 'page.html', new TextEncoder().encode('<html><body><p>a web page</p></body></html>')))
        .status,
    ).toBe(200)
  })

  it('opens a password-protected document with its password, and says so without it', async () => {
    const missing = await convert(sidecar, 'secret.odt', fixture('secret.odt'))
    expect(missing.status).toBe(400)
    // Gotenberg 8.34's words for both (libreoffice_convert.feature, "Protected"): it cannot tell them apart either.
    const PASSWORD =
      'LibreOffice failed to process a document: a password may be required, or, if one has been given, it is invalid. In any case, the exact cause is uncertain.'
    expect(new TextDecoder().decode(missing.body)).toBe(PASSWORD)
    const wrong = await convert(sidecar, 'secret.odt', fixture('secret.odt'), { password: 'guess' })
    expect(wrong.status).toBe(400)
    expect(new TextDecoder().decode(wrong.body)).toBe(PASSWORD)
    const right = await convert(sidecar, 'secret.odt', fixture('secret.odt'), { password: 's3cret' })
    expect(right.status).toBe(200)
    expect(pdfFacts(right.body).text).toContain('Edgefloor office test')
  })

  it('makes a tagged PDF/UA document with pdfua=true', async () => {
    const plain = await convert(sidecar, 'hello.docx', fixture('hello.docx'))
    expect(pdfFacts(plain.body).tagged).toBe(false)
    const accessible = await convert(sidecar, 'hello.docx', fixture('hello.docx'), { pdfua: 'true' })
    expect(accessible.status).toBe(200)
    const facts = pdfFacts(accessible.body)
    expect(facts.tagged).toBe(true)
    expect(facts.text).toContain('Edgefloor office test')
    // The PDF/UA identification schema in the XMP metadata (ISO 14289-1: part 1).
    expect(new TextDecoder('latin1').decode(accessible.body)).toMatch(/pdfuaid:part(="1"|>1<)/)
  })

  it('turns the pages to landscape with landscape=true', async () => {
    const portrait = pdfFacts((await convert(sidecar, 'hello.docx', fixture('hello.docx'))).body)
    expect(portrait.width).toBeLessThan(portrait.height)
    const landscape = pdfFacts(
      (await convert(sidecar, 'hello.docx', fixture('hello.docx'), { landscape: 'true' })).body,
    )
    expect(landscape.width).toBeGreaterThan(landscape.height)
  })

  it.each([['slides.pptx'], ['slides.odp']])('converts the presentation %s, one page a slide', async (name) => {
    const res = await convert(sidecar, name, fixture(name))
    expect(res.status).toBe(200)
    const facts = pdfFacts(res.body)
    expect(facts.pages).toBe(2)
    expect(facts.text).toContain('Edgefloor slide one')
    expect(facts.text).toContain('Edgefloor slide two')
  })
})
