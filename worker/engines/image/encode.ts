// Encoding RGBA pixels to WebP and AVIF with the Squoosh codecs compiled to WASM (@jsquash/webp, @jsquash/avif),
// imported statically (workerd compiles no WebAssembly from bytes). A fresh instance per image, dropped with it: a
// WASM memory never shrinks, so an AVIF encoder kept per isolate would stay at its largest preview's heap.
// The factories are called directly rather than through the packages' init(), which picks a build by feature
// detection and would need the matching .wasm: the SIMD WebP build and the single-threaded AVIF one are the
// ones workerd runs.
// First: the codecs' glue must find an ImageData that holds none of their instances (image-data.ts).
import './image-data'
import avifEncoderFactory from '@jsquash/avif/codec/enc/avif_enc.js'
import avifEncWasm from '@jsquash/avif/codec/enc/avif_enc.wasm'
import { defaultOptions as avifDefaults } from '@jsquash/avif/meta.js'
import { initEmscriptenModule } from '@jsquash/webp/utils.js'
import webpEncoderFactory from '@jsquash/webp/codec/enc/webp_enc_simd.js'
import webpEncWasm from '@jsquash/webp/codec/enc/webp_enc_simd.wasm'
import { defaultOptions as webpDefaults } from '@jsquash/webp/meta.js'
import type { RawImage } from '../png/encode'

interface Encoder {
  encode(data: BufferSource, width: number, height: number, options: object): Uint8Array | null
}

/** The codecs take 4-channel RGBA rows. */
function rgba(image: RawImage): Uint8Array {
  if (image.channels === 4)
    return image.data instanceof Uint8Array
      ? image.data
      : new Uint8Array(image.data.buffer, image.data.byteOffset, image.data.byteLength)
  const pixels = image.width * image.height
  const out = new Uint8Array(pixels * 4)
  for (let p = 0; p < pixels; p++) {
    const i = p * image.channels
    const gray = image.channels <= 2
    out[p * 4] = image.data[i]!
    out[p * 4 + 1] = image.data[gray ? i : i + 1]!
    out[p * 4 + 2] = image.data[gray ? i : i + 2]!
    out[p * 4 + 3] = image.channels === 2 ? image.data[i + 1]! : 255
  }
  return out
}

/**
 * The largest picture whose alpha plane libwebp compresses (losslessly, as VP8L: hash chains and a 4-byte-a-pixel
 * copy) inside the budget. Above it the alpha plane is stored raw: a byte a pixel more in the file. The heaps
 * measured: docs/platform-limits.md, "What the engines do".
 */
export const WEBP_COMPRESSED_ALPHA_MAX_PIXELS = 1024 * 1024

/**
 * Lossy WebP at `quality` (0–100), with libwebp's low_memory: a smaller encoder heap (docs/platform-limits.md).
 * A picture without transparency has no alpha plane (libwebp drops an opaque one), whatever its channels.
 */
export async function encodeWebp(image: RawImage, quality = 80): Promise<Uint8Array> {
  const encoder = await (initEmscriptenModule(
    webpEncoderFactory as never,
    webpEncWasm as WebAssembly.Module,
  ) as Promise<Encoder>)
  const alpha_compression = image.width * image.height > WEBP_COMPRESSED_ALPHA_MAX_PIXELS ? 0 : 1
  const out = encoder.encode(rgba(image), image.width, image.height, {
    ...webpDefaults,
    quality,
    low_memory: 1,
    alpha_compression,
  })
  if (!out) throw new Error('the WebP encoder failed')
  return new Uint8Array(out)
}

/** AVIF at `quality` (0–100), at libavif speed 8: a preview is made once, but while its client waits. */
export async function encodeAvif(image: RawImage, quality = 55): Promise<Uint8Array> {
  const encoder = await (initEmscriptenModule(
    avifEncoderFactory as never,
    avifEncWasm as WebAssembly.Module,
  ) as Promise<Encoder>)
  const out = encoder.encode(rgba(image), image.width, image.height, { ...avifDefaults, quality, speed: 8 })
  if (!out) throw new Error('the AVIF encoder failed')
  return new Uint8Array(out)
}
