// Encrypted PDFs' streams measured decrypted before PDFium decodes them (issue 17), on PDFs encrypted by qpdf
// (test/setup/encrypted-pdfs.ts) with every kind of the standard security handler of ISO 32000-2 §7.6.4: RC4 40
// and 128 bits (V 1–2, R 2–3, and V 4's /V2 crypt filter), AES-128 (/AESV2, with and without /EncryptMetadata) and
// AES-256 (/AESV3, revisions 5 and 6).
import { describe, expect, inject, it } from 'vitest'
import { pdfToPng } from '../../worker/converters/pdf-to-png'
import { decodeImage } from '../../worker/engines/image/decode'
import { findPdfDecryptions, PdfPasswordError } from '../../worker/engines/pdf-crypt'
import { findPdfStreams, measurePdfStreams } from '../../worker/engines/pdf-streams'
import { signUp } from '../support/accounts'
import { callJson } from '../support/api'
import { convertAll, inputFromBytes, outputBytes, TEST_IMAGE_LIMITS, testContext } from '../support/conversion'
import { uploaded } from '../support/files'
import { encrypted } from '../fixtures/pdf/pdfs'
import { SQUARE_PAGE_CONTENT_BYTES } from '../support/pdf'
import type { EncryptionKind } from '../support/qpdf'
import { turnsDuring } from '../support/turns'

const KINDS: EncryptionKind[] = [
  'rc4-40',
  'rc4-128',
  'rc4-128-v4',
  'aes-128',
  'aes-128-clear-metadata',
  'aes-256-r5',
  'aes-256',
]

const pdf = (name: string) => Uint8Array.fromBase64(inject('encryptedPdfs')[name]!)

const BUDGET = { maxStreamBytes: 2 ** 30, maxTotalBytes: 2 ** 30 }

/** A generator that pauses between slices, run to its end at once. */
function finish<T>(steps: Generator<void, T>): T {
  for (;;) {
    const step = steps.next()
    if (step.done) return step.value
  }
}

const decryptionsOf = (bytes: Uint8Array, password?: string) => finish(findPdfDecryptions(bytes, password))

/** What the pre-scan counts of every stream, decrypted with the keys the password gives. */
const measured = (bytes: Uint8Array, password?: string) =>
  finish(measurePdfStreams(bytes, findPdfStreams(bytes), BUDGET, 0, decryptionsOf(bytes, password)))

/** Share of dark pixels in the rendered page's lower left quarter (the square) and in the rest. */
async function squareInk(png: Uint8Array) {
  const image = await decodeImage(png, TEST_IMAGE_LIMITS)
  const dark = (x0: number, y0: number, x1: number, y1: number) => {
    let count = 0
    let total = 0
    for (let y = Math.floor(y0 * image.height); y < y1 * image.height; y++) {
      for (let x = Math.floor(x0 * image.width); x < x1 * image.width; x++) {
        if (image.data[(y * image.width + x) * 4]! < 128) count++
        total++
      }
    }
    return count / total
  }
  return { square: dark(0.02, 0.52, 0.48, 0.98), rest: dark(0.52, 0.02, 0.98, 0.48) }
}

describe('the standard security handler, against qpdf', () => {
  it.each(KINDS)("measures a %s page's content stream decrypted: the bytes qpdf compressed", (kind) => {
    expect(measured(pdf(`page-${kind}.pdf`))).toBe(SQUARE_PAGE_CONTENT_BYTES)
  })

  it.each(KINDS)('finds the same key with the user password and with the owner password (%s)', (kind) => {
    const locked = pdf(`locked-${kind}.pdf`)
    expect(measured(locked, 's3cret')).toBe(SQUARE_PAGE_CONTENT_BYTES)
    expect(measured(locked, 'owner-secret')).toBe(SQUARE_PAGE_CONTENT_BYTES)
    expect(() => decryptionsOf(locked)).toThrow(PdfPasswordError)
    expect(() => decryptionsOf(locked, 'nope')).toThrow(PdfPasswordError)
  })

  it('reads a PDF LibreOffice encrypted (RC4-128, /O and /U as literal strings with escapes) with its password only', () => {
    // Its three pages' Flate content streams inflate to some hundreds of bytes each when the key is right.
    expect(measured(encrypted, 's3cret')).toBeGreaterThan(300)
    expect(() => decryptionsOf(encrypted)).toThrow(PdfPasswordError)
  })

  it.each(KINDS)('renders a %s page with an empty user password, its square where it is', async (kind) => {
    const [output] = await convertAll(pdfToPng, inputFromBytes('page.pdf', pdf(`page-${kind}.pdf`)), testContext())
    const ink = await squareInk(await outputBytes(output!))
    expect(ink.square).toBe(1)
    expect(ink.rest).toBe(0)
  })

  it.each([
    ['without a password', {}, 'password-protected PDF: give its password as options.password'],
    ['with a wrong one', { password: 'nope' }, 'password-protected PDF: the password is wrong'],
  ])('refuses a PDF with a user password %s, as before', async (_case, options, message) => {
    await expect(
      pdfToPng.plan!(inputFromBytes('locked.pdf', pdf('locked-aes-256.pdf')), testContext({ options })),
    ).rejects.toMatchObject({ retryable: false, message })
  })

  it.each([['s3cret'], ['owner-secret']])('renders a PDF opened with its password %s', async (password) => {
    const [output] = await convertAll(
      pdfToPng,
      inputFromBytes('locked.pdf', pdf('locked-rc4-128.pdf')),
      testContext({ options: { password } }),
    )
    expect((await squareInk(await outputBytes(output!))).square).toBe(1)
  })

  it.each(['rc4-40', 'rc4-128', 'aes-128', 'aes-256'])(
    'refuses the Flate bomb encrypted with %s, measured in slices with turns between them',
    async (kind) => {
      const input = inputFromBytes('bomb.pdf', pdf(`flate-bomb-${kind}.pdf`))
      const { result: failure, turns } = await turnsDuring(() =>
        pdfToPng.plan!(input, testContext()).catch((error) => error),
      )
      expect(failure).toMatchObject({ name: 'ConversionError', retryable: false })
      expect(failure.message).toMatch(
        /object \d+'s stream decodes to more than \d+ bytes; a PDF's stream may decode to at most \d+ bytes \(PDF_MAX_BYTES\)/,
      )
      expect(turns).toBeGreaterThanOrEqual(20)
    },
  )

  it('renders an encrypted page through the queue', async () => {
    const user = await signUp()
    const source = await uploaded(user, 'page.pdf', pdf('page-aes-256.pdf'))
    const res = await callJson('POST', `/files/${source._id}/convert`, { token: user.token })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    const jobs = (await callJson('GET', `/files/${source._id}/jobs`, { token: user.token })).body
    expect(jobs).toMatchObject([{ status: 'done' }])
  })
})
