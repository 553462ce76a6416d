// The sidecar's Gotenberg 8 API against real LibreOffice: fields, headers, statuses, zip and merge, limits.
import { execFileSync } from 'node:child_process'
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { GOTENBERG_VERSION, optionsFromEnv, startSidecar, type RunningSidecar } from '../../sidecar/server'
import { zip } from '../../sidecar/zip'
import { startReceiver } from '../support/loopback-receiver'
import { busyOffice, signalOffice, until } from '../support/office-pool'

const fixture = (name: string) => new Blob([readFileSync(join(inject('officeDocumentsDir'), name))])
const scratch = mkdtempSync(join(tmpdir(), 'sidecar-test-'))

function pdfFacts(bytes: ArrayBuffer) {
  const path = join(scratch, `${Math.random()}.pdf`)
  writeFileSync(path, Buffer.from(bytes))
  const info = execFileSync('pdfinfo', [path], { encoding: 'utf8' })
  return {
    pages: Number(/Pages:\s+(\d+)/.exec(info)?.[1]),
    text: execFileSync('pdftotext', [path, '-'], { encoding: 'utf8' }),
  }
}

function form(files: Record<string, [string, string]>, fields: Record<string, string> = {}) {
  const body = new FormData()
  for (const [field, [fixtureName, as]] of Object.entries(files)) body.append(field, fixture(fixtureName), as)
  for (const [name, value] of Object.entries(fields)) body.append(name, value)
  return body
}

let sidecar: RunningSidecar
const base = () => sidecar.url

beforeAll(async () => {
  sidecar = await startSidecar({
    ...optionsFromEnv({}),
    port: 0,
    processes: 1,
    queueSize: 16,
    maxBytes: 2 * 1024 * 1024,
  })
})
afterAll(() => sidecar.close())

describe('sidecar: Gotenberg API', () => {
  it('answers health and version like Gotenberg', async () => {
    const health = await fetch(`${base()}/health`)
    expect(await health.json()).toMatchObject({ status: 'up', details: { libreoffice: { status: 'up' } } })
    expect(await (await fetch(`${base()}/version`)).text()).toBe(GOTENBERG_VERSION)
  })

  it('converts one document into a PDF, with the output filename and trace headers', async () => {
    const res = await fetch(`${base()}/forms/libreoffice/convert`, {
      method: 'POST',
      body: form({ files: ['hello.docx', 'hello.docx'] }),
      headers: { 'gotenberg-output-filename': 'report', 'gotenberg-trace': 'trace-123' },
    })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/pdf')
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="report.pdf"')
    expect(res.headers.get('gotenberg-trace')).toBe('trace-123')
    const facts = pdfFacts(await res.arrayBuffer())
    expect(facts.pages).toBe(1)
    expect(facts.text).toContain('Edgefloor office test')
  })

  it('answers several documents as a zip, or one merged PDF with merge=true', async () => {
    const zipped = await fetch(`${base()}/forms/libreoffice/convert`, {
      method: 'POST',
      body: form({ a: ['hello.odt', 'hello.odt'], b: ['data.xlsx', 'data.xlsx'] }),
    })
    expect(zipped.headers.get('content-type')).toBe('application/zip')
    const zipPath = join(scratch, 'out.zip')
    writeFileSync(zipPath, Buffer.from(await zipped.arrayBuffer()))
    expect(execFileSync('unzip', ['-Z1', zipPath], { encoding: 'utf8' }).trim().split('\n').sort()).toEqual([
      'data.xlsx.pdf',
      'hello.odt.pdf',
    ])
    const merged = await fetch(`${base()}/forms/libreoffice/convert`, {
      method: 'POST',
      body: form({ a: ['hello.rtf', 'hello.rtf'], b: ['data.csv', 'data.csv'] }, { merge: 'true' }),
    })
    expect(pdfFacts(await merged.arrayBuffer()).pages).toBe(2)
  })

  it("keeps the PDF/A declaration of merged documents, as Gotenberg's merge then PDF/A conversion does", async () => {
    const merged = await fetch(`${base()}/forms/libreoffice/convert`, {
      method: 'POST',
      body: form({ a: ['hello.rtf', 'hello.rtf'], b: ['hello.odt', 'hello.odt'] }, { merge: 'true', pdfa: 'PDF/A-2b' }),
    })
    expect(merged.status).toBe(200)
    const path = join(scratch, 'merged-pdfa.pdf')
    writeFileSync(path, Buffer.from(await merged.arrayBuffer()))
    expect(
      execFileSync('exiftool', ['-s3', '-XMP-pdfaid:Part', '-XMP-pdfaid:Conformance', path], { encoding: 'utf8' })
        .trim()
        .split('\n'),
    ).toEqual(['2', 'B'])
    expect(pdfFacts(readFileSync(path).buffer as ArrayBuffer).pages).toBe(2)
  })

  it.each([
    ['no file', () => form({}, { merge: 'true' }), 400, 'no form file found'],
    [
      'only files LibreOffice cannot read',
      () => form({ a: ['data.csv', 'data.exe'], b: ['hello.rtf', 'notes'] }),
      400,
      'no form file found',
    ],
    [
      'a bad pdfa value',
      () => form({ files: ['hello.rtf', 'hello.rtf'] }, { pdfa: 'PDF/A-9' }),
      400,
      "The PDF format 'PDF/A-9' is not supported",
    ],
    // Gotenberg's words (its ErrPdfEngineMetadataValueNotSupported): an exiftool option as a key, a line break in a value.
    [
      'a metadata key that is no tag name',
      () => form({ files: ['hello.rtf', 'hello.rtf'] }, { metadata: '{"-@":"/etc/passwd"}' }),
      400,
      'The requested metadata could not be written; ensure values are valid and free of control characters.',
    ],
    [
      'a metadata value with a line break',
      () => form({ files: ['hello.rtf', 'hello.rtf'] }, { metadata: '{"Title":"a\\n-FileName=/tmp/x"}' }),
      400,
      'The requested metadata could not be written',
    ],
    [
      'a watermark option pdfcpu has and we do not',
      () =>
        form(
          { files: ['hello.rtf', 'hello.rtf'] },
          { watermarkSource: 'text', watermarkExpression: 'X', watermarkOptions: '{"pos":"tl"}' },
        ),
      400,
      "option 'pos' is not supported here",
    ],
    [
      'restricted permissions without a password',
      () => form({ files: ['hello.rtf', 'hello.rtf'] }, { allowPrinting: 'false' }),
      400,
      "Invalid form data: permission restrictions require a 'userPassword' or 'ownerPassword'",
    ],
    [
      'a split span of 0',
      () => form({ files: ['hello.rtf', 'hello.rtf'] }, { splitMode: 'intervals', splitSpan: '0' }),
      400,
      "form field 'splitSpan' is invalid (got '0', resulting to value is inferior to 1)",
    ],
    [
      'a document LibreOffice cannot read',
      () => {
        // A whole zip that is no office package (a zip cut short is refused before LibreOffice: libreoffice.test.ts).
        const body = new FormData()
        body.append(
          'files',
          new Blob([zip([{ name: 'notes/a.txt', bytes: new TextEncoder().encode('garbage') }])]),
          'broken.docx',
        )
        return body
      },
      400,
      'LibreOffice could not open the document',
    ],
  ])('refuses %s with %s and a plain-text reason', async (_case, body, status, message) => {
    const res = await fetch(`${base()}/forms/libreoffice/convert`, { method: 'POST', body: body() })
    expect(res.status).toBe(status)
    expect(res.headers.get('content-type')).toContain('text/plain')
    expect(await res.text()).toContain(message)
  })

  // Gotenberg answers these before reading the form: 415 when the body is not multipart at all (or has no
  // boundary to split it by), 400 when the multipart body does not match its boundary.
  it.each([
    [
      'a JSON body',
      { 'content-type': 'application/json' },
      '{"files":"hello.docx"}',
      415,
      "want 'multipart/form-data'",
    ],
    ['a body with no content type', {}, 'hello', 415, "want 'multipart/form-data'"],
    [
      'a urlencoded form',
      { 'content-type': 'application/x-www-form-urlencoded' },
      'merge=true',
      415,
      "want 'multipart/form-data'",
    ],
    ['multipart without a boundary', { 'content-type': 'multipart/form-data' }, 'hello', 415, 'no boundary'],
    [
      'multipart whose body misses its boundary',
      { 'content-type': 'multipart/form-data; boundary=edgefloor' },
      '--other\r\ncontent-disposition: form-data; name="a"\r\n\r\nb\r\n--other--\r\n',
      400,
      'Malformed body',
    ],
    [
      'multipart cut off mid-part',
      { 'content-type': 'multipart/form-data; boundary=edgefloor' },
      '--edgefloor\r\ncontent-disposition: form-data; name="files"; filename="a.docx"\r\n\r\nPK',
      400,
      'Malformed body',
    ],
  ])('refuses %s with %s and the trace header', async (_case, headers, body, status, message) => {
    const res = await fetch(`${base()}/forms/libreoffice/convert`, {
      method: 'POST',
      body,
      headers: { ...headers, 'gotenberg-trace': 'trace-bad-body' },
    })
    expect(res.status).toBe(status)
    expect(res.headers.get('gotenberg-trace')).toBe('trace-bad-body')
    expect(await res.text()).toContain(message)
  })

  it('answers 405 to a known path asked with another method, and 404 elsewhere, with the trace header', async () => {
    const wrongMethod = await fetch(`${base()}/forms/libreoffice/convert`, {
      headers: { 'gotenberg-trace': 'trace-405' },
    })
    expect(wrongMethod.status).toBe(405)
    expect(wrongMethod.headers.get('allow')).toBe('POST')
    expect(wrongMethod.headers.get('gotenberg-trace')).toBe('trace-405')
    expect(await wrongMethod.text()).toBe('Method Not Allowed')
    expect((await fetch(`${base()}/version`, { method: 'POST' })).status).toBe(405)
    const unknown = await fetch(`${base()}/forms/chromium/convert/docx`, { method: 'POST' })
    expect(unknown.status).toBe(404)
    expect(await unknown.text()).toBe('Not Found')
  })

  it('converts the convertible files of a form and leaves the others out, as Gotenberg does', async () => {
    const res = await fetch(`${base()}/forms/libreoffice/convert`, {
      method: 'POST',
      body: form({ a: ['hello.rtf', 'hello.rtf'], b: ['data.csv', 'data.exe'] }),
    })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/pdf')
    expect(pdfFacts(await res.arrayBuffer()).text).toContain('Edgefloor office test')
  })

  it('refuses a body over SIDECAR_MAX_BYTES with 413', async () => {
    const body = new FormData()
    body.append('files', new Blob([new Uint8Array(3 * 1024 * 1024)]), 'big.docx')
    const res = await fetch(`${base()}/forms/libreoffice/convert`, { method: 'POST', body })
    expect(res.status).toBe(413)
  })

  it('serves Gotenberg 6 clients on /convert/office', async () => {
    const res = await fetch(`${base()}/convert/office`, {
      method: 'POST',
      body: form({ files: ['hello.odt', 'hello.odt'] }),
    })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/pdf')
  })
})

describe('sidecar: limits', () => {
  it('asks for basic auth when configured', async () => {
    // Another server in front of the same LibreOffice pool: basic auth is the server's, not LibreOffice's.
    const guarded = await startSidecar(
      { ...optionsFromEnv({}), port: 0, username: 'u', password: 'p' },
      sidecar.pool,
      sidecar.chromium,
    )
    try {
      const denied = await fetch(`${guarded.url}/forms/libreoffice/convert`, {
        method: 'POST',
        body: form({ files: ['hello.rtf', 'hello.rtf'] }),
        headers: { 'gotenberg-trace': 'job-401' },
      })
      expect(denied.status).toBe(401)
      expect(denied.headers.get('gotenberg-trace')).toBe('job-401')
      expect(denied.headers.get('www-authenticate')).toContain('Basic')
      const wrong = await fetch(`${guarded.url}/forms/libreoffice/convert`, {
        method: 'POST',
        body: form({ files: ['hello.rtf', 'hello.rtf'] }),
        headers: { authorization: `Basic ${Buffer.from('u:wrong').toString('base64')}` },
      })
      expect(wrong.status).toBe(401)
      expect(wrong.headers.get('gotenberg-trace')).toBeTruthy()
      const allowed = await fetch(`${guarded.url}/forms/libreoffice/convert`, {
        method: 'POST',
        body: form({ files: ['hello.rtf', 'hello.rtf'] }),
        headers: { authorization: `Basic ${Buffer.from('u:p').toString('base64')}` },
      })
      expect(allowed.status).toBe(200)
    } finally {
      await guarded.close()
    }
  })

  it('converts 10 simultaneous requests, all of them', async () => {
    const statuses = await Promise.all(
      Array.from({ length: 10 }, () =>
        fetch(`${base()}/forms/libreoffice/convert`, {
          method: 'POST',
          body: form({ files: ['hello.rtf', 'hello.rtf'] }),
        }).then(async (res) => {
          await res.arrayBuffer()
          return res.status
        }),
      ),
    )
    expect(statuses).toEqual(Array(10).fill(200))
  }, 120_000)

  it('answers 429 when the queue is full, and converts what it accepted', async () => {
    const small = await startSidecar({ ...optionsFromEnv({}), port: 0, processes: 1, queueSize: 1 })
    const post = (body: FormData) =>
      fetch(`${small.url}/forms/libreoffice/convert`, { method: 'POST', body }).then(async (res) => ({
        status: res.status,
        text: await res.text(),
      }))
    try {
      // A frozen LibreOffice holds the one process, one document waits in the queue of one, and the next is
      // refused: an order the test sets up, not one it hopes for.
      const slow = new FormData()
      slow.append(
        'files',
        new Blob([Array.from({ length: 300_000 }, (_, i) => `item ${i},${i * 3}`).join('\n')]),
        'slow.csv',
      )
      const running = post(slow)
      const folder = await busyOffice(small)
      signalOffice(folder, 'STOP')
      const queued = post(form({ files: ['hello.rtf', 'hello.rtf'] }))
      await until(() => small.pool.stats.queued === 1, 'the second document queueing')
      const refused = await post(form({ files: ['hello.rtf', 'hello.rtf'] }))
      expect(refused).toEqual({ status: 429, text: 'Too Many Requests' })
      // Ending the frozen conversion (its LibreOffice killed: 503) lets the queued document through.
      signalOffice(folder, 'KILL')
      expect((await running).status).toBe(503)
      expect((await queued).status).toBe(200)
    } finally {
      await small.close()
    }
  })

  it('refuses a webhook or download on a loopback address unless allowed (403, nothing sent)', async () => {
    const receiver = await startReceiver()
    try {
      const hooked = await fetch(`${base()}/forms/libreoffice/convert`, {
        method: 'POST',
        body: form({ files: ['hello.docx', 'hello.docx'] }),
        headers: {
          'gotenberg-webhook-url': `${receiver.url}/webhook`,
          'gotenberg-webhook-error-url': `${receiver.url}/webhook/error`,
        },
      })
      expect(hooked.status).toBe(403)
      expect(await hooked.text()).toMatch(
        /^Forbidden: the 'Gotenberg-Webhook-Url' header: .* names a special-use address \(loopback\): only global unicast addresses are reached$/,
      )
      const downloaded = await fetch(`${base()}/forms/libreoffice/convert`, {
        method: 'POST',
        body: form({}, { downloadFrom: JSON.stringify([{ url: `${receiver.url}/a.docx` }]) }),
      })
      expect(downloaded.status).toBe(403)
      expect(receiver.received).toEqual([])
    } finally {
      await receiver.close()
    }
  })

  it("answers a webhook request 204 and sends a failed conversion's error to the error URL", async () => {
    const outward = await startSidecar(
      { ...optionsFromEnv({ SIDECAR_ALLOWED_PRIVATE_HOSTS: '127.0.0.1' }), port: 0, processes: 1, queueSize: 4 },
      sidecar.pool,
      sidecar.chromium,
    )
    const receiver = await startReceiver()
    try {
      const res = await fetch(`${outward.url}/forms/libreoffice/convert`, {
        method: 'POST',
        body: form({ files: ['hello.docx', 'hello.docx'] }, { landscape: 'maybe' }),
        headers: {
          'gotenberg-webhook-url': `${receiver.url}/webhook`,
          'gotenberg-webhook-error-url': `${receiver.url}/webhook/error`,
          'gotenberg-trace': 'hook-error',
        },
      })
      expect(res.status).toBe(204)
      const error = await receiver.request('/webhook/error')
      expect(error.headers['gotenberg-trace']).toBe('hook-error')
      expect(JSON.parse(error.body.toString())).toEqual({
        status: 400,
        message: `Invalid form data: form field 'landscape' is invalid (got 'maybe', resulting to strconv.ParseBool: parsing "maybe": invalid syntax)`,
      })
      expect(receiver.received.map((entry) => entry.path)).toEqual(['/webhook/error'])
    } finally {
      await outward.close()
      await receiver.close()
    }
  })
})
