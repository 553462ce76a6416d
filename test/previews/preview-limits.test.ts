// What a preview request is refused before its drawing is queued (previews/pages.ts checkPreviewPage): AVIF past
// AVIF_PREVIEW_MAX_SIDE, whose encoder would not fit a Worker's 128 MB with the picture (docs/platform-limits.md).
import { describe, expect, it } from 'vitest'
import { ConversionError } from '../../worker/converters/converter'
import type { PreviewParams } from '../../worker/previews/params'
import { AVIF_PREVIEW_MAX_SIDE, checkPreviewPage } from '../../worker/previews/pages'
import { checkPreviewHeap, drawnSize, PREVIEW_HEAP_MAX_BYTES } from '../../worker/previews/render-image'

/** A lossless WebP's header alone (RIFF, VP8L and its 14-bit sizes): what the preview's heap check reads. */
function webpHeader(width: number, height: number): Uint8Array {
  const bytes = new Uint8Array(12 + 8 + 5)
  const view = new DataView(bytes.buffer)
  bytes.set(new TextEncoder().encode('RIFF'), 0)
  view.setUint32(4, bytes.length - 8, true)
  bytes.set(new TextEncoder().encode('WEBPVP8L'), 8)
  view.setUint32(16, 5, true)
  bytes[20] = 0x2f
  view.setUint32(21, (width - 1) | ((height - 1) << 14), true)
  return bytes
}

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

  it("refuses a WebP's preview whose decoder and encoder pass 84 MiB together, and takes the smaller ones", () => {
    // check:deploy measured the AVIF preview of a 12 MP WebP at 62 MiB of decoder and 33 of encoder (this file is
    // the header alone: 93 MiB estimated).
    expect(PREVIEW_HEAP_MAX_BYTES).toBe(84 * 2 ** 20)
    const photo = webpHeader(4000, 3000)
    const refused = (() => {
      try {
        checkPreviewHeap(photo, params('avif', 1024))
      } catch (error) {
        return error
      }
    })()
    expect(refused).toBeInstanceOf(ConversionError)
    expect(refused).toMatchObject({ code: 'CONVERSION_FAILED' })
    expect((refused as Error).message).toMatch(/^the AVIF preview of this 4000×3000 WebP image needs about 93 MiB/)
    expect((refused as Error).message).toContain('ask for a smaller w and h, or format=png')
    expect(() => checkPreviewHeap(photo, params('webp', 2048))).toThrow(ConversionError)
    expect(() => checkPreviewHeap(photo, params('webp', 1024))).not.toThrow()
    expect(() => checkPreviewHeap(photo, params('png', 2048))).not.toThrow()
    expect(() => checkPreviewHeap(webpHeader(2000, 1500), params('avif', 1024))).not.toThrow()
  })
})
