// Office → PDF through the Worker's Gotenberg client against the real sidecar (LibreOffice), and on through the
// pipeline to PNG pages.
import { env } from 'cloudflare:test'
import { describe, expect, inject, it } from 'vitest'
import { loadConfig } from '../../worker/config'
import { zip } from '../../sidecar/zip'
import { officeToPdf } from '../../worker/converters/office-to-pdf'
import { decodeImage } from '../../worker/engines/image/decode'
import { pdfToPng } from '../../worker/converters/pdf-to-png'
import { callJson } from '../support/api'
import { officeDocument } from '../support/office-documents'
import { signUp } from '../support/accounts'
import { convertAll, inputFromBytes, outputBytes, TEST_IMAGE_LIMITS, testContext } from '../support/conversion'
import { downloadBytes, uploaded } from '../support/files'
import { pollJob } from '../support/jobs'

const startsWithPdf = (bytes: Uint8Array) => new TextDecoder().decode(bytes.subarray(0, 5)) === '%PDF-'

describe('office-to-pdf', () => {
  it.each([
    ['hello.docx', officeDocument('hello.docx'), 1],
    ['hello.doc', officeDocument('hello.doc'), 1],
    ['hello.odt', officeDocument('hello.odt'), 1],
    ['hello.rtf', officeDocument('hello.rtf'), 1],
    ['data.xlsx', officeDocument('data.xlsx'), 1],
    ['data.ods', officeDocument('data.ods'), 1],
    ['data.csv', officeDocument('data.csv'), 1],
    ['slides.pptx', officeDocument('slides.pptx'), 2],
    ['slides.odp', officeDocument('slides.odp'), 2],
    ['data.xls', officeDocument('data.xls'), 1],
    ['slides.ppt', officeDocument('slides.ppt'), 2],
  ])('converts %s into a PDF that renders', async (name, bytes, pages) => {
    const [output] = await convertAll(officeToPdf, inputFromBytes(name, bytes), testContext())
    expect(output).toMatchObject({ index: 0, total: 1, extension: '.pdf', contentType: 'application/pdf' })
    const pdf = await outputBytes(output!)
    expect(startsWithPdf(pdf)).toBe(true)
    const plan = await pdfToPng.plan!(inputFromBytes('out.pdf', pdf), testContext())
    expect(plan.total).toBe(pages)
  })

  it("fails a document LibreOffice cannot read permanently, with Gotenberg's reason", async () => {
    // A whole zip, but not an office package: the sidecar hands it to LibreOffice, which cannot open it.
    const notAPackage = zip([{ name: 'notes/a.txt', bytes: new TextEncoder().encode('not really a docx') }])
    const failure = await convertAll(officeToPdf, inputFromBytes('broken.docx', notAPackage), testContext()).catch(
      (error) => error,
    )
    expect(failure).toMatchObject({ name: 'ConversionError', retryable: false, code: 'CONVERSION_FAILED' })
    expect(failure.message).toMatch(/^the document was refused: /)
  })

  it('refuses a zip cut short before the sidecar: LibreOffice would go on to other import filters (plain text)', async () => {
    const cut = officeDocument('hello.docx').subarray(0, 300)
    const failure = await convertAll(
      officeToPdf,
      inputFromBytes('cut.docx', cut),
      testContext({ settings: { GOTENBERG_URL: 'http://127.0.0.1:9' } }),
    ).catch((error) => error)
    expect(failure).toMatchObject({ name: 'ConversionError', retryable: false, code: 'CONVERSION_FAILED' })
    expect(failure.message).toBe(
      '"cut.docx" is not an office document LibreOffice should open: its content is a truncated or damaged zip (its end of central directory record is missing)',
    )
  })

  it('treats an unreachable Gotenberg as transient, for the queue to retry', async () => {
    const failure = await convertAll(
      officeToPdf,
      inputFromBytes('hello.docx', officeDocument('hello.docx')),
      testContext({ settings: { GOTENBERG_URL: 'http://127.0.0.1:9' } }),
    ).catch((error) => error)
    expect(failure).toMatchObject({
      retryable: true,
      code: 'CONVERTER_UNAVAILABLE',
      message: 'the document converter cannot be reached',
    })
    expect(failure.cause.message).toMatch(/^Gotenberg at http:\/\/127\.0\.0\.1:9 cannot be reached/)
  })

  it('passes options through, and reports what the sidecar refuses', async () => {
    const failure = await convertAll(
      officeToPdf,
      inputFromBytes('hello.docx', officeDocument('hello.docx')),
      testContext({ options: { pdfa: 'PDF/A-9' } }),
    ).catch((error) => error)
    expect(failure.message).toContain("The PDF format 'PDF/A-9' is not supported")
    const [archival] = await convertAll(
      officeToPdf,
      inputFromBytes('hello.docx', officeDocument('hello.docx')),
      testContext({ options: { pdfa: 'PDF/A-2b' } }),
    )
    expect(new TextDecoder('latin1').decode(await outputBytes(archival!))).toContain('pdfaid:part')
  })

  it('opens a password-protected document with the password option, and fails it permanently without', async () => {
    const failure = await convertAll(
      officeToPdf,
      inputFromBytes('secret.odt', officeDocument('secret.odt')),
      testContext(),
    ).catch((error) => error)
    expect(failure).toMatchObject({ retryable: false, code: 'CONVERSION_FAILED' })
    expect(failure.message).toContain('a password may be required')
    const [pdf] = await convertAll(
      officeToPdf,
      inputFromBytes('secret.odt', officeDocument('secret.odt')),
      testContext({ options: { password: 's3cret' } }),
    )
    expect(startsWithPdf(await outputBytes(pdf!))).toBe(true)
  })

  it('passes landscape through: the page comes out wider than tall', async () => {
    const [pdf] = await convertAll(
      officeToPdf,
      inputFromBytes('hello.docx', officeDocument('hello.docx')),
      testContext({ options: { landscape: true } }),
    )
    const bytes = await outputBytes(pdf!)
    const box = /\/MediaBox\s*\[\s*0\s+0\s+([\d.]+)\s+([\d.]+)/.exec(new TextDecoder('latin1').decode(bytes))
    expect(Number(box![1])).toBeGreaterThan(Number(box![2]))
  })
})

/** Whether a page has ink: some pixels well darker than the white paper. */
async function hasInk(png: Uint8Array): Promise<boolean> {
  const image = await decodeImage(png, TEST_IMAGE_LIMITS)
  let dark = 0
  for (let i = 0; i < image.data.length; i += image.channels) if (image.data[i]! < 128) dark++
  return dark > 100
}

describe('Office → PDF → PNG pages through the pipeline', () => {
  it.each([
    ['Quarterly report.docx', officeDocument('hello.docx'), 1],
    ['Budget.xlsx', officeDocument('data.xlsx'), 1],
    ['Deck.pptx', officeDocument('slides.pptx'), 2],
    ['Letter.odt', officeDocument('hello.odt'), 1],
    ['Note.rtf', officeDocument('hello.rtf'), 1],
    ['Memo.doc', officeDocument('hello.doc'), 1],
    ['Budget.xls', officeDocument('data.xls'), 1],
    ['Deck.ppt', officeDocument('slides.ppt'), 2],
    // HTML and Markdown through Gotenberg's Chromium routes (worker/converters/html-to-pdf.ts).
    [
      'Release notes.html',
      new TextEncoder().encode('<!doctype html><h1 style="break-after: page">Release notes</h1><p>Second page</p>'),
      2,
    ],
    ['Read me.md', new TextEncoder().encode('# Read me\n\n| Item | Qty |\n| --- | --- |\n| Widget | 2 |\n'), 1],
  ])(
    '%s becomes a PDF and its pages as rendered PNGs, each the child of the file it came from',
    async (name, bytes, pages) => {
      const user = await signUp()
      const source = await uploaded(user, name, bytes)
      const res = await callJson('POST', `/files/${source._id}/convert`, { token: user.token })
      expect(res.status).toBe(200)
      const [pdf, ...pngs] = res.body
      // The seed (SPEC.md, files.name): 'Converted files are named "<name> (<n> of <m>)"'. <name> is the uploaded
      // file's name without its extension at every step ("Q3.docx" → "Q3 (1 of 1)" → "Q3 (1 of 5)" …), and the
      // extension lives in `extension` only; a download still offers it in Content-Disposition.
      const base = name.replace(/\.[^.]+$/, '')
      expect(pdf).toMatchObject({
        name: `${base} (1 of 1)`,
        extension: '.pdf',
        content_type: 'application/pdf',
        parent_file: source._id,
        metadata: { page_count: pages },
      })
      expect(pngs).toHaveLength(pages)
      for (const [i, png] of pngs.entries()) {
        expect(png).toMatchObject({
          name: `${base} (${i + 1} of ${pages})`,
          extension: '.png',
          content_type: 'image/png',
          parent_file: pdf!._id,
          part_index: i,
          part_total: pages,
        })
        const { res: download, bytes: image } = await downloadBytes(`/files/${png._id}/download`, { token: user.token })
        expect(download.headers.get('content-disposition')).toContain(`filename="${base} (${i + 1} of ${pages}).png"`)
        expect(await hasInk(image)).toBe(true)
      }
    },
  )
  it('makes the PDF a tagged PDF/UA document when the convert request asks for pdfua', async () => {
    const user = await signUp()
    const source = await uploaded(user, 'Accessible.docx', officeDocument('hello.docx'))
    const res = await callJson('POST', `/files/${source._id}/convert`, {
      token: user.token,
      json: { options: { pdfua: true } },
    })
    expect(res.status).toBe(200)
    const [pdf] = res.body
    expect(pdf).toMatchObject({ name: 'Accessible (1 of 1)', content_type: 'application/pdf', parent_file: source._id })
    const { bytes } = await downloadBytes(`/files/${pdf!._id}/download`, { token: user.token })
    const text = new TextDecoder('latin1').decode(bytes)
    expect(text).toMatch(/pdfuaid:part(="1"|>1<)/)
    expect(text).toContain('/StructTreeRoot')
    expect(text).toMatch(/\/MarkInfo\s*<<\s*\/Marked\s+true/)
  })
})

describe('office-to-pdf: Gotenberg options through POST /files/:id/convert', () => {
  it("refuses an unknown option or a value out of Gotenberg's range with 400, before any conversion", async () => {
    const user = await signUp()
    const source = await uploaded(user, 'Options.docx', officeDocument('hello.docx'))
    for (const options of [
      { merge: true },
      { quality: 0 },
      { pdfa: 'PDF/A-9' },
      { metadata: 'foo' },
      { watermarkSource: 'pdf' },
    ]) {
      const res = await callJson('POST', `/files/${source._id}/convert`, { token: user.token, json: { options } })
      expect(res.status, JSON.stringify(options)).toBe(400)
    }
  })

  it('encrypts the PDF with userPassword, renders its pages with it, and never shows the password in the job', async () => {
    const user = await signUp()
    const source = await uploaded(user, 'Secret.docx', officeDocument('hello.docx'))
    const options = {
      userPassword: 'p4ss',
      ownerPassword: 'own3r',
      metadata: '{"Title":"Quarterly"}',
      exportBookmarks: false,
      rotateAngle: 90,
    }
    const res = await callJson('POST', `/files/${source._id}/convert`, {
      token: user.token,
      json: { options },
      headers: { prefer: 'respond-async' },
    })
    expect(res.status).toBe(202)
    expect(JSON.stringify(res.body)).not.toMatch(/p4ss|own3r/)
    const job = await pollJob(res.body._id, user)
    expect(job).toMatchObject({
      status: 'done',
      options: { metadata: '{"Title":"Quarterly"}', exportBookmarks: false, rotateAngle: 90 },
    })
    expect(JSON.stringify(job)).not.toMatch(/p4ss|own3r/)
    const pdf = job.files.find((file) => file.content_type === 'application/pdf')
    const { bytes } = await downloadBytes(`/files/${pdf!._id}/download`, { token: user.token })
    expect(new TextDecoder('latin1').decode(bytes)).toContain('/Encrypt')
    expect(job.files.filter((file) => file.content_type === 'image/png')).toHaveLength(1)
  })
})

// The Cloudflare Containers path (worker/engines/gotenberg-container.ts), tested here without containers (no Docker
// on this machine): in workerd, the Durable Object's forwarding runs against a stand-in for its `ctx.container` whose
// port is the local sidecar, so the Worker's side (binding → forwarding → container port) is the deployed code; and
// the class itself, bound without a container (SIDECAR_CONTAINER, vitest.config.ts), forwards as wrangler dev runs it.
describe('office-to-pdf through the sidecar Container', () => {
  /** A stand-in for workerd's Container: not running until started, then its port is the local sidecar. */
  function standInContainer(sidecarUrl: string) {
    const seen = {
      starts: 0,
      env: {} as Record<string, string>,
      internet: true as boolean | undefined,
      requests: [] as Request[],
    }
    let running = false
    const container = {
      get running() {
        return running
      },
      start(options: { env?: Record<string, string>; enableInternet?: boolean }) {
        seen.starts++
        seen.env = options.env ?? {}
        seen.internet = options.enableInternet
        running = true
      },
      setInactivityTimeout: async () => {},
      getTcpPort: (port: number) => ({
        fetch: (request: Request) => {
          expect(port).toBe(3000)
          seen.requests.push(request)
          const url = new URL(request.url)
          return fetch(new Request(new URL(url.pathname, sidecarUrl), request))
        },
      }),
    }
    return { container, seen }
  }

  it('converts through the binding, starting the container once, with no internet inside it', async () => {
    const { forwardToSidecar } = await import('../../worker/engines/gotenberg-container')
    const { container, seen } = standInContainer(testContext().settings.GOTENBERG_URL)
    // What GotenbergContainer.fetch does with its ctx.container; GOTENBERG_URL names a closed port: the documents go
    // through the binding, never to it.
    const ctx = testContext({
      gotenberg: { fetch: (request) => forwardToSidecar(container as never, request) },
      settings: { GOTENBERG_URL: 'http://127.0.0.1:9' },
    })
    for (const name of ['hello.docx', 'hello.odt'] as const) {
      const [output] = await convertAll(officeToPdf, inputFromBytes(name, officeDocument(name)), ctx)
      expect(startsWithPdf(await outputBytes(output!))).toBe(true)
    }
    expect(seen.starts).toBe(1)
    expect(seen.internet).toBe(false)
    expect(seen.env).toMatchObject({ SIDECAR_HOST: '0.0.0.0', SIDECAR_PORT: '3000' })
    expect(seen.requests.map((request) => new URL(request.url).pathname)).toEqual([
      '/forms/libreoffice/convert',
      '/forms/libreoffice/convert',
    ])
  })

  it('converts through the GotenbergContainer class itself, which without a container (wrangler dev) forwards to GOTENBERG_URL', async () => {
    // The class the consumer Worker exports and wrangler.consumer.toml binds, as `wrangler dev` runs it with
    // [dev] enable_containers = false: no ctx.container, so its stand-in's port is the sidecar at the Worker's
    // GOTENBERG_URL. The converter's own GOTENBERG_URL names a closed port: the documents go through the object.
    const stub = env.SIDECAR_CONTAINER.getByName('sidecar')
    const ctx = testContext({ gotenberg: stub, settings: { GOTENBERG_URL: 'http://127.0.0.1:9' } })
    const [office] = await convertAll(officeToPdf, inputFromBytes('hello.docx', officeDocument('hello.docx')), ctx)
    expect(startsWithPdf(await outputBytes(office!))).toBe(true)
    const { htmlToPdf } = await import('../../worker/converters/html-to-pdf')
    const [notes] = await convertAll(
      htmlToPdf,
      inputFromBytes('notes.md', new TextEncoder().encode('# Notes\n\nThrough the Container class.\n')),
      ctx,
    )
    expect(startsWithPdf(await outputBytes(notes!))).toBe(true)
    // The sidecar's refusal comes back through the object as the document's fault, not the converter's.
    const refused = await convertAll(officeToPdf, inputFromBytes('hello.docx', officeDocument('hello.docx')), {
      ...ctx,
      options: { pdfa: 'PDF/A-9' },
    }).catch((error) => error)
    expect(refused).toMatchObject({ name: 'ConversionError', retryable: false, code: 'CONVERSION_FAILED' })
  })

  it('sends the Cloudflare Access service token with every request', async () => {
    const headers: Headers[] = []
    const sidecar = testContext().settings.GOTENBERG_URL
    const gateway = {
      fetch: (request: Request) => {
        headers.push(request.headers)
        return fetch(new Request(new URL(new URL(request.url).pathname, sidecar), request))
      },
    }
    const ctx = testContext({
      gotenberg: gateway,
      settings: { GOTENBERG_ACCESS_CLIENT_ID: 'edgefloor.access', GOTENBERG_ACCESS_CLIENT_SECRET: 'token-secret' },
    })
    const [output] = await convertAll(officeToPdf, inputFromBytes('hello.rtf', officeDocument('hello.rtf')), ctx)
    expect(startsWithPdf(await outputBytes(output!))).toBe(true)
    expect(headers[0]!.get('cf-access-client-id')).toBe('edgefloor.access')
    expect(headers[0]!.get('cf-access-client-secret')).toBe('token-secret')
    expect(headers[0]!.get('gotenberg-trace')).toBe('test-job')
  })
})

// Path 2 of docs/gotenberg.md: a self-hosted sidecar over HTTPS with credentials. The front (test/setup/sidecar.ts)
// presents a certificate for 127.0.0.1 signed by the run's own authority, which workerd trusts through
// SSL_CERT_FILE (test/setup/loopback-tls.ts), as a Worker on Cloudflare trusts a public one; it admits basic
// auth or a Cloudflare Access service token and answers 401 or 403 otherwise.
describe('office-to-pdf through an HTTPS GOTENBERG_URL with credentials', () => {
  const https = inject('sidecarHttps')
  /** The settings as loadConfig validates them from the Worker's vars and secrets. */
  const settingsWith = (more: Record<string, string>) => loadConfig({ ...env, GOTENBERG_URL: https.url, ...more })

  it('converts with basic auth (a UTF-8 password) and with an Access service token', async () => {
    expect(https.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/)
    for (const settings of [
      settingsWith({ GOTENBERG_USERNAME: https.username, GOTENBERG_PASSWORD: https.password }),
      settingsWith({
        GOTENBERG_ACCESS_CLIENT_ID: https.accessClientId,
        GOTENBERG_ACCESS_CLIENT_SECRET: https.accessClientSecret,
      }),
    ]) {
      const [pdf] = await convertAll(
        officeToPdf,
        inputFromBytes('hello.odt', officeDocument('hello.odt')),
        testContext({ settings }),
      )
      expect(startsWithPdf(await outputBytes(pdf!))).toBe(true)
    }
    const { htmlToPdf } = await import('../../worker/converters/html-to-pdf')
    const settings = settingsWith({ GOTENBERG_USERNAME: https.username, GOTENBERG_PASSWORD: https.password })
    const [page] = await convertAll(
      htmlToPdf,
      inputFromBytes('page.html', new TextEncoder().encode('<h1>Over TLS</h1>')),
      testContext({ settings }),
    )
    expect(startsWithPdf(await outputBytes(page!))).toBe(true)
  })

  it.each([
    ['a wrong password', { GOTENBERG_USERNAME: 'edgefloor', GOTENBERG_PASSWORD: 'not the password' }, 401],
    [
      'a wrong Access secret',
      { GOTENBERG_ACCESS_CLIENT_ID: 'edgefloor-test.access', GOTENBERG_ACCESS_CLIENT_SECRET: 'not the secret' },
      403,
    ],
  ])(
    'reports %s as a misconfigured converter, retried, the status in the cause only',
    async (_case, credentials, status) => {
      const failure = await convertAll(
        officeToPdf,
        inputFromBytes('hello.odt', officeDocument('hello.odt')),
        testContext({ settings: settingsWith(credentials) }),
      ).catch((error) => error)
      expect(failure).toMatchObject({
        name: 'ConversionError',
        retryable: true,
        code: 'CONVERTER_MISCONFIGURED',
        message: 'the document converter is misconfigured',
      })
      expect(failure.cause).toMatchObject({ kind: 'credentials', status })
    },
  )
})

describe('GOTENBERG_URL validation', () => {
  const base = { JWT_SECRET: 'x'.repeat(32) }
  it.each([
    ['http://gotenberg.example.com', {}, 'must be https://'],
    ['https://gotenberg.example.com', {}, 'needs credentials'],
    ['https://gotenberg.example.com', { GOTENBERG_ACCESS_CLIENT_ID: 'id' }, 'go together'],
  ])('refuses %s with %j', async (url, more, message) => {
    const { loadConfig } = await import('../../worker/config')
    expect(() => loadConfig({ ...base, GOTENBERG_URL: url, ...more })).toThrow(
      new RegExp(`GOTENBERG_URL: .*${message}`),
    )
  })

  it.each([
    ['http://127.0.0.1:3000', {}],
    ['http://localhost:3000', {}],
    ['http://[::1]:3000', {}],
    ['https://gotenberg.example.com', { GOTENBERG_USERNAME: 'edgefloor', GOTENBERG_PASSWORD: 'secret' }],
    [
      'https://gotenberg.example.com',
      { GOTENBERG_ACCESS_CLIENT_ID: 'id.access', GOTENBERG_ACCESS_CLIENT_SECRET: 'secret' },
    ],
  ])('accepts %s with %j', async (url, more) => {
    const { loadConfig } = await import('../../worker/config')
    expect(loadConfig({ ...base, GOTENBERG_URL: url, ...more }).GOTENBERG_URL).toBe(url)
  })
})

// .html and .md through Gotenberg's Chromium routes on the real sidecar, then to PNG pages like any PDF.
describe('html-to-pdf', () => {
  it('converts an HTML page and a Markdown table to PDFs that render', async () => {
    const { htmlToPdf } = await import('../../worker/converters/html-to-pdf')
    const html = new TextEncoder().encode(
      '<!doctype html><html><body><h1 style="page-break-after: always">First page</h1><p>Second page</p></body></html>',
    )
    const [page] = await convertAll(htmlToPdf, inputFromBytes('report.html', html), testContext())
    expect(page).toMatchObject({ extension: '.pdf', contentType: 'application/pdf' })
    const pdf = await outputBytes(page!)
    expect(startsWithPdf(pdf)).toBe(true)
    expect((await pdfToPng.plan!(inputFromBytes('out.pdf', pdf), testContext())).total).toBe(2)
    const markdown = new TextEncoder().encode('# Notes\n\n| Item | Qty |\n| --- | --- |\n| Widget | 2 |\n')
    const [notes] = await convertAll(htmlToPdf, inputFromBytes('notes.md', markdown), testContext())
    const [png] = await convertAll(pdfToPng, inputFromBytes('notes.pdf', await outputBytes(notes!)), testContext())
    expect(png).toMatchObject({ extension: '.png' })
  })

  it.each([
    ['an empty page', 'empty.html', new Uint8Array(), /is empty/],
    ['Markdown that is not UTF-8', 'latin.md', new Uint8Array([0x23, 0x20, 0xe9, 0xff]), /is not UTF-8 text/],
  ])('refuses %s permanently', async (_case, name, bytes, message) => {
    const { htmlToPdf } = await import('../../worker/converters/html-to-pdf')
    const failure = await convertAll(htmlToPdf, inputFromBytes(name, bytes), testContext()).catch((error) => error)
    expect(failure).toMatchObject({ name: 'ConversionError', retryable: false })
    expect(failure.message).toMatch(message)
  })
})
