// An image's preview pixels, through the entry point its conversion uses (openImageInput: the header measured and
// checked against the limits before anything is decoded), fitted or cropped to the box.
import type { Config } from '../config'
import type { ConversionInput } from '../converters/converter'
import { ConversionError } from '../conversion-error'
import { squooshDecodeHeapBytes } from '../engines/image/decode'
import { readImageHeader } from '../engines/image/header'
import { openImageInput } from '../engines/image/open'
import { drawnSize } from '../engines/image/resize'
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
  checkPreviewHeap(bytes, params)
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

const MiB = 2 ** 20
/**
 * A WebP or AVIF image's decoder heap and the preview encoder's, together, at most: the decoder's memory is alive
 * until the step ends (nothing collects it before the encoder grows), and with the runtime's own an isolate has 128 MB.
 */
export const PREVIEW_HEAP_MAX_BYTES = 84 * MiB
/**
 * The preview encoders' heaps as `npm run check:deploy` measures them (docs/platform-limits.md): libavif's at its
 * largest box (AVIF_PREVIEW_MAX_SIDE), libwebp's a drawn pixel. The PNG encoder works a batch of rows at a time.
 */
const AVIF_ENCODER_HEAP_BYTES = 35 * MiB
const FORMAT_NAMES: Record<string, string> = { webp: 'WebP', avif: 'AVIF', png: 'PNG' }
const WEBP_ENCODER_HEAP_BYTES_PER_PIXEL = 18

/**
 * Refuses (422) a preview whose image decoder and encoder would pass PREVIEW_HEAP_MAX_BYTES together. A file whose
 * header cannot be read is left to openImageInput's refusal.
 */
export function checkPreviewHeap(bytes: Uint8Array, params: PreviewParams): void {
  let header: ReturnType<typeof readImageHeader>
  try {
    header = readImageHeader(bytes)
  } catch {
    return
  }
  if (!header) return
  const decoderBytes = squooshDecodeHeapBytes(header, bytes.byteLength)
  if (!decoderBytes) return
  const drawn = drawnSize(header, params)
  const drawnPixels = Math.min(drawn.width, params.width) * Math.min(drawn.height, params.height)
  const encoderBytes =
    params.format === 'avif'
      ? AVIF_ENCODER_HEAP_BYTES
      : params.format === 'webp'
        ? drawnPixels * WEBP_ENCODER_HEAP_BYTES_PER_PIXEL
        : 0
  if (decoderBytes + encoderBytes <= PREVIEW_HEAP_MAX_BYTES) return
  const format = FORMAT_NAMES[header.format]
  throw new ConversionError(
    `the ${FORMAT_NAMES[params.format]} preview of this ${header.width}×${header.height} ${format} image needs about ${Math.ceil((decoderBytes + encoderBytes) / MiB)} MiB (the ${format} decoder's heap and the preview encoder's; at most ${PREVIEW_HEAP_MAX_BYTES / MiB} MiB, a Worker has 128 MB): ask for a smaller w and h, or format=png`,
  )
}

/**
 * The size of the whole image as the preview draws it, never enlarged: fitted in the box (contain) or filling it
 * (cover).
 */
export { drawnSize } from '../engines/image/resize'
