// The WebP decoder's pixels are read where it decoded them (decode.ts's withPixelsInHeap) instead of copied into
// JavaScript: they must be the pixels its own glue copies out, to the byte, at every size (the decoder frees the
// block before answering, and free() writes over its ends), and the constructor it borrows is given back.
import webpDecoderFactory from '@jsquash/webp/codec/dec/webp_dec.js'
import webpWasm from '@jsquash/webp/codec/dec/webp_dec.wasm'
import { initEmscriptenModule } from '@jsquash/webp/utils.js'
import { describe, expect, it } from 'vitest'
import { decodeImage } from '../../worker/engines/image/decode'
import { encodeWebp } from '../../worker/engines/image/encode'
import type { RawImage } from '../../worker/engines/png/encode'
import * as fixtures from '../fixtures/images/images'
import { TEST_IMAGE_LIMITS } from '../support/conversion'

function picture(width: number, height: number): RawImage {
  const data = new Uint8Array(width * height * 4)
  for (let i = 0; i < width * height; i++)
    data.set([(i * 7) & 255, (i >> 5) & 255, (i % width) & 255, 255 - ((i >> 9) & 127)], i * 4)
  return { width, height, channels: 4, data }
}

/** The decoder's own answer, copied out by its glue as it always was. */
async function copiedByTheGlue(bytes: Uint8Array): Promise<Uint8Array> {
  const decoder = (await initEmscriptenModule(webpDecoderFactory as never, webpWasm as WebAssembly.Module)) as {
    decode(data: ArrayBuffer): { data: Uint8ClampedArray }
  }
  return new Uint8Array(decoder.decode(bytes.slice().buffer).data.buffer)
}

describe("WebP pixels read in the decoder's heap", () => {
  it.each([['the fixture', fixtures.pattern_webp]])('are the pixels the glue copies out (%s)', async (_, bytes) => {
    const image = await decodeImage(bytes, TEST_IMAGE_LIMITS)
    expect(Buffer.from(image.data).equals(Buffer.from(await copiedByTheGlue(bytes)))).toBe(true)
  })

  it.each([
    [3, 2],
    [97, 61],
    [1500, 1100],
  ])('are the pixels the glue copies out, %i×%i', async (width, height) => {
    const bytes = await encodeWebp(picture(width, height), 90)
    const image = await decodeImage(bytes, TEST_IMAGE_LIMITS)
    expect({ width: image.width, height: image.height }).toEqual({ width, height })
    // A view of the decoder's heap, not a copy of the pixels alone (a picture of a few pixels is copied).
    if (width * height * 4 >= 512) expect(image.data.buffer.byteLength).toBeGreaterThan(image.data.byteLength)
    expect(Buffer.from(image.data).equals(Buffer.from(await copiedByTheGlue(bytes)))).toBe(true)
    expect(globalThis.Uint8ClampedArray.name).toBe('Uint8ClampedArray')
    expect(new Uint8ClampedArray(new Uint8Array([300 & 255, 2]))).toBeInstanceOf(Uint8ClampedArray)
  })
})
