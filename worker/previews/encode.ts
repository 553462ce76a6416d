// A preview's pixels in the format asked: WebP, AVIF or PNG.
import { encodeAvif, encodeWebp } from '../engines/image/encode'
import { encodePngBytes, type RawImage } from '../engines/png/encode'
import type { PreviewParams } from './params'

export async function encodePreview(image: RawImage, params: PreviewParams): Promise<Uint8Array> {
  if (params.format === 'webp') return encodeWebp(image)
  if (params.format === 'avif') return encodeAvif(image)
  return encodePngBytes(image)
}
