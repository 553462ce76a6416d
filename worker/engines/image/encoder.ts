// What the WebP and AVIF encoders share (encode.ts, avif-encode.ts), in a module of its own so that a Worker bundling
// one encoder bundles none of the other's WASM.
import type { RawImage } from '../png/encode'

/** An emscripten encoder module, as the Squoosh glue makes it. */
export interface Encoder {
  encode(data: BufferSource, width: number, height: number, options: object): Uint8Array | null
}

/** The codecs take 4-channel RGBA rows. */
export function rgba(image: RawImage): Uint8Array {
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
