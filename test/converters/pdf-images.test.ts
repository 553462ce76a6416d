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
    expect((await callJson('GET', `/files/${source._id}`, { token: user.token })).body).toMatchObject({ hash: source.hash, files: [] })
    expect((await downloadBytes(`/files/${source._id}/download`, { token: user.token })).bytes).toEqual(bytes)
  })

  it('renders a page whose image is within the limit', async () => {
    const user = await signUp()
    const source = await uploaded(user, 'photo.pdf', buildPdf([{ width: 320, height: 240, content: drawn, jpeg: { bytes: pattern_jpg, width: 64, height: 48 } }]))
    const res = await callJson('POST', `/files/${source._id}/convert`, { token: user.token })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject([{ name: 'photo (1 of 1)', content_type: 'image/png' }])
  })
})
