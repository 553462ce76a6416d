// Encoding RGBA pixels to AVIF with the Squoosh codec compiled to WASM (@jsquash/avif), imported statically (workerd
// compiles no WebAssembly from bytes). Only the AVIF Worker (wrangler.engine-avif.toml) and the tests' single Worker
// (engine-workers/local.ts) import it: its 3.5 MB of WASM is compiled at each cold start of a Worker that bundles it.
// A fresh instance per image, dropped with it: a WASM memory never shrinks, so an encoder kept per isolate would stay
// at its largest preview's heap. The single-threaded build is the one workerd runs (encode.ts says why the factory).
// First: the codec's glue must find an ImageData that holds none of its instances (image-data.ts).
import './image-data'
import avifEncoderFactory from '@jsquash/avif/codec/enc/avif_enc.js'
import avifEncWasm from '@jsquash/avif/codec/enc/avif_enc.wasm'
import { defaultOptions as avifDefaults } from '@jsquash/avif/meta.js'
import { initEmscriptenModule } from '@jsquash/webp/utils.js'
import type { RawImage } from '../png/encode'
import { type Encoder, rgba } from './encoder'

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
