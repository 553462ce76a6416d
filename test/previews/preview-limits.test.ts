// What a preview request is refused before its drawing is queued (previews/pages.ts checkPreviewPage): AVIF past
// AVIF_PREVIEW_MAX_SIDE, whose encoder would not fit a Worker's 128 MB with the picture (docs/platform-limits.md).
import { describe, expect, it } from 'vitest'
import { ConversionError } from '../../worker/converters/converter'
import type { PreviewParams } from '../../worker/previews/params'
import { AVIF_PREVIEW_MAX_SIDE, checkPreviewPage } from '../../worker/previews/pages'
import { drawnSize } from '../../worker/previews/render-image'

const params = (format: PreviewParams['format'], width: number, height = width): PreviewParams => ({
  width,
  height,
  fit: 'contain',
  format,
  page: 1,
})

describe('preview limits', () => {
  it('refuses an AVIF preview past 1024 px a side with 422 and what to ask for instead', () => {
    expect(AVIF_PREVIEW_MAX_SIDE).toBe(1024)
    const refused = (() => {
      try {
        checkPreviewPage('image', params('avif', 2048, 64))
      } catch (error) {
        return error
      }
    })()
    expect(refused).toBeInstanceOf(ConversionError)
    expect(refused).toMatchObject({ code: 'CONVERSION_FAILED' })
    expect((refused as Error).message).toContain('ask for w and h of at most 1024, or format=webp')
  })

  it('takes AVIF up to 1024 px and WebP and PNG up to 2048', () => {
    for (const format of ['webp', 'png'] as const)
      expect(() => checkPreviewPage('pdf', params(format, 2048))).not.toThrow()
    expect(() => checkPreviewPage('text', params('avif', 1024))).not.toThrow()
  })

  it('decodes an image at the size it is drawn: fitted in the box, or filling it, never enlarged', () => {
    expect(drawnSize({ width: 4000, height: 3000 }, params('webp', 256))).toEqual({ width: 256, height: 192 })
    expect(drawnSize({ width: 4000, height: 3000 }, { ...params('webp', 256), fit: 'cover' })).toEqual({
      width: 342,
      height: 256,
    })
    expect(drawnSize({ width: 100, height: 50 }, params('webp', 2048))).toEqual({ width: 100, height: 50 })
  })
})
