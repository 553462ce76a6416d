// The truncation check on JPEGs: whole files (baseline from ffmpeg, progressive from mozjpeg, with restart
// markers or trailing bytes) reach their end-of-image marker; every cut of them does not.
import encodeJpeg, { init as initJpegEncoder } from '@jsquash/jpeg/encode'
import jpegEncoderWasm from '@jsquash/jpeg/codec/enc/mozjpeg_enc.wasm'
import { beforeAll, describe, expect, it } from 'vitest'
import { decodeImage } from '../../worker/engines/image/decode'
import { TEST_IMAGE_LIMITS } from '../support/conversion'
import { MAX_JPEG_SCANS, reachesEndOfImage, readJpegStructure } from '../../worker/engines/image/jpeg-end'
import { decodeImageRows } from '../../worker/engines/image/decode'
import { ImageRefusedError, measureImage } from '../../worker/engines/image/open'
import { jpegRepeatedScans } from '../hostile/corpus'
import * as fixtures from '../fixtures/images/images'

const jpegs: Record<string, Uint8Array> = { baseline: fixtures.pattern_jpg }

beforeAll(async () => {
  await initJpegEncoder(jpegEncoderWasm)
  const image = await decodeImage(fixtures.pattern_bmp, TEST_IMAGE_LIMITS)
  const pixels = { data: new Uint8ClampedArray(image.data), width: image.width, height: image.height } as Parameters<
    typeof encodeJpeg
  >[0]
  jpegs.progressive = new Uint8Array(await encodeJpeg(pixels, { progressive: true }))
  jpegs.optimized = new Uint8Array(await encodeJpeg(pixels, { progressive: false, baseline: true, arithmetic: false }))
})

describe('reachesEndOfImage', () => {
  it.each(['baseline', 'progressive', 'optimized'])(
    'accepts a whole %s JPEG, also with bytes after its end',
    (kind) => {
      const whole = jpegs[kind]!
      expect(reachesEndOfImage(whole)).toBe(true)
      expect(reachesEndOfImage(new Uint8Array([...whole, 0, 1, 2, 3]))).toBe(true)
    },
  )

  it.each(['baseline', 'progressive', 'optimized'])('refuses every cut of a %s JPEG', (kind) => {
    const whole = jpegs[kind]!
    const cuts = Array.from({ length: whole.length - 2 }, (_, i) => i + 2).filter(
      (cut) => !reachesEndOfImage(whole.subarray(0, cut)),
    )
    expect(cuts).toHaveLength(whole.length - 2)
  })
})

describe('the JPEG scan limit (issue 29)', () => {
  it("counts the scans of what encoders write: libjpeg's progressive script (mozjpeg) well under the limit, a baseline file one", () => {
    // libjpeg's jpeg_simple_progression writes 10 scans for a colour image (jcparam.c); mozjpeg's optimized scripts
    // are of the same order.
    const progressive = readJpegStructure(jpegs.progressive!)
    expect(progressive).toMatchObject({ isWhole: true })
    expect(progressive.scans).toBeGreaterThan(1)
    expect(progressive.scans).toBeLessThanOrEqual(MAX_JPEG_SCANS / 5)
    expect(readJpegStructure(jpegs.baseline!)).toEqual({ isWhole: true, scans: 1 })
  })

  it('refuses a progressive JPEG whose refinement scan is repeated 1000 times, after counting its markers once and decoding nothing', () => {
    const bytes = jpegRepeatedScans(1000)
    expect(readJpegStructure(bytes)).toEqual({ isWhole: true, scans: 1002 })
    let refusal: unknown
    try {
      measureImage(bytes)
    } catch (error) {
      refusal = error
    }
    expect(refusal).toBeInstanceOf(ImageRefusedError)
    expect(refusal).toMatchObject({
      code: 'CONVERSION_FAILED',
      message: 'the JPEG image has 1002 scans; at most 100 are decoded (each is a pass over the whole image)',
    })
  })

  it('is a JPEG libjpeg-turbo decodes when its scans are few (the count is what protects the decoder)', async () => {
    const bytes = jpegRepeatedScans(3)
    expect(() => measureImage(bytes)).not.toThrow()
    const pixels = await decodeImageRows(bytes, TEST_IMAGE_LIMITS)
    try {
      expect(pixels).toMatchObject({ width: 8456, height: 1240, channels: 1 })
      expect([...pixels!.rows.row(617).subarray(0, 4)]).toEqual([128, 128, 128, 128])
    } finally {
      pixels?.release()
    }
  })
})
