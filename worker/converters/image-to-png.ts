// Images to optimized PNG, in the Worker: the header is read first (a pixel flood is refused before decoding),
// then WASM decoders, an optional downscale, and the streaming PNG encoder. A PNG that would not get smaller
// (and is not resized) produces no output, which ends the chain.
import { ImageRefusedError, openImage } from '../engines/image/open'
import { fitWithin } from '../engines/image/resize'
import { encodePng, encodePngBytes } from '../engines/png/encode'
import { ConversionError, type Converter } from './converter'

export const imageToPng: Converter = {
  name: 'image-to-png',
  from: ['.jpg', '.jpeg', '.jfif', '.png', '.webp', '.gif', '.bmp', '.tif', '.tiff', '.avif'],
  accepts: ['image/jpeg', 'image/png', 'image/webp', 'image/gif', 'image/bmp', 'image/tiff', 'image/avif'],
  to: '.png',
  unreachable: { '.txt': 'reading the text in an image needs OCR (optical character recognition), which is not supported' },
  async *convert(input, ctx) {
    const { IMAGE_MAX_BYTES, IMAGE_MAX_PIXELS, IMAGE_MAX_DIMENSION } = ctx.config
    // The decoders need the whole file: IMAGE_MAX_BYTES bounds it.
    const bytes = await input.bytes(IMAGE_MAX_BYTES)
    let opened: Awaited<ReturnType<typeof openImage>>
    try {
      opened = await openImage(bytes, { maxPixels: IMAGE_MAX_PIXELS })
    } catch (error) {
      if (!(error instanceof ImageRefusedError)) throw error
      throw new ConversionError(error.status === 415 ? `"${input.name}" is ${error.message}` : error.message, { status: error.status, cause: error.cause })
    }
    const { header, image: decoded } = opened
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
}
