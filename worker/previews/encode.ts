// A preview's pixels in the format asked: WebP, AVIF or PNG. AVIF is encoded by `avif`: deployed, the AVIF Worker
// behind the drawing Worker's AVIF_ENGINE binding (its 3.5 MB encoder in no drawing Worker: engine-workers/avif.ts).
import { encodeWebp } from '../engines/image/encode'
import { encodePngBytes, type RawImage } from '../engines/png/encode'
import type { PreviewParams } from './params'

/** Encodes a preview's pixels as AVIF. */
export type AvifEncoder = (image: RawImage) => Promise<Uint8Array>

export async function encodePreview(image: RawImage, params: PreviewParams, avif: AvifEncoder): Promise<Uint8Array> {
  if (params.format === 'webp') return encodeWebp(image)
  if (params.format === 'avif') return avif(image)
  return encodePngBytes(image)
}
