// An image's preview pixels, through the entry point its conversion uses (openImageInput: the header measured and
// checked against the limits before anything is decoded), fitted or cropped to the box.
import type { Config } from '../config'
import type { ConversionInput } from '../converters/converter'
import { openImageInput } from '../engines/image/open'
import type { RawImage } from '../engines/png/encode'
import { onlyFirstPage } from './pages'
import type { PreviewParams } from './params'

export async function imagePixels(
  input: ConversionInput,
  params: PreviewParams,
  config: Pick<Config, 'IMAGE_MAX_BYTES' | 'IMAGE_MAX_PIXELS' | 'IMAGE_MAX_SIDE'>,
): Promise<RawImage> {
  onlyFirstPage(params, 'an image')
  // The decoders need the whole file: IMAGE_MAX_BYTES bounds it.
  const bytes = await input.bytes(config.IMAGE_MAX_BYTES)
  // Decoded no larger than drawn where the format allows (a JPEG by DCT scaling: a 12 MP photo at 1/8 for a
  // thumbnail; a PNG a band of rows at a time into the drawing), never to the full-size pixels and a copy of them.
  const { image } = await openImageInput(
    input.name,
    bytes,
    { maxPixels: config.IMAGE_MAX_PIXELS, maxSide: config.IMAGE_MAX_SIDE },
    params,
  )
  return image
}

/**
 * The size of the whole image as the preview draws it, never enlarged: fitted in the box (contain) or filling it
 * (cover).
 */
export { drawnSize } from '../engines/image/resize'
