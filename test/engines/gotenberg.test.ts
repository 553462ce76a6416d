// The Worker's Gotenberg client against the loopback stand-in (test/setup/gotenberg-stand-in.ts), which records
// what it receives and answers what the test's trace asks for: the request Gotenberg gets, and how each of
// Gotenberg's answers becomes a permanent or a transient ConversionError.
import { describe, expect, inject, it } from 'vitest'
import { zip } from '../../sidecar/zip'
import { officeToPdf } from '../../worker/converters/office-to-pdf'
import { convertOfficeToPdf, type GotenbergSettings, type OfficeOptions } from '../../worker/engines/gotenberg'
import type { RecordedGotenbergRequest } from '../setup/gotenberg-stand-in'
import { convertAll, inputFromBytes, outputBytes, testContext } from '../support/conversion'

const standIn = () => inject('gotenbergStandInUrl')
/** A whole zip (the office converter refuses one cut short before any request): the stand-in never opens it. */
const DOCX = {
  filename: 'document.docx',
  bytes: zip([{ name: 'word/document.xml', bytes: new TextEncoder().encode('<w:document/>') }]),
  contentType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
}

/** A trace no other test uses, with the stand-in's behaviour as its prefix. */
const trace = (behaviour: string) => `${behaviour}-${crypto.randomUUID()}`

function convert(jobId: string, options: OfficeOptions = {}, settings: Partial<GotenbergSettings> = {}) {
  return convertOfficeToPdf({ url: standIn(), timeoutMs: 10_000, ...settings }, DOCX, options, jobId)
}

async function received(jobId: string): Promise<RecordedGotenbergRequest[]> {
  return (await fetch(`${standIn()}/requests/${encodeURIComponent(jobId)}`)).json()
}

/** The user:password a Basic authorization carries, read as UTF-8 (throws on bytes that are not UTF-8). */
function credentials(authorization = ''): string {
  const bytes = Uint8Array.fromBase64(authorization.replace(/^Basic /, ''))
  return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes)
}

describe('Gotenberg client: the request', () => {
  it('posts the document to /forms/libreoffice/convert with the job id as Gotenberg-Trace, and streams the PDF back', async () => {
    const jobId = trace('ok')
    const pdf = new Uint8Array(await new Response(await convert(jobId)).arrayBuffer())
    expect(new TextDecoder().decode(pdf.subarray(0, 5))).toBe('%PDF-')
    expect(await received(jobId)).toEqual([
      {
        path: '/forms/libreoffice/convert',
        trace: jobId,
        fields: {},
        files: [{ field: 'files', name: 'document.docx', size: DOCX.bytes.byteLength }],
      },
    ])
  })

  it('sends the options as Gotenberg form fields, and leaves out those not given', async () => {
    const jobId = trace('ok')
    await convert(jobId, {
      landscape: true,
      nativePageRanges: '1-2,4',
      pdfa: 'PDF/A-2b',
      pdfua: true,
      password: 's3cret',
    })
    const [request] = await received(jobId)
    expect(request?.fields).toEqual({
      landscape: 'true',
      nativePageRanges: '1-2,4',
      pdfa: 'PDF/A-2b',
      pdfua: 'true',
      password: 's3cret',
    })
    const plain = trace('ok')
    await convert(plain, { landscape: false, pdfua: false })
    expect((await received(plain))[0]?.fields).toEqual({})
  })

  it('sends the further Gotenberg fields as given', async () => {
    const jobId = trace('ok')
    await new Response(
      await convert(jobId, { extra: { flatten: 'true', quality: '80', metadata: '{"Title":"T"}' } }),
    ).arrayBuffer()
    expect((await received(jobId))[0]?.fields).toEqual({ flatten: 'true', quality: '80', metadata: '{"Title":"T"}' })
  })

  it('sends no authorization without GOTENBERG_USERNAME, and basic auth with it', async () => {
    const anonymous = trace('ok')
    await convert(anonymous)
    expect((await received(anonymous))[0]?.authorization).toBeUndefined()
    const jobId = trace('ok')
    await convert(jobId, {}, { username: 'edgefloor', password: 'open sesame' })
    expect((await received(jobId))[0]?.authorization).toBe(`Basic ${btoa('edgefloor:open sesame')}`)
  })

  it('encodes a non-ASCII username and password as UTF-8 before base64', async () => {
    const jobId = trace('ok')
    await convert(jobId, {}, { username: 'José', password: 'пароль-密码-🔑' })
    const authorization = (await received(jobId))[0]?.authorization
    expect(authorization).toMatch(/^Basic [A-Za-z0-9+/]+=*$/)
    expect(credentials(authorization)).toBe('José:пароль-密码-🔑')
  })
})

describe('Gotenberg client: the answers', () => {
  it("fails with a document fault on 400, keeping Gotenberg's text as the reason", async () => {
    const failure = await convert(trace('status-400')).catch((error) => error)
    expect(failure).toMatchObject({ name: 'GotenbergError', kind: 'document', status: 400, code: 'CONVERSION_FAILED' })
    expect(failure.reason).toBe("Invalid form data: form field 'pdfa' is invalid (got 'PDF/A-9')")
  })

  it('fails permanently on 413, the document being too large', async () => {
    const failure = await convert(trace('status-413')).catch((error) => error)
    expect(failure).toMatchObject({ kind: 'document', status: 413, reason: 'Request Entity Too Large' })
    expect(failure.code).toBe('FILE_TOO_LARGE')
  })

  // Gotenberg 8 answers 415 Unsupported Media Type when a route gets no file of an extension it converts.
  it('fails with UNSUPPORTED_FORMAT on 415, the code coming from the engine', async () => {
    const failure = await convert(trace('status-415')).catch((error) => error)
    expect(failure).toMatchObject({ kind: 'document', status: 415, code: 'UNSUPPORTED_FORMAT' })
  })

  it.each([
    [429, 'Too Many Requests'],
    [500, 'Internal Server Error'],
    [502, 'Bad Gateway'],
    [503, 'Service Unavailable'],
  ])('treats %i as transient, for the queue to retry', async (status, reason) => {
    const failure = await convert(trace(`status-${status}`)).catch((error) => error)
    expect(failure).toMatchObject({
      name: 'GotenbergError',
      kind: 'server',
      status,
      reason,
      code: 'CONVERTER_UNAVAILABLE',
    })
  })

  it("treats refused credentials as transient: a configuration fault, not the document's", async () => {
    const failure = await convert(trace('status-401'), {}, { username: 'edgefloor', password: 'wrong' }).catch(
      (error) => error,
    )
    expect(failure).toMatchObject({ kind: 'credentials', status: 401, code: 'CONVERTER_MISCONFIGURED' })
    expect(failure.message).toContain('GOTENBERG_USERNAME')
  })

  it('gives up after GOTENBERG_TIMEOUT_MS and treats the timeout as transient', async () => {
    const jobId = trace('hang')
    const failure = await convert(jobId, {}, { timeoutMs: 300 }).catch((error) => error)
    expect(failure).toMatchObject({ name: 'GotenbergError', kind: 'timeout', code: 'CONVERTER_TIMEOUT' })
    expect(failure.message).toMatch(/did not answer within 300 ms$/)
    expect(await received(jobId)).toHaveLength(1)
  })
})

describe('Gotenberg client: wired by the office converter', () => {
  it('fails the PDF rather than pass on a plain one when userPassword asked for encryption', async () => {
    // The stand-in ignores userPassword, as a Gotenberg that dropped the field would: its PDF is not encrypted.
    const ctx = testContext({
      jobId: trace('ok'),
      settings: { GOTENBERG_URL: standIn() },
      options: { userPassword: 'secret' },
    })
    const [output] = await convertAll(officeToPdf, inputFromBytes('Report.docx', DOCX.bytes), ctx)
    const failure = await outputBytes(output!).catch((error) => error)
    expect(failure).toMatchObject({ name: 'ConversionError', code: 'CONVERTER_MISCONFIGURED', retryable: false })
    expect(failure.message).toContain('unencrypted PDF')
  })

  it('takes GOTENBERG_URL, the credentials and GOTENBERG_TIMEOUT_MS from the config, and the options from the request', async () => {
    const jobId = trace('ok')
    const settings = {
      GOTENBERG_URL: standIn(),
      GOTENBERG_USERNAME: 'edgefloor',
      GOTENBERG_PASSWORD: 'pässwörd',
      GOTENBERG_TIMEOUT_MS: 10_000,
    }
    const options = {
      landscape: 'true',
      nativePageRanges: '2-3',
      pdfa: 'PDF/A-3b',
      pdfua: true,
      password: 's3cret',
      unrelated: 'x',
    }
    await convertAll(officeToPdf, inputFromBytes('Report.DOCX', DOCX.bytes), testContext({ jobId, settings, options }))
    const [request] = await received(jobId)
    expect(request).toMatchObject({ trace: jobId, files: [{ field: 'files', name: 'document.docx' }] })
    expect(request?.fields).toEqual({
      landscape: 'true',
      nativePageRanges: '2-3',
      pdfa: 'PDF/A-3b',
      pdfua: 'true',
      password: 's3cret',
    })
    expect(credentials(request?.authorization)).toBe('edgefloor:pässwörd')
    const late = await convertAll(
      officeToPdf,
      inputFromBytes('Report.docx', DOCX.bytes),
      testContext({ jobId: trace('hang'), settings: { ...settings, GOTENBERG_TIMEOUT_MS: 200 } }),
    ).catch((error) => error)
    // The job's public reason names no URL or setting; the engine's message, in the cause, goes to the log.
    expect(late).toMatchObject({
      name: 'ConversionError',
      retryable: true,
      code: 'CONVERTER_TIMEOUT',
      message: 'the document converter did not answer in time',
    })
    expect(late.cause).toMatchObject({
      kind: 'timeout',
      message: expect.stringMatching(/did not answer within 200 ms$/),
    })
  })
})
