// Previews of every documented size (64 to 2048 a side, worker/previews/params.ts) work on ordinary pages: a PDF
// page is checked against the preview's own box, not PDF_MAX_PAGE_PIXELS (the conversions' page limit). An A4 page
// (595 × 842 pt, ISO 216's 210 × 297 mm) fitted 2048 high is 1447 × 2048 = 2.96 MP, above the default 2.2 MP.
import { describe, expect, it } from 'vitest'
import { readImageHeader } from '../../worker/engines/image/header'
import { call } from '../support/api'
import { signUp, type TestUser } from '../support/accounts'
import { uploaded } from '../support/files'
import { buildPdf } from '../support/pdf'

const A4 = { width: 595, height: 842 }

/** The preview once drawn (a 202 is asked again after a pause, with a deadline). */
async function preview(user: TestUser, path: string) {
  const deadline = Date.now() + 120_000
  for (;;) {
    const res = await call('GET', path, { token: user.token })
    const bytes = new Uint8Array(await res.arrayBuffer())
    if (res.status !== 202 || Date.now() > deadline) return { status: res.status, bytes }
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
}

describe('previews of every documented size', { timeout: 180_000 }, () => {
  it('draws an A4 page at ?w=2048 (contain: 1447 × 2048) and ?w=2048&fit=cover (2048 × 2048) with PDF_MAX_PAGE_PIXELS at its default', async () => {
    const user = await signUp()
    const pdf = buildPdf([{ ...A4, content: '0 0 1 rg 50 50 495 742 re f', helvetica: true }])
    const file = await uploaded(user, 'a4.pdf', pdf)
    const contain = await preview(user, `/files/${file._id}/preview?w=2048&format=png`)
    expect(contain.status).toBe(200)
    expect(readImageHeader(contain.bytes)).toMatchObject({ format: 'png', width: 1447, height: 2048 })
    const cover = await preview(user, `/files/${file._id}/preview?w=2048&fit=cover&format=png`)
    expect(cover.status).toBe(200)
    expect(readImageHeader(cover.bytes)).toMatchObject({ format: 'png', width: 2048, height: 2048 })
  })

  it.each([64, 128, 256, 512, 1024])('draws an A4 page %i high', async (side) => {
    const user = await signUp()
    const file = await uploaded(user, 'a4.pdf', buildPdf([{ ...A4, content: '0 0 1 rg 50 50 495 742 re f' }]))
    const drawn = await preview(user, `/files/${file._id}/preview?h=${side}&w=${side}&format=png`)
    expect(drawn.status).toBe(200)
    expect(readImageHeader(drawn.bytes)).toMatchObject({ height: side, width: Math.round(595 * (side / 842)) })
  })
})
