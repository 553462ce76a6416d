// The image decoders' one entry (image → PNG and previews): the header read first, a truncated JPEG refused,
// then decodeImage, which checks every area it would allocate against the limits; each refusal says why.
import type { RawImage } from '../png/encode'
import { decodeImage } from './decode'
import { readImageHeader, type ImageHeader } from './header'
import { reachesEndOfImage } from './jpeg-end'
import { type ImageLimits, ImageStructureError, ImageTooLargeError } from './limits'

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

/** Measures, then decodes (first frame or page) to RGBA. */
export async function openImage(bytes: Uint8Array, limits: ImageLimits): Promise<{ header: ImageHeader; image: RawImage }> {
  let header: ImageHeader | undefined
  try {
    header = readImageHeader(bytes)
  } catch (error) {
    throw new ImageRefusedError(`the image cannot be decoded: ${(error as Error).message}`, 422, { cause: error })
  }
  if (!header) throw new ImageRefusedError('not a JPEG, PNG, WebP, GIF, BMP, TIFF or AVIF image', 415)
  if (header.format === 'jpeg' && !reachesEndOfImage(bytes)) {
    throw new ImageRefusedError('the JPEG image cannot be decoded: the file ends before its end-of-image marker (truncated)', 422)
  }
  try {
    return { header, image: await decodeImage(bytes, limits) }
  } catch (error) {
    if (error instanceof ImageTooLargeError) throw new ImageRefusedError(error.message, 422, { cause: error })
    const reason = error instanceof ImageStructureError ? `: ${error.message}` : ''
    throw new ImageRefusedError(`the ${header.format.toUpperCase()} image cannot be decoded${reason}`, 422, { cause: error })
  }
}
