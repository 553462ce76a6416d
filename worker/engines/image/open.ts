// The one way into the image decoders: the header is read and measured before any pixel is decoded (a pixel
// flood is refused while it is still a few bytes), a JPEG must reach its end marker, and only then do the WASM
// decoders run. Conversions and previews both decode through here, so every check applies to both.
import type { RawImage } from '../png/encode'
import { decodeImage } from './decode'
import { readImageHeader, type ImageHeader } from './header'
import { reachesEndOfImage } from './jpeg-end'

export interface ImageLimits {
  /** Largest width × height decoded. */
  readonly maxPixels: number
}

/** The image is refused before or while decoding; `status` is the HTTP status its client gets (415 or 422). */
export class ImageRefusedError extends Error {
  override readonly name = 'ImageRefusedError'
  constructor(
    message: string,
    readonly status: 415 | 422,
    options?: { cause?: unknown },
  ) {
    super(message, options)
  }
}

/** The header of an image this service decodes, within the limits; throws ImageRefusedError otherwise. */
export function measureImage(bytes: Uint8Array, limits: ImageLimits): ImageHeader {
  const header = readImageHeader(bytes)
  if (!header) throw new ImageRefusedError('not a JPEG, PNG, WebP, GIF, BMP, TIFF or AVIF image', 415)
  const pixels = header.width * header.height
  if (pixels > limits.maxPixels) throw new ImageRefusedError(`the image is ${header.width}×${header.height} (${pixels} pixels); the limit is ${limits.maxPixels} pixels`, 422)
  if (pixels === 0) throw new ImageRefusedError('the image has no pixels', 422)
  if (header.format === 'jpeg' && !reachesEndOfImage(bytes)) {
    throw new ImageRefusedError('the JPEG image cannot be decoded: the file ends before its end-of-image marker (truncated)', 422)
  }
  return header
}

/** Measures, then decodes (first frame or page) to RGBA. */
export async function openImage(bytes: Uint8Array, limits: ImageLimits): Promise<{ header: ImageHeader; image: RawImage }> {
  const header = measureImage(bytes, limits)
  try {
    return { header, image: await decodeImage(bytes, header.format) }
  } catch (error) {
    throw new ImageRefusedError(`the ${header.format.toUpperCase()} image cannot be decoded`, 422, { cause: error })
  }
}
