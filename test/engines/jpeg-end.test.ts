// The truncation check on JPEGs: whole files (baseline from ffmpeg, progressive from mozjpeg, with restart
// markers or trailing bytes) reach their end-of-image marker; every cut of them does not.
import encodeJpeg, { init as initJpegEncoder } from '@jsquash/jpeg/encode'
import jpegEncoderWasm from '@jsquash/jpeg/codec/enc/mozjpeg_enc.wasm'
import { beforeAll, describe, expect, it } from 'vitest'
import { decodeImage } from '../../worker/engines/image/decode'
import { TEST_IMAGE_LIMITS } from '../support/conversion'
import { reachesEndOfImage } from '../../worker/engines/image/jpeg-end'
import * as fixtures from '../fixtures/images/images'

const jpegs: Record<string, Uint8Array> = { baseline: fixtures.pattern_jpg }

beforeAll(async () => {
  await initJpegEncoder(jpegEncoderWasm)
  const image = await decodeImage(fixtures.pattern_bmp, TEST_IMAGE_LIMITS)
  const pixels = { data: new Uint8ClampedArray(image.data), width: image.width, height: image.height } as Parameters<typeof encodeJpeg>[0]
  jpegs.progressive = new Uint8Array(await encodeJpeg(pixels, { progressive: true }))
  jpegs.optimized = new Uint8Array(await encodeJpeg(pixels, { progressive: false, baseline: true, arithmetic: false }))
})

describe('reachesEndOfImage', () => {
  it.each(['baseline', 'progressive', 'optimized'])('accepts a whole %s JPEG, also with bytes after its end', (kind) => {
    const whole = jpegs[kind]!
    expect(reachesEndOfImage(whole)).toBe(true)
    expect(reachesEndOfImage(new Uint8Array([...whole, 0, 1, 2, 3]))).toBe(true)
  })

  it.each(['baseline', 'progressive', 'optimized'])('refuses every cut of a %s JPEG', (kind) => {
    const whole = jpegs[kind]!
    const cuts = Array.from({ length: whole.length - 2 }, (_, i) => i + 2).filter((cut) => !reachesEndOfImage(whole.subarray(0, cut)))
    expect(cuts).toHaveLength(whole.length - 2)
  })
})
