// Images embedded in a PDF page: PDFium decodes each at its full size whatever the DPI, so a page whose image is
// over PDF_MAX_IMAGE_PIXELS fails before it is drawn (through HTTP and the real queue), and pages within it render.
import { describe, expect, it } from 'vitest'
import { pattern_jpg } from '../fixtures/images/images'
import { callJson } from '../support/api'
import { signUp } from '../support/accounts'
import { downloadBytes, uploaded } from '../support/files'
import { buildPdf } from '../support/pdf'

const drawn = 'q 320 0 0 240 0 0 cm /Im0 Do Q'

describe('images embedded in a PDF', () => {
  it('fails a page that declares a 60000 × 60000 image with 422, before decoding it, the original intact', async () => {
    const bytes = buildPdf([
      { width: 320, height: 240, content: '0 0 0 rg 20 20 100 100 re f' },
      { width: 320, height: 240, content: drawn, jpeg: { bytes: pattern_jpg, width: 60_000, height: 60_000 } },
    ])
    const user = await signUp()
    const source = await uploaded(user, 'bomb.pdf', bytes)
    const res = await callJson('POST', `/files/${source._id}/convert`, { token: user.token })
    expect(res.status).toBe(422)
    expect(res.body.message).toBe(
      'pdf-to-png on "bomb.pdf" failed: page 2 holds a 60000 × 60000 image (3600000000 pixels); pages are drawn with images of at most 12000000 pixels',
    )
    const job = await callJson('GET', `/jobs/${res.body.job}`, { token: user.token })
    expect(job.body).toMatchObject({ status: 'failed', files: [] })
    expect((await callJson('GET', `/files/${source._id}`, { token: user.token })).body).toMatchObject({
      hash: source.hash,
      files: [],
    })
    expect((await downloadBytes(`/files/${source._id}/download`, { token: user.token })).bytes).toEqual(bytes)
  })

  it('fails a page whose 12 MP progressive 4:4:4 JPEG would not fit an isolate, before decoding it', async () => {
    // Within PDF_MAX_IMAGE_PIXELS, but PDFium's heap would hold its bitmap (48 MB) and, until the last scan, 2 bytes
    // for every DCT coefficient of its three full components (72 MB): the frame header alone tells, and is all given.
    const sof2 = [
      0xff,
      0xc2,
      0,
      17,
      8,
      3000 >> 8,
      3000 & 255,
      4000 >> 8,
      4000 & 255,
      3,
      1,
      0x11,
      0,
      2,
      0x11,
      0,
      3,
      0x11,
      0,
    ]
    const sos = [0xff, 0xda, 0, 12, 3, 1, 0, 2, 0, 3, 0, 0, 63, 0]
    const header = new Uint8Array([0xff, 0xd8, ...sof2, ...sos, 0xff, 0xd9])
    const user = await signUp()
    const source = await uploaded(
      user,
      'camera.pdf',
      buildPdf([{ width: 320, height: 240, content: drawn, jpeg: { bytes: header, width: 4000, height: 3000 } }]),
    )
    const res = await callJson('POST', `/files/${source._id}/convert`, { token: user.token })
    expect(res.status).toBe(422)
    expect(res.body.message).toBe(
      'pdf-to-png on "camera.pdf" failed: page 1 holds a 4000 × 3000 image that needs about 115 MiB to decode; PDF images are decoded in at most 64 MiB (a Worker has 128 MB)',
    )
  })

  it('renders a page whose image is within the limit', async () => {
    const user = await signUp()
    const source = await uploaded(
      user,
      'photo.pdf',
      buildPdf([{ width: 320, height: 240, content: drawn, jpeg: { bytes: pattern_jpg, width: 64, height: 48 } }]),
    )
    const res = await callJson('POST', `/files/${source._id}/convert`, { token: user.token })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject([{ name: 'photo (1 of 1)', content_type: 'image/png' }])
  })
})
