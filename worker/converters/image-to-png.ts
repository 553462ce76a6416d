// Images to optimized PNG: openImage (the engine's one entry, shared with previews) reads the header, then the WASM
// decoders, an optional downscale, and the streaming PNG encoder. The decoders refuse a pixel flood before
// decoding: every area they would allocate is checked against IMAGE_MAX_PIXELS and IMAGE_MAX_SIDE.
// A PNG that would not get smaller (and is not resized) produces no output, which ends the chain. JPEGs and the
// common PNGs that keep their size are encoded from the rows in the decoder's heap (withImageRows): no RGBA copy.
import type { ImageRows } from '../engines/image/decode'
import { measureImage, openImageInput, refusedAs, withImageBands, withImageRows } from '../engines/image/open'
import type { PngBands } from '../engines/image/png'
import type { TiffBands } from '../engines/image/tiff'
import { fitWithin } from '../engines/image/resize'
import { encodePng, encodePngRows, type PngChunks, pngChunks, reducedRowChannels } from '../engines/png/encode'
import { imageToPngInfo } from './catalog/image-to-png'
import { defineConverter } from './converter'

/**
 * The PNG of rows in a decoder's heap, with the fewest channels their pixels allow, read to its end (the rows are
 * freed after) and kept in its chunks: the output is never joined into a second copy.
 */
function encodeRows({ width, height, channels, rows }: ImageRows): Promise<PngChunks> {
  return pngChunks(
    encodePngRows({ width, height, channels, outputChannels: reducedRowChannels(width, channels, rows) }, [rows]),
  )
}

/**
 * The PNG of a large PNG (or a TIFF in strips) read in bands twice, its rows never whole: once for the channels its pixels need (stopped
 * as soon as colour and alpha are both known to stay), once into the encoder.
 */
async function encodeBands(
  png: PngBands | TiffBands,
): Promise<{ pixels: { width: number; height: number }; png: PngChunks }> {
  const { width, height, channels } = png
  const hasAlpha = channels === 2 || channels === 4
  const hasColour = channels >= 3
  let keepAlpha = false
  let keepColour = false
  const isSettled = () => (keepAlpha || !hasAlpha) && (keepColour || !hasColour)
  if (!isSettled()) {
    for await (const rows of png.bands()) {
      const needed = await reducedRowChannels(width, channels, rows)
      keepAlpha ||= needed === 2 || needed === 4
      keepColour ||= needed >= 3
      if (isSettled()) break
    }
  }
  const outputChannels = hasColour && keepColour ? (hasAlpha && keepAlpha ? 4 : 3) : hasAlpha && keepAlpha ? 2 : 1
  return {
    pixels: { width, height },
    png: await pngChunks(encodePngRows({ width, height, channels, outputChannels }, png.bands())),
  }
}

export const imageToPng = defineConverter({
  ...imageToPngInfo,
  async *convert(input, ctx) {
    const { IMAGE_MAX_BYTES, IMAGE_MAX_PIXELS, IMAGE_MAX_SIDE, IMAGE_MAX_DIMENSION } = ctx.settings
    // The decoders need the whole file: IMAGE_MAX_BYTES bounds it.
    const bytes = await input.bytes(IMAGE_MAX_BYTES)
    const limits = { maxPixels: IMAGE_MAX_PIXELS, maxSide: IMAGE_MAX_SIDE }
    const header = await refusedAs(input.name, () => measureImage(bytes))
    if (!(IMAGE_MAX_DIMENSION > 0 && Math.max(header.width, header.height) > IMAGE_MAX_DIMENSION)) {
      // The picture's size kept, not its rows: the decoder's heap is let go before the output is stored, not held by
      // this generator until the next output is asked for.
      const encoded =
        (await refusedAs(input.name, () => withImageBands(bytes, header, limits, encodeBands))) ??
        (await refusedAs(input.name, () =>
          withImageRows(bytes, header, limits, async (pixels) => ({
            pixels: { width: pixels.width, height: pixels.height },
            png: await encodeRows(pixels),
          })),
        ))
      if (encoded) {
        const { pixels, png } = encoded.result
        // A PNG that would not get smaller makes no output (see above).
        if (header.format === 'png' && png.byteLength >= input.size) return
        const metadata = { width: pixels.width, height: pixels.height, source_format: header.format }
        yield { index: 0, total: 1, extension: '.png', contentType: 'image/png', metadata, body: png.stream() }
        return
      }
    }
    const { image: decoded } = await openImageInput(input.name, bytes, limits)
    const image = IMAGE_MAX_DIMENSION > 0 ? fitWithin(decoded, IMAGE_MAX_DIMENSION) : decoded
    const metadata = { width: image.width, height: image.height, source_format: header.format }
    const output = { index: 0, total: 1, extension: '.png', contentType: 'image/png', metadata }
    if (header.format === 'png' && image === decoded) {
      const png = await pngChunks(encodePng(image))
      if (png.byteLength < input.size) yield { ...output, body: png.stream() }
      return
    }
    yield { ...output, body: encodePng(image) }
  },
})
