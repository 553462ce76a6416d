// Images to optimized PNG, in the Worker: the header is read first, then the WASM decoders (which refuse a pixel
// flood before decoding: every area they would allocate is checked against IMAGE_MAX_PIXELS and IMAGE_MAX_SIDE),
// an optional downscale, and the streaming PNG encoder. A PNG that would not get smaller (and is not resized)
// produces no output, which ends the chain.
import { decodeImage } from '../engines/image/decode'
import { type ImageHeader, readImageHeader } from '../engines/image/header'
import { ImageStructureError, ImageTooLargeError } from '../engines/image/limits'
import { reachesEndOfImage } from '../engines/image/jpeg-end'
import { fitWithin } from '../engines/image/resize'
import { encodePng, encodePngBytes, type RawImage } from '../engines/png/encode'
import { ConversionError, defineConverter } from './converter'

export const imageToPng = defineConverter({
  name: 'image-to-png',
  settings: ['IMAGE_MAX_BYTES', 'IMAGE_MAX_PIXELS', 'IMAGE_MAX_SIDE', 'IMAGE_MAX_DIMENSION'],
  from: ['.jpg', '.jpeg', '.jfif', '.png', '.webp', '.gif', '.bmp', '.tif', '.tiff', '.avif'],
  accepts: ['image/jpeg', 'image/png', 'image/webp', 'image/gif', 'image/bmp', 'image/tiff', 'image/avif'],
  to: '.png',
  async *convert(input, ctx) {
    const { IMAGE_MAX_BYTES, IMAGE_MAX_PIXELS, IMAGE_MAX_SIDE, IMAGE_MAX_DIMENSION } = ctx.settings
    // The decoders need the whole file: IMAGE_MAX_BYTES bounds it.
    const bytes = await input.bytes(IMAGE_MAX_BYTES)
    let header: ImageHeader | undefined
    try {
      header = readImageHeader(bytes)
    } catch (error) {
      throw new ConversionError(`the image cannot be decoded: ${(error as Error).message}`, { cause: error })
    }
    if (!header) throw new ConversionError(`"${input.name}" is not a JPEG, PNG, WebP, GIF, BMP, TIFF or AVIF image`, { status: 415 })
    if (header.format === 'jpeg' && !reachesEndOfImage(bytes)) {
      throw new ConversionError('the JPEG image cannot be decoded: the file ends before its end-of-image marker (truncated)')
    }
    let decoded: RawImage
    try {
      // The engine checks every area it would decode against the limits before allocating it.
      decoded = await decodeImage(bytes, { maxPixels: IMAGE_MAX_PIXELS, maxSide: IMAGE_MAX_SIDE })
    } catch (error) {
      if (error instanceof ImageTooLargeError) throw new ConversionError(error.message, { cause: error })
      // Our own structure checks say what is wrong; a decoder's internal message stays in the log.
      const reason = error instanceof ImageStructureError ? `: ${error.message}` : ''
      throw new ConversionError(`the ${header.format.toUpperCase()} image cannot be decoded${reason}`, { cause: error })
    }
    const image = IMAGE_MAX_DIMENSION > 0 ? fitWithin(decoded, IMAGE_MAX_DIMENSION) : decoded
    const metadata = { width: image.width, height: image.height, source_format: header.format }
    const output = { index: 0, total: 1, extension: '.png', contentType: 'image/png', metadata }
    if (header.format === 'png' && image === decoded) {
      const png = await encodePngBytes(image)
      if (png.byteLength < input.size) yield { ...output, body: png }
      return
    }
    yield { ...output, body: encodePng(image) }
  },
})
