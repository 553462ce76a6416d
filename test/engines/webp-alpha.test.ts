// WebP previews of pictures with transparency above WEBP_COMPRESSED_ALPHA_MAX_PIXELS store their alpha plane raw:
// libwebp's lossless alpha compression took the encoder's heap from 55 to 82 MiB at 2048 × 1536 (check:deploy).
// The outside reference is the container's ALPH chunk, RFC 9649 §2.7.1.2 ("Alpha"):
//   "Compression method (C): 2 bits
//    The compression method used:
//    0: No compression.
//    1: Compressed using the WebP lossless format."
// in the low two bits of the chunk's first byte (the others are Rsv, P and F: "| Rsv| P | F | C |").
import { describe, expect, it } from 'vitest'
import { decodeImage } from '../../worker/engines/image/decode'
import { encodeWebp, WEBP_COMPRESSED_ALPHA_MAX_PIXELS } from '../../worker/engines/image/encode'
import type { RawImage } from '../../worker/engines/png/encode'
import { TEST_IMAGE_LIMITS } from '../support/conversion'

function picture(width: number, height: number, opaque: boolean): RawImage {
  const data = new Uint8Array(width * height * 4)
  for (let i = 0; i < width * height; i++)
    data.set([(i * 7) & 255, (i >> 5) & 255, (i % width) & 255, opaque ? 255 : 255 - ((i % width) >> 4)], i * 4)
  return { width, height, channels: 4, data }
}

/** The chunks of a RIFF WebP file (RFC 9649 §2.3: FourCC, little-endian size, payload padded to an even length). */
function chunks(file: Uint8Array): Map<string, Uint8Array> {
  expect(Buffer.from(file.subarray(0, 4)).toString('latin1')).toBe('RIFF')
  expect(Buffer.from(file.subarray(8, 12)).toString('latin1')).toBe('WEBP')
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength)
  const found = new Map<string, Uint8Array>()
  for (let at = 12; at + 8 <= file.length; ) {
    const size = view.getUint32(at + 4, true)
    found.set(Buffer.from(file.subarray(at, at + 4)).toString('latin1'), file.subarray(at + 8, at + 8 + size))
    at += 8 + size + (size & 1)
  }
  return found
}

describe('WebP alpha planes', () => {
  it('are compressed losslessly up to WEBP_COMPRESSED_ALPHA_MAX_PIXELS', async () => {
    const side = Math.sqrt(WEBP_COMPRESSED_ALPHA_MAX_PIXELS)
    const alpha = chunks(await encodeWebp(picture(side, side, false))).get('ALPH')
    expect(alpha![0]! & 3).toBe(1)
  })

  it('are stored raw above it, the same alpha to the byte', async () => {
    const image = picture(1500, 1100, false)
    expect(image.width * image.height).toBeGreaterThan(WEBP_COMPRESSED_ALPHA_MAX_PIXELS)
    const bytes = await encodeWebp(image)
    const alpha = chunks(bytes).get('ALPH')
    expect(alpha![0]! & 3).toBe(0)
    const decoded = await decodeImage(bytes, TEST_IMAGE_LIMITS)
    let differing = 0
    for (let i = 3; i < image.data.length; i += 4) if (decoded.data[i] !== image.data[i]) differing++
    expect(differing).toBe(0)
  })

  it('are left out for an opaque picture, whatever its size (libwebp drops an opaque alpha)', async () => {
    const found = chunks(await encodeWebp(picture(1500, 1100, true)))
    expect(found.has('ALPH')).toBe(false)
    expect(found.has('VP8 ')).toBe(true)
  })
})
