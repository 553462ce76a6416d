// What a JPEG decode holds in libjpeg-turbo's heap (jpeg-memory.ts) and the DCT-scaled decode previews use (jpeg.ts).
// References: libjpeg-turbo's turbojpeg.h on tjDecompress2: "If the desired width is different than the width of
// the JPEG image being decompressed, then TurboJPEG will use scaling in the JPEG decompressor to generate the largest
// possible image that will fit within the desired width"; its jdcoefct.c: "In buffered-image mode [and for
// progressive or multi-scan files] this module also provides a whole-image coefficient buffer" (jpeg_component_info
// blocks of 64 JCOEFs, 2 bytes each).
import encodeJpeg, { init as initJpegEncoder } from '@jsquash/jpeg/encode'
import jpegEncoderWasm from '@jsquash/jpeg/codec/enc/mozjpeg_enc.wasm'
import { beforeAll, describe, expect, it } from 'vitest'
import { decodeJpeg, jpegScaledSize } from '../../worker/engines/image/jpeg'
import { coefficientBytes, JPEG_HEAP_MAX_BYTES, readJpegFrame } from '../../worker/engines/image/jpeg-memory'
import { ImageTooLargeError } from '../../worker/engines/image/limits'

/** A JPEG's markers up to its first scan, without entropy-coded data: enough for the checks made before decoding. */
function frameOnly(
  width: number,
  height: number,
  marker: 0xc0 | 0xc2,
  sampling: readonly number[],
  scanComponents = sampling.length,
): Uint8Array {
  const sof = [
    0xff,
    marker,
    0,
    8 + sampling.length * 3,
    8,
    height >> 8,
    height & 255,
    width >> 8,
    width & 255,
    sampling.length,
    ...sampling.flatMap((hv, i) => [i + 1, hv, 0]),
  ]
  const sos = [
    0xff,
    0xda,
    0,
    6 + scanComponents * 2,
    scanComponents,
    ...Array.from({ length: scanComponents }, (_, i) => [i + 1, 0]).flat(),
    0,
    63,
    0,
  ]
  return new Uint8Array([0xff, 0xd8, ...sof, ...sos, 0xff, 0xd9])
}

/** RGBA pixels in ImageData's shape, which the encoder takes. */
function gradient(width: number, height: number): never {
  const data = new Uint8ClampedArray(width * height * 4)
  for (let i = 0; i < width * height; i++) {
    const x = i % width
    const y = Math.floor(i / width)
    data.set([x & 255, y & 255, (x + y) & 255, 255], i * 4)
  }
  return { width, height, data, colorSpace: 'srgb' } as never
}

describe('the heap a JPEG decode needs, from its frame', () => {
  it('counts the whole frame of coefficients for a progressive file only, by sampling factors', () => {
    const cases: Array<[string, Uint8Array, number]> = [
      ['progressive 4:4:4, 12 MP', frameOnly(4000, 3000, 0xc2, [0x11, 0x11, 0x11]), 3 * 500 * 375 * 128],
      // Y at 2×2, Cb and Cr at 1×1: an MCU of 16×16 pixels holds 4 + 1 + 1 blocks.
      ['progressive 4:2:0, 12 MP', frameOnly(4000, 3000, 0xc2, [0x22, 0x11, 0x11]), 250 * 188 * 6 * 128],
      ['baseline, interleaved', frameOnly(4000, 3000, 0xc0, [0x11, 0x11, 0x11]), 0],
      ['baseline, one component a scan', frameOnly(4000, 3000, 0xc0, [0x11, 0x11, 0x11], 1), 3 * 500 * 375 * 128],
    ]
    for (const [name, bytes, expected] of cases) expect(coefficientBytes(readJpegFrame(bytes)!), name).toBe(expected)
  })

  it('refuses a 12 MP progressive 4:4:4 JPEG at full size before decoding anything, and names why', () => {
    const bytes = frameOnly(4000, 3000, 0xc2, [0x11, 0x11, 0x11])
    expect(() => decodeJpeg(bytes, 'rgb')).toThrow(ImageTooLargeError)
    expect(() => decodeJpeg(bytes, 'rgb')).toThrow(
      `needs 103 MiB to decode; the limit is ${JPEG_HEAP_MAX_BYTES / 2 ** 20} MiB`,
    )
  })
})

describe('DCT-scaled decoding for previews', () => {
  beforeAll(async () => {
    await initJpegEncoder(jpegEncoderWasm)
  })

  it('picks the smallest eighth at least as large as asked, as TurboJPEG rounds (TJSCALED: up)', () => {
    expect(jpegScaledSize(4000, 3000, { width: 256, height: 192 })).toEqual({ width: 500, height: 375 })
    expect(jpegScaledSize(4000, 3000, { width: 2048, height: 1536 })).toEqual({ width: 2500, height: 1875 })
    expect(jpegScaledSize(4000, 3000, { width: 2000, height: 1500 })).toEqual({ width: 2000, height: 1500 })
    expect(jpegScaledSize(4001, 3001, { width: 501, height: 1 })).toEqual({ width: 501, height: 376 })
    expect(jpegScaledSize(4001, 3001, { width: 502, height: 1 })).toEqual({ width: 1001, height: 751 })
    expect(jpegScaledSize(300, 200, { width: 600, height: 400 })).toEqual({ width: 300, height: 200 })
    expect(jpegScaledSize(4000, 3000)).toEqual({ width: 4000, height: 3000 })
  })

  it('decodes at 1/8 the picture a full decode averaged over 8 × 8 blocks gives', async () => {
    const bytes = new Uint8Array(await encodeJpeg(gradient(640, 480), { quality: 95, progressive: true }))
    const small = decodeJpeg(bytes, 'rgba', { width: 80, height: 60 })
    const full = decodeJpeg(bytes, 'rgba')
    try {
      expect([small.width, small.height, small.channels]).toEqual([80, 60, 4])
      const smallPixels = small.copy()
      const fullPixels = full.copy()
      let worst = 0
      for (let y = 0; y < 60; y++) {
        for (let x = 0; x < 80; x++) {
          for (let c = 0; c < 3; c++) {
            let sum = 0
            for (let dy = 0; dy < 8; dy++)
              for (let dx = 0; dx < 8; dx++) sum += fullPixels[((y * 8 + dy) * 640 + x * 8 + dx) * 4 + c]!
            worst = Math.max(worst, Math.abs(sum / 64 - smallPixels[(y * 80 + x) * 4 + c]!))
          }
        }
      }
      // The 1/8 decode is each block's DC term: the block's mean, up to quantisation and rounding.
      expect(worst).toBeLessThan(12)
    } finally {
      small.release()
      full.release()
    }
  })
})
