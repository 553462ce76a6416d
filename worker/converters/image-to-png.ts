// Images to optimized PNG, in the Worker: the header is read first, then the WASM decoders (which refuse a pixel
// flood before decoding: every area they would allocate is checked against IMAGE_MAX_PIXELS and IMAGE_MAX_SIDE),
// an optional downscale, and the streaming PNG encoder. A PNG that would not get smaller (and is not resized)
// produces no output, which ends the chain.
import { decodeImage, decodeJpegRows, withCheckedPngRows } from '../engines/image/decode'
import { type ImageHeader, readImageHeader } from '../engines/image/header'
import { ImageStructureError, ImageTooLargeError } from '../engines/image/limits'
import { reachesEndOfImage } from '../engines/image/jpeg-end'
import { fitWithin } from '../engines/image/resize'
import { encodePng, encodePngBytes, encodePngRows, type PixelRows, pngBytes, reducedRowChannels } from '../engines/png/encode'
import { ConversionError, defineConverter } from './converter'

export const imageToPng = defineConverter({
  name: 'image-to-png',
  settings: ['IMAGE_MAX_BYTES', 'IMAGE_MAX_PIXELS', 'IMAGE_MAX_SIDE', 'IMAGE_MAX_DIMENSION'],
  from: ['.jpg', '.jpeg', '.jfif', '.png', '.webp', '.gif', '.bmp', '.tif', '.tiff', '.avif'],
  accepts: ['image/jpeg', 'image/png', 'image/webp', 'image/gif', 'image/bmp', 'image/tiff', 'image/avif'],
  to: '.png',
  unreachable: { '.txt': 'reading the text in an image needs OCR (optical character recognition), which is not supported' },
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
    const limits = { maxPixels: IMAGE_MAX_PIXELS, maxSide: IMAGE_MAX_SIDE }
    const output = { index: 0, total: 1, extension: '.png', contentType: 'image/png' }
    const resized = IMAGE_MAX_DIMENSION > 0 && Math.max(header.width, header.height) > IMAGE_MAX_DIMENSION
    if (header.format === 'jpeg' && !resized) {
      // The PNG is encoded from the rows in the decoder's heap (no RGBA copy of the picture), then they are freed.
      const pixels = await decoding(header, () => decodeJpegRows(bytes, limits))
      let body: Uint8Array
      try {
        body = await encodeRows(pixels)
      } finally {
        pixels.release()
      }
      yield { ...output, metadata: { width: pixels.width, height: pixels.height, source_format: header.format }, body }
      return
    }
    if (header.format === 'png' && !resized) {
      // The common PNGs the same way, from rows in their own channels; the others through decodeImage below.
      const encoded = await decoding(header, () => withCheckedPngRows(bytes, limits, async (pixels) => ({ pixels, body: await encodeRows(pixels) })))
      if (encoded) {
        const { pixels, body } = encoded.result
        if (body.byteLength < input.size) yield { ...output, metadata: { width: pixels.width, height: pixels.height, source_format: header.format }, body }
        return
      }
    }
    // The engine checks every area it would decode against the limits before allocating it.
    const decoded = await decoding(header, () => decodeImage(bytes, limits))
    const image = IMAGE_MAX_DIMENSION > 0 ? fitWithin(decoded, IMAGE_MAX_DIMENSION) : decoded
    const metadata = { width: image.width, height: image.height, source_format: header.format }
    if (header.format === 'png' && image === decoded) {
      const png = await encodePngBytes(image)
      if (png.byteLength < input.size) yield { ...output, metadata, body: png }
      return
    }
    yield { ...output, metadata, body: encodePng(image) }
  },
})

/** The PNG of rows read from a decoder's heap, with the fewest channels their pixels allow. */
function encodeRows({ width, height, channels, rows }: { width: number; height: number; channels: 1 | 2 | 3 | 4; rows: PixelRows }): Promise<Uint8Array> {
  return pngBytes(encodePngRows({ width, height, channels, outputChannels: reducedRowChannels(width, channels, rows) }, [rows]))
}

/** A decoder's failure as the job's: the limit it names, our own structure checks' reason, or the format alone. */
function decodingFailure(header: ImageHeader, error: unknown): ConversionError {
  if (error instanceof ImageTooLargeError) return new ConversionError(error.message, { cause: error })
  // Our own structure checks say what is wrong; a decoder's internal message stays in the log.
  const reason = error instanceof ImageStructureError ? `: ${error.message}` : ''
  return new ConversionError(`the ${header.format.toUpperCase()} image cannot be decoded${reason}`, { cause: error })
}

async function decoding<T>(header: ImageHeader, decode: () => T | Promise<T>): Promise<T> {
  try {
    return await decode()
  } catch (error) {
    throw decodingFailure(header, error)
  }
}
