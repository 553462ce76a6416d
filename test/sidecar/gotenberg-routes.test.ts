// Gotenberg 8.34's PDF engines and Chromium routes, GET /, /favicon.ico, /prometheus/metrics and /health, through
// the real sidecar with fixtures this file makes (Chromium prints them). The expected texts are Gotenberg's own,
// quoted from its test/integration/features (pdfengines_*.feature, chromium_*.feature, root.feature,
// prometheus_metrics.feature, health.feature at tag v8.34.0); gotenberg-features.test.ts replays those files
// whole when they are on the machine. Checks use poppler (pdfinfo, pdftotext), qpdf and exiftool.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { optionsFromEnv, type RunningSidecar, startSidecar } from '../../sidecar/server'

const scratch = mkdtempSync(join(tmpdir(), 'gotenberg-routes-'))
const SLOW = 120_000
let sidecar: RunningSidecar
/** The same server with 127.0.0.1 listed as a host pages and downloads may reach. */
let trusting: RunningSidecar
let site: Server
let siteUrl = ''
const siteHits: string[] = []
const logs: Record<string, unknown>[] = []

type Part = [name: string, value: string] | [name: string, file: string, bytes: Uint8Array | string]

async function post(path: string, parts: Part[], headers: Record<string, string> = {}, on = () => sidecar) {
  const form = new FormData()
  for (const part of parts) {
    if (part.length === 2) form.append(part[0], part[1])
    else form.append(part[0], new Blob([part[2]]), part[1])
  }
  const res = await fetch(`${on().url}${path}`, { method: 'POST', body: form, headers })
  return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) }
}

function save(bytes: Uint8Array, name = `${Math.random()}.pdf`): string {
  const path = join(scratch, name)
  writeFileSync(path, bytes)
  return path
}
const run = (command: string, args: string[]) => execFileSync(command, args, { encoding: 'utf8' })
const info = (pdf: Uint8Array) => run('pdfinfo', [save(pdf)])
const pages = (pdf: Uint8Array) => Number(/Pages:\s+(\d+)/.exec(info(pdf))?.[1])
const text = (pdf: Uint8Array, page?: number) =>
  run('pdftotext', [...(page ? ['-f', String(page), '-l', String(page)] : []), '-layout', save(pdf), '-'])

/** A PDF of `count` pages reading "<label> 1", "<label> 2", …, printed by the sidecar's own Chromium route. */
async function pdfOf(label: string, count = 1): Promise<Uint8Array> {
  const body = Array.from(
    { length: count },
    (_, i) => `<h1 style="page-break-after: always">${label} ${i + 1}</h1>`,
  ).join('')
  const res = await post('/forms/chromium/convert/html', [['files', 'index.html', `<html><body>${body}</body></html>`]])
  expect(res.status).toBe(200)
  return res.body
}

beforeAll(async () => {
  const options = {
    ...optionsFromEnv({}),
    port: 0,
    processes: 1,
    log: (entry: Record<string, unknown>) => void logs.push(entry),
  }
  sidecar = await startSidecar(options)
  site = createServer((request, response) => {
    siteHits.push(request.url ?? '')
    if (request.url === '/page.html')
      return void response
        .writeHead(200, { 'content-type': 'text/html' })
        .end('<html><body><h1>Remote page</h1><img src="/pixel.svg"></body></html>')
    if (request.url === '/pixel.svg')
      return void response
        .writeHead(200, { 'content-type': 'image/svg+xml' })
        .end('<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>')
    response.writeHead(404).end()
  })
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve))
  siteUrl = `http://127.0.0.1:${(site.address() as { port: number }).port}`
  trusting = await startSidecar(
    { ...optionsFromEnv({ SIDECAR_ALLOWED_PRIVATE_HOSTS: '127.0.0.1' }), port: 0, processes: 1, log: options.log },
    sidecar.pool,
  )
}, SLOW)
afterAll(async () => {
  site?.close()
  await trusting?.close()
  await sidecar?.close()
})

describe('GET /, /favicon.ico, /prometheus/metrics, /health', () => {
  it("answers root.feature's page and favicon", async () => {
    const root = await fetch(`${sidecar.url}/`)
    expect(root.status).toBe(200)
    expect(root.headers.get('content-type')).toBe('text/html; charset=UTF-8')
    expect(await root.text()).toBe(
      'Hey, Gotenberg has no UI, it\'s an API. Head to the <a href="https://gotenberg.dev">documentation</a> to learn how to interact with it 🚀',
    )
    expect((await fetch(`${sidecar.url}/favicon.ico`)).status).toBe(204)
  })

  it("answers prometheus_metrics.feature's gauges", async () => {
    const res = await fetch(`${sidecar.url}/prometheus/metrics`)
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8; escaping=underscores')
    const body = await res.text()
    for (const name of [
      'chromium_requests_queue_size',
      'chromium_restarts_count',
      'libreoffice_requests_queue_size',
      'libreoffice_restarts_count',
    ]) {
      expect(body).toMatch(new RegExp(`# TYPE gotenberg_${name} gauge\\ngotenberg_${name} \\d+\\n`))
    }
  })

  it('reports Chromium and LibreOffice in /health, as health.feature expects', async () => {
    const body = await (await fetch(`${sidecar.url}/health`)).json()
    expect(body).toMatchObject({ status: 'up', details: { chromium: { status: 'up' }, libreoffice: { status: 'up' } } })
  })
})

describe('POST /forms/pdfengines/*', () => {
  it(
    'merges in file-name order and names the result by Gotenberg-Output-Filename',
    async () => {
      const [a, b] = await Promise.all([pdfOf('Alpha'), pdfOf('Beta', 2)])
      const res = await post(
        '/forms/pdfengines/merge',
        [
          ['files', 'b.pdf', b],
          ['files', 'a.pdf', a],
        ],
        { 'Gotenberg-Output-Filename': 'foo' },
      )
      expect(res.status).toBe(200)
      expect(res.headers.get('content-disposition')).toBe('attachment; filename="foo.pdf"')
      expect(pages(res.body)).toBe(3)
      expect(text(res.body, 1)).toContain('Alpha 1')
      expect(text(res.body, 3)).toContain('Beta 2')
    },
    SLOW,
  )

  it(
    'splits by intervals into a zip of <name>_<i>.pdf',
    async () => {
      const res = await post('/forms/pdfengines/split', [
        ['files', 'three.pdf', await pdfOf('Page', 3)],
        ['splitMode', 'intervals'],
        ['splitSpan', '2'],
      ])
      expect(res.headers.get('content-type')).toBe('application/zip')
      const folder = mkdtempSync(join(scratch, 'zip-'))
      run('unzip', ['-q', save(res.body, 'split.zip'), '-d', folder])
      expect(readdirSync(folder).sort()).toEqual(['three_0.pdf', 'three_1.pdf'])
    },
    SLOW,
  )

  it(
    "refuses what a route needs and lacks, in Gotenberg's words",
    async () => {
      // pdfengines_split.feature, pdfengines_metadata.feature, pdfengines_convert.feature, pdfengines_encrypt.feature.
      const split = await post('/forms/pdfengines/split', [])
      expect(split.status).toBe(400)
      expect(split.body.toString()).toBe(
        "Invalid form data: form field 'splitMode' is required\nform field 'splitSpan' is required\nno form file found for extensions: [.pdf]",
      )
      const pdf = await pdfOf('One')
      expect((await post('/forms/pdfengines/convert', [['files', 'a.pdf', pdf]])).body.toString()).toBe(
        "Invalid form data: either 'pdfa' or 'pdfua' form fields must be provided",
      )
      expect((await post('/forms/pdfengines/encrypt', [['files', 'a.pdf', pdf]])).body.toString()).toBe(
        "Invalid form data: a 'userPassword' or 'ownerPassword' is required",
      )
      expect(
        (
          await post('/forms/pdfengines/metadata/write', [
            ['files', 'a.pdf', pdf],
            ['metadata', 'foo'],
          ])
        ).body.toString(),
      ).toBe(
        "Invalid form data: form field 'metadata' is invalid (got 'foo', resulting to unmarshal metadata: invalid character 'o' in literal false (expecting 'a'))",
      )
      const newline = await post('/forms/pdfengines/metadata/write', [
        ['files', 'a.pdf', pdf],
        ['metadata', '{"Title":"test\\n-FileName=/tmp/inject_proof"}'],
      ])
      expect(newline.status).toBe(400)
      expect(newline.body.toString()).toContain('The requested metadata could not be written')
    },
    SLOW,
  )

  it(
    'writes metadata, Copyright included, reads it back, and refuses the tags that would move the file',
    async () => {
      // Gotenberg drops these without a word; here they are refused with 400 (issue 31: a key that names a file is an
      // attack, and a client is told), which Gotenberg's own answer for metadata it will not write allows.
      for (const key of ['System:FileName', 'System:Directory']) {
        const refused = await post('/forms/pdfengines/metadata/write', [
          ['files', 'page.pdf', await pdfOf('Meta')],
          ['metadata', JSON.stringify({ [key]: '/tmp/stolen.pdf' })],
        ])
        expect(refused.status).toBe(400)
      }
      const metadata = {
        Author: 'Julien Neuhart',
        Copyright: 'Julien Neuhart',
        Keywords: ['first', 'second'],
        Marked: true,
      }
      const written = await post(
        '/forms/pdfengines/metadata/write',
        [
          ['files', 'page.pdf', await pdfOf('Meta')],
          ['metadata', JSON.stringify(metadata)],
        ],
        { 'Gotenberg-Output-Filename': 'foo' },
      )
      expect(written.status).toBe(200)
      const read = await post('/forms/pdfengines/metadata/read', [['files', 'foo.pdf', written.body]])
      expect(read.headers.get('content-type')).toBe('application/json')
      const facts = JSON.parse(read.body.toString())['foo.pdf']
      expect(facts).toMatchObject({
        Author: 'Julien Neuhart',
        Copyright: 'Julien Neuhart',
        Keywords: ['first', 'second'],
        Marked: true,
      })
      // Gotenberg's systemTags: nothing of the file on disk.
      for (const tag of ['SourceFile', 'FileName', 'Directory', 'FilePermissions', 'ExifToolVersion'])
        expect(facts).not.toHaveProperty(tag)
    },
    SLOW,
  )

  it(
    'encrypts with an owner password alone: the PDF opens, and printing is refused',
    async () => {
      const res = await post('/forms/pdfengines/encrypt', [
        ['files', 'a.pdf', await pdfOf('Secret')],
        ['ownerPassword', 'owner-secret'],
        ['allowPrinting', 'false'],
      ])
      expect(res.status).toBe(200)
      const facts = info(res.body).replace(/ /g, '')
      expect(facts).toContain('Encrypted:yes')
      expect(facts).toContain('print:no')
      expect(facts).toContain('copy:yes')
      const locked = await post('/forms/pdfengines/encrypt', [
        ['files', 'a.pdf', await pdfOf('Secret')],
        ['userPassword', 'foo'],
      ])
      expect(() => info(locked.body)).toThrow(/Incorrect password/)
    },
    SLOW,
  )

  it(
    'embeds files with their MIME type and PDF/A-3 relationship',
    async () => {
      const res = await post('/forms/pdfengines/embed', [
        ['files', 'page.pdf', await pdfOf('Host')],
        ['embeds', 'data.xml', '<data/>'],
        ['embedsMetadata', '{"data.xml":{"mimeType":"text/xml","relationship":"Data"}}'],
      ])
      expect(res.headers.get('content-disposition')).toBe('attachment; filename="page.pdf"')
      const path = save(res.body)
      expect(run('qpdf', ['--list-attachments', path])).toContain('data.xml ->')
      const objects = Object.values(JSON.parse(run('qpdf', ['--json-output=2', '--json-key=qpdf', path])).qpdf[1]) as {
        value?: Record<string, unknown>
      }[]
      const spec = objects.find((object) => object.value?.['/Type'] === '/Filespec')
      expect(spec?.value?.['/AFRelationship']).toBe('/Data')
    },
    SLOW,
  )

  it(
    'converts to PDF/A-2b through LibreOffice and flattens, rotates and watermarks',
    async () => {
      const pdf = await pdfOf('Archive')
      const converted = await post('/forms/pdfengines/convert', [
        ['files', 'a.pdf', pdf],
        ['pdfa', 'PDF/A-2b'],
      ])
      expect(converted.status).toBe(200)
      expect(
        run('exiftool', ['-s3', '-XMP-pdfaid:Part', '-XMP-pdfaid:Conformance', save(converted.body)])
          .trim()
          .split('\n'),
      ).toEqual(['2', 'B'])
      const rotated = await post('/forms/pdfengines/rotate', [
        ['files', 'a.pdf', pdf],
        ['rotateAngle', '90'],
      ])
      expect(info(rotated.body)).toMatch(/Page rot:\s+90/)
      const watermarked = await post('/forms/pdfengines/watermark', [
        ['files', 'a.pdf', pdf],
        ['watermarkSource', 'text'],
        ['watermarkExpression', 'CONFIDENTIAL'],
        ['watermarkOptions', '{"rot":"0","fillcolor":"#FF0000","scale":"0.5 rel"}'],
      ])
      expect(text(watermarked.body).replace(/\s/g, '')).toContain('CONFIDENTIAL')
    },
    SLOW,
  )
})

describe('POST /forms/chromium/*', () => {
  it(
    'prints HTML with its assets, on the paper asked for',
    async () => {
      const res = await post('/forms/chromium/convert/html', [
        [
          'files',
          'index.html',
          '<html><head><link rel="stylesheet" href="style.css"></head><body><h1>Styled</h1><img src="img/dot.svg"></body></html>',
        ],
        ['files', 'style.css', 'h1 { font-family: serif }'],
        ['files', 'dot.svg', '<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>'],
        ['paperWidth', '210mm'],
        ['paperHeight', '297mm'],
        ['landscape', 'true'],
      ])
      expect(res.status).toBe(200)
      expect(text(res.body)).toContain('Styled')
      expect(info(res.body)).toMatch(/Page size:\s+841\.\d+ x 595\.\d+/)
    },
    SLOW,
  )

  it(
    "renders Markdown (GitHub's tables) through index.html's toHTML",
    async () => {
      const res = await post('/forms/chromium/convert/markdown', [
        ['files', 'index.html', '<html><body>{{ toHTML "table.md" }}</body></html>'],
        ['files', 'table.md', '| A | B |\n|---|---|\n| one | two |\n'],
      ])
      expect(res.status).toBe(200)
      expect(text(res.body)).toMatch(/one\s+two/)
      const missing = await post('/forms/chromium/convert/markdown', [
        ['files', 'index.html', '{{ toHTML "a.md" }}'],
        ['files', 'b.md', '# b'],
      ])
      expect(missing.body.toString()).toBe("Markdown file(s) not found: 'a.md'")
    },
    SLOW,
  )

  it(
    'takes a screenshot in the format and size asked for',
    async () => {
      const res = await post('/forms/chromium/screenshot/html', [
        ['files', 'index.html', '<h1>Shot</h1>'],
        ['format', 'png'],
        ['width', '320'],
        ['height', '200'],
        ['clip', 'true'],
      ])
      expect(res.headers.get('content-type')).toBe('image/png')
      expect(res.body.readUInt32BE(16)).toBe(320)
      expect(res.body.readUInt32BE(20)).toBe(200)
    },
    SLOW,
  )

  it(
    'loads a URL on a host the deployment lists, and answers a bare Forbidden for a loopback one it does not',
    async () => {
      const ok = await post('/forms/chromium/convert/url', [['url', `${siteUrl}/page.html`]], {}, () => trusting)
      expect(ok.status).toBe(200)
      expect(text(ok.body)).toContain('Remote page')
      expect(siteHits).toContain('/pixel.svg')
      const hits = siteHits.length
      // chromium_convert_url.feature: "Main URL is a non-public IP literal" answers 403 "Forbidden".
      const refused = await post('/forms/chromium/convert/url', [['url', `${siteUrl}/page.html`]])
      expect(refused.status).toBe(403)
      expect(refused.body.toString()).toBe('Forbidden')
      expect(siteHits.length).toBe(hits)
      const file = await post('/forms/chromium/convert/url', [['url', 'file:///etc/passwd']])
      expect(file.body.toString()).toBe(
        'file:// URLs are not accepted on this route. Use the /convert/html or /convert/markdown routes to render local HTML',
      )
    },
    SLOW,
  )

  it(
    'lets a page reach no loopback address and no local file the request was not allowed',
    async () => {
      // Refused and missing resources each get an answer: a paused request left unanswered would hold the load forever.
      const page = `<html><head><link rel="stylesheet" href="missing.css"></head><body><h1>Sandboxed</h1>
      <img src="${siteUrl}/pixel.svg?img"><iframe src="file:///etc/passwd"></iframe><iframe src="/etc/passwd"></iframe><iframe src="http://localhost/etc/passwd"></iframe>
      <script>fetch('${siteUrl}/page.html?fetch').catch(() => {}); document.title = 'x'</script></body></html>`
      const before = siteHits.length
      const res = await post('/forms/chromium/convert/html', [
        ['files', 'index.html', page],
        ['waitDelay', '300ms'],
      ])
      expect(res.status).toBe(200)
      expect(siteHits.length).toBe(before)
      expect(text(res.body)).not.toMatch(/root:x:0:0/)
      const failing = await post('/forms/chromium/convert/html', [
        ['files', 'index.html', page],
        ['failOnResourceLoadingFailed', 'true'],
      ])
      expect(failing.status).toBe(409)
      expect(failing.body.toString()).toContain('Chromium failed to load resources')
    },
    SLOW,
  )

  it(
    "refuses bad options with every problem at once, in Gotenberg's words",
    async () => {
      const res = await post('/forms/chromium/convert/html', [
        ['scale', 'foo'],
        ['waitDelay', 'foo'],
        ['cookies', '[{"name":"yummy_cookie","value":"choco"}]'],
      ])
      expect(res.status).toBe(400)
      expect(res.body.toString()).toBe(
        [
          `Invalid form data: form field 'waitDelay' is invalid (got 'foo', resulting to time: invalid duration "foo")`,
          `form field 'cookies' is invalid (got '[{"name":"yummy_cookie","value":"choco"}]', resulting to cookie 0 must have its name, value and domain set)`,
          `form field 'scale' is invalid (got 'foo', resulting to strconv.ParseFloat: parsing "foo": invalid syntax)`,
          "form file 'index.html' is required",
        ].join('\n'),
      )
      const ranges = await post('/forms/chromium/convert/html', [
        ['files', 'index.html', '<h1>One</h1>'],
        ['nativePageRanges', '2-3'],
      ])
      expect(ranges.body.toString()).toBe("The page ranges '2-3' (nativePageRanges) exceeds the page count")
      const expression = await post('/forms/chromium/convert/html', [
        ['files', 'index.html', '<h1>One</h1>'],
        ['waitForExpression', 'undefined'],
      ])
      expect(expression.body.toString()).toBe(
        "The expression 'undefined' (waitForExpression) returned an exception or undefined",
      )
    },
    SLOW,
  )
})
