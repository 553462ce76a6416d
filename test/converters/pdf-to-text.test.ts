// Text as a conversion target: PDFium's text extraction compared with poppler's pdftotext on the same PDFs
// (made here, and by LibreOffice), and POST /files/:id/convert { to: ".txt" } through every kind of input.
import { describe, expect, inject, it } from 'vitest'
import { converterFor } from '../../worker/converters/registry'
import { pdfToText } from '../../worker/converters/pdf-to-text'
import { speechWav } from '../fixtures/audio/speech'
import { pattern_jpg } from '../fixtures/images/images'
import { encrypted } from '../fixtures/pdf/pdfs'
import { call, callJson } from '../support/api'
import { signUp } from '../support/accounts'
import { inputFromBytes, outputBytes, testContext } from '../support/conversion'
import { uploaded } from '../support/files'
import { officeDocument } from '../support/office-documents'

const bytes = (base64: string) => Uint8Array.from(atob(base64), (char) => char.charCodeAt(0))
const words = (text: string) => text.split(/\s+/).filter(Boolean)
/** pdftotext ends every page with a form feed; Edgefloor puts one between pages. */
const pages = (text: string) => text.replace(/\f$/, '').split('\f')

/** The text, read while the converter still has the document open (as the pipeline stores each output). */
async function extracted(name: string, pdf: Uint8Array): Promise<string> {
  for await (const output of pdfToText.convert(inputFromBytes(name, pdf, 'application/pdf'), testContext()))
    return new TextDecoder().decode(await outputBytes(output))
  throw new Error('no output')
}

describe('pdf-to-text against pdftotext (poppler) on the same PDF', { timeout: 120_000 }, () => {
  const cases = Object.entries(inject('pdfTexts'))

  it.each(cases)(
    '%s: the same words in the same order, page by page, form feeds between pages',
    async (name, reference) => {
      const ours = await extracted(name, bytes(reference.pdf))
      expect(pages(ours)).toHaveLength(pages(reference.text).length)
      for (const [i, page] of pages(ours).entries())
        expect(words(page), `page ${i + 1}`).toEqual(words(pages(reference.text)[i]!))
      expect(ours.endsWith('\f')).toBe(false)
    },
  )

  it('keeps lines as lines', async () => {
    const ours = await extracted('prose.pdf', bytes(inject('pdfTexts')['prose.pdf'].pdf))
    expect(ours.split('\f')[0]!.split('\n')).toEqual([
      'Edgefloor extracts the text of PDF pages',
      'with the same engine that renders them,',
      'page by page, in reading order.',
    ])
  })

  it('answers an encrypted PDF as the PNG pages do', async () => {
    await expect(extracted('locked.pdf', encrypted)).rejects.toMatchObject({
      retryable: false,
      message: 'password-protected PDF: give its password as options.password',
    })
  })
})

describe('POST /files/:id/convert { to: ".txt" }', { timeout: 180_000 }, () => {
  it('runs the chain to text for a PDF: one .txt, no PNG pages', async () => {
    const user = await signUp()
    const reference = inject('pdfTexts')['prose.pdf']
    const file = await uploaded(user, 'prose.pdf', bytes(reference.pdf))
    const res = await callJson('POST', `/files/${file._id}/convert`, { token: user.token, json: { to: '.txt' } })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject([
      {
        name: 'prose (1 of 1)',
        extension: '.txt',
        content_type: 'text/plain',
        parent_file: file._id,
        metadata: { page_count: 3 },
      },
    ])
    const text = await (await call('GET', `/files/${res.body[0]!._id}/download`, { token: user.token })).text()
    expect(words(text)).toEqual(words(reference.text))
  })

  it('runs Office → PDF → text through the sidecar', async () => {
    const user = await signUp()
    const file = await uploaded(user, 'hello.docx', officeDocument('hello.docx'))
    const res = await callJson('POST', `/files/${file._id}/convert`, { token: user.token, json: { to: 'txt' } })
    expect(res.status).toBe(200)
    expect(res.body.map((made) => made.extension)).toEqual(['.pdf', '.txt'])
    const text = await (await call('GET', `/files/${res.body[1]!._id}/download`, { token: user.token })).text()
    expect(words(text)).toEqual(words(inject('pdfTexts')['hello.pdf'].text))
  })

  it('keeps text as text: the file itself, no job', async () => {
    const user = await signUp()
    const file = await uploaded(user, 'notes.txt', 'already text\n')
    const res = await callJson('POST', `/files/${file._id}/convert`, { token: user.token, json: { to: '.txt' } })
    expect(res).toMatchObject({ status: 200, body: [{ _id: file._id }] })
    expect((await callJson('GET', `/files/${file._id}/jobs`, { token: user.token })).body).toEqual([])
  })

  it('transcribes audio (the existing audio → text converter)', async () => {
    const user = await signUp()
    const file = await uploaded(user, 'speech.wav', speechWav)
    const res = await callJson('POST', `/files/${file._id}/convert`, { token: user.token, json: { to: '.txt' } })
    expect(res.status).toBe(200)
    // The transcript and its captions, and nothing made from them (the default chain would draw the text as PNG).
    expect(res.body.map((made) => made.extension)).toEqual(['.txt', '.vtt'])
  })

  it('refuses an image with 422 naming OCR as not supported, before any job', async () => {
    const user = await signUp()
    const file = await uploaded(user, 'scan.jpg', pattern_jpg)
    const res = await callJson('POST', `/files/${file._id}/convert`, { token: user.token, json: { to: '.txt' } })
    expect(res).toMatchObject({
      status: 422,
      body: {
        code: 'NOT_CONVERTIBLE',
        message:
          '"scan.jpg" cannot be converted to .txt: reading the text in an image needs OCR (optical character recognition), which is not supported',
      },
    })
    expect((await callJson('GET', `/files/${file._id}/jobs`, { token: user.token })).body).toEqual([])
  })

  it("without `to`, the chain is exactly the seed's: PDF → PNG pages", async () => {
    expect(converterFor('.pdf')?.name).toBe('pdf-to-png')
    const user = await signUp()
    const file = await uploaded(user, 'prose.pdf', bytes(inject('pdfTexts')['prose.pdf'].pdf))
    const res = await callJson('POST', `/files/${file._id}/convert`, { token: user.token })
    expect(res.status).toBe(200)
    expect(res.body.map((made) => made.extension)).toEqual(['.png', '.png', '.png'])
  })

  it('GET /convert/:extension lists every reachable target beside the default `to`', async () => {
    const user = await signUp()
    const get = async (extension: string) =>
      (await callJson('GET', `/convert/${extension}`, { token: user.token })).body
    expect(await get('docx')).toEqual({
      extension: '.docx',
      accepted: true,
      to: '.pdf',
      targets: ['.pdf', '.png', '.txt'],
    })
    expect(await get('pdf')).toEqual({ extension: '.pdf', accepted: true, to: '.png', targets: ['.png', '.txt'] })
    expect(await get('jpg')).toEqual({ extension: '.jpg', accepted: true, to: '.png', targets: ['.png'] })
    expect(await get('mp3')).toMatchObject({ to: '.txt', targets: ['.txt', '.png'] })
    expect(await get('xyz')).toEqual({ extension: '.xyz', accepted: false, to: null, targets: [] })
  })
})
