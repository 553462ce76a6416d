// Encoding RGBA pixels to WebP with the Squoosh codec compiled to WASM (@jsquash/webp), imported statically (workerd
// compiles no WebAssembly from bytes). A fresh instance per image, dropped with it: a WASM memory never shrinks.
// The factory is called directly rather than through the package's init(), which picks a build by feature detection
// and would need the matching .wasm: the SIMD build is the one workerd runs. AVIF is avif-encode.ts: its encoder
// (3.5 MB of WASM) runs in a Worker of its own (wrangler.engine-avif.toml), not in every drawing Worker.
// First: the codec's glue must find an ImageData that holds none of its instances (image-data.ts).
import './image-data'
import { initEmscriptenModule } from '@jsquash/webp/utils.js'
import webpEncoderFactory from '@jsquash/webp/codec/enc/webp_enc_simd.js'
import webpEncWasm from '@jsquash/webp/codec/enc/webp_enc_simd.wasm'
import { defaultOptions as webpDefaults } from '@jsquash/webp/meta.js'
import type { RawImage } from '../png/encode'
import { type Encoder, rgba } from './encoder'

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
