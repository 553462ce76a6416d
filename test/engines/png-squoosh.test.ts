// The PNGs the fast path leaves (palette, tRNS, 16-bit, interlaced) through Squoosh's decoder in a fresh instance per
// image (engines/image/png-squoosh.ts): the pixels PNG's specification gives them (W3C PNG, 3rd edition: 11.2.3
// PLTE, 11.3.2.1 tRNS, 13.12 sample depth scaling, 8.2 Adam7), each image in a heap of its own.
import { deflateSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { decodeImage } from '../../worker/engines/image/decode'
import { pngChunk } from '../../worker/engines/png/encode'
import { concatBytes } from '../support/bytes'
import { TEST_IMAGE_LIMITS } from '../support/conversion'

/** A PNG with its CRCs (pngChunk): IHDR (bit depth, colour type, interlace), the chunks given, the rows deflated. */
function png(
  header: { width: number; height: number; bitDepth: number; colorType: number; interlace?: number },
  rows: number[],
  extra: { type: string; data: number[] }[] = [],
): Uint8Array {
  const ihdr = new Uint8Array(13)
  new DataView(ihdr.buffer).setUint32(0, header.width)
  new DataView(ihdr.buffer).setUint32(4, header.height)
  ihdr.set([header.bitDepth, header.colorType, 0, 0, header.interlace ?? 0], 8)
  return concatBytes(
    new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', ihdr),
    ...extra.map(({ type, data }) => pngChunk(type, new Uint8Array(data))),
    pngChunk('IDAT', new Uint8Array(deflateSync(new Uint8Array(rows)))),
    pngChunk('IEND', new Uint8Array(0)),
  )
}

const pixelsOf = async (bytes: Uint8Array) => {
  const image = await decodeImage(bytes, TEST_IMAGE_LIMITS)
  return { width: image.width, height: image.height, data: [...image.data] }
}

describe("Squoosh's PNG decoder, a fresh instance per image", () => {
  it('gives a palette image its colours, and its tRNS alpha (entries past it opaque)', async () => {
    const palette = png(
      { width: 3, height: 1, bitDepth: 8, colorType: 3 },
      [0, 0, 1, 2],
      [
        { type: 'PLTE', data: [255, 0, 0, 0, 255, 0, 0, 0, 255] },
        { type: 'tRNS', data: [255, 128] },
      ],
    )
    expect(await pixelsOf(palette)).toEqual({
      width: 3,
      height: 1,
      data: [255, 0, 0, 255, 0, 255, 0, 128, 0, 0, 255, 255],
    })
  })

  it('gives 16-bit samples their high byte', async () => {
    const deep = png({ width: 2, height: 1, bitDepth: 16, colorType: 0 }, [0, 0x12, 0x34, 0xab, 0xcd])
    expect(await pixelsOf(deep)).toEqual({ width: 2, height: 1, data: [0x12, 0x12, 0x12, 255, 0xab, 0xab, 0xab, 255] })
  })

  it('reads an interlaced image (Adam7: a 1×1 picture is its first pass alone)', async () => {
    const interlaced = png({ width: 1, height: 1, bitDepth: 8, colorType: 2, interlace: 1 }, [0, 10, 20, 30])
    expect(await pixelsOf(interlaced)).toEqual({ width: 1, height: 1, data: [10, 20, 30, 255] })
  })

  it('decodes each image in a heap of its own, and two at once', async () => {
    const bytes = png({ width: 1, height: 1, bitDepth: 8, colorType: 2, interlace: 1 }, [0, 1, 2, 3])
    const [a, b] = await Promise.all([decodeImage(bytes, TEST_IMAGE_LIMITS), decodeImage(bytes, TEST_IMAGE_LIMITS)])
    expect(a.data.buffer).not.toBe(b.data.buffer)
    expect([...a.data]).toEqual([...b.data])
  })

  it('throws on a truncated image (openImage refuses it with 422)', async () => {
    const corrupt = png({ width: 2, height: 2, bitDepth: 16, colorType: 0 }, [0, 1])
    await expect(decodeImage(corrupt, TEST_IMAGE_LIMITS)).rejects.toThrow(Error)
  })
})
