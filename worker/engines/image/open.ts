// The image decoders' one entry (image → PNG and previews): the header read first, a truncated JPEG refused,
// then decodeImage (or decodeImageRows), which checks every area it would allocate against the limits; each
// refusal says why.
import { ConversionError } from '../../conversion-error'
import type { RawImage } from '../png/encode'
import { decodeImage, decodeImageDrawn, decodeImageRows, type ImageRows } from './decode'
import { readImageHeader, type ImageHeader } from './header'
import { MAX_JPEG_SCANS, readJpegStructure } from './jpeg-end'
import { checkImageLimits, type ImageLimits, ImageStructureError, ImageTooLargeError } from './limits'
import { PngDecodeError, type PngBands, pngBands } from './png'
import type { ErrorCode } from '../../errors'
import type { DrawBox } from './resize'
import { type TiffBands, TiffDecodeError, tiffBands } from './tiff'

/** The image is refused before or while decoding, with the code of the error table its client gets. */
export class ImageRefusedError extends Error {
  override readonly name = 'ImageRefusedError'
  constructor(
    message: string,
    readonly code: Extract<ErrorCode, 'UNSUPPORTED_FORMAT' | 'CONVERSION_FAILED'>,
    options?: { cause?: unknown },
  ) {
    super(message, options)
  }
}

/** The image's header, read and checked as openImage does before decoding (ImageRefusedError). */
export function measureImage(bytes: Uint8Array): ImageHeader {
  let header: ImageHeader | undefined
  try {
    header = readImageHeader(bytes)
  } catch (error) {
    throw new ImageRefusedError(`the image cannot be decoded: ${(error as Error).message}`, 'CONVERSION_FAILED', {
      cause: error,
    })
  }
  if (!header) throw new ImageRefusedError('not a JPEG, PNG, WebP, GIF, BMP, TIFF or AVIF image', 'UNSUPPORTED_FORMAT')
  if (header.format === 'jpeg') {
    const { isWhole, scans } = readJpegStructure(bytes)
    if (!isWhole)
      throw new ImageRefusedError(
        'the JPEG image cannot be decoded: the file ends before its end-of-image marker (truncated)',
        'CONVERSION_FAILED',
      )
    // Each scan is a pass over the whole image: their count, not the file's size, sets the decoder's work.
    if (scans > MAX_JPEG_SCANS)
      throw new ImageRefusedError(
        `the JPEG image has ${scans} scans; at most ${MAX_JPEG_SCANS} are decoded (each is a pass over the whole image)`,
        'CONVERSION_FAILED',
      )
  }
  return header
}

/**
 * Measures, then decodes (first frame or page) to RGBA; with `box` (a preview's), drawn into it, decoded no larger
 * than it needs (decodeImageDrawn).
 */
export async function openImage(
  bytes: Uint8Array,
  limits: ImageLimits,
  box?: DrawBox,
): Promise<{ header: ImageHeader; image: RawImage }> {
  const header = measureImage(bytes)
  return {
    header,
    image: await refusing(header, () => (box ? decodeImageDrawn(bytes, limits, box) : decodeImage(bytes, limits))),
  }
}

/**
 * Runs `use` on the measured image's rows in a decoder's heap (JPEGs and the common PNGs: decodeImageRows), then
 * frees them; undefined, with nothing decoded, for the images only openImage reads.
 */
export async function withImageRows<T>(
  bytes: Uint8Array,
  header: ImageHeader,
  limits: ImageLimits,
  use: (pixels: ImageRows) => Promise<T>,
): Promise<{ result: T } | undefined> {
  const pixels = await refusing(header, () => decodeImageRows(bytes, limits))
  if (!pixels) return undefined
  try {
    return { result: await use(pixels) }
  } finally {
    pixels.release()
  }
}

/**
 * Runs `use` on a large common PNG read in bands (png.ts's pngBands: its rows never whole, read again as often as
 * asked); undefined, with nothing decoded, for the images it does not read that way. A fault of the file found
 * while `use` reads it is refused as a decoding fault is.
 */
export async function withImageBands<T>(
  bytes: Uint8Array,
  header: ImageHeader,
  limits: ImageLimits,
  use: (png: PngBands | TiffBands) => Promise<T>,
): Promise<{ result: T } | undefined> {
  if (header.format !== 'png' && header.format !== 'tiff') return undefined
  const png = await refusing(header, async () => {
    checkImageLimits(header, limits)
    return header.format === 'png' ? pngBands(bytes) : tiffBands(bytes)
  })
  if (!png) return undefined
  try {
    return { result: await use(png) }
  } catch (error) {
    throw error instanceof PngDecodeError || error instanceof ImageStructureError || error instanceof TiffDecodeError
      ? refusal(header, error)
      : error
  }
}

async function refusing<T>(header: ImageHeader, decode: () => Promise<T>): Promise<T> {
  try {
    return await decode()
  } catch (error) {
    throw refusal(header, error)
  }
}

function refusal(header: ImageHeader, error: unknown): ImageRefusedError {
  if (error instanceof ImageTooLargeError)
    return new ImageRefusedError(error.message, 'CONVERSION_FAILED', { cause: error })
  const reason = error instanceof ImageStructureError ? `: ${error.message}` : ''
  return new ImageRefusedError(
    `the ${header.format.toUpperCase()} image cannot be decoded${reason}`,
    'CONVERSION_FAILED',
    {
      cause: error,
    },
  )
}

/**
 * The image decoded through openImage (the structure it will decode measured and checked against
 * the limits before anything is allocated), its refusals as ConversionErrors: image → PNG and previews (which pass
 * the box they draw in, so that the image is decoded no larger than it needs and drawn into it).
 */
export function openImageInput(
  name: string,
  bytes: Uint8Array,
  limits: ImageLimits,
  box?: DrawBox,
): ReturnType<typeof openImage> {
  return refusedAs(name, () => openImage(bytes, limits, box))
}

/** `open` run with the image's refusals as ConversionErrors, the file named where its kind is refused. */
export async function refusedAs<T>(name: string, open: () => T | Promise<T>): Promise<T> {
  try {
    return await open()
  } catch (error) {
    if (!(error instanceof ImageRefusedError)) throw error
    const message = error.code === 'UNSUPPORTED_FORMAT' ? `"${name}" is ${error.message}` : error.message
    throw new ConversionError(message, { code: error.code, cause: error })
  }
}
