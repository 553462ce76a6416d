// What the image decoders may be asked to decode: every pixel area a file makes a decoder allocate is checked
// against these limits before any decoding (readImageHeader finds the areas, decodeImage checks them).

export interface Extent {
  readonly width: number
  readonly height: number
}

export interface ImageLimits {
  /** Largest width × height of any area decoded (IMAGE_MAX_PIXELS). */
  readonly maxPixels: number
  /** Largest width or height of any area decoded (IMAGE_MAX_SIDE). */
  readonly maxSide: number
}

/** The file's structure cannot be decoded safely: missing, truncated, cyclic or of a kind this service refuses. */
export class ImageStructureError extends Error {
  override readonly name = 'ImageStructureError'
}

/** An area the decoder would allocate passes a limit; `limit` names the setting. */
export class ImageTooLargeError extends Error {
  override readonly name = 'ImageTooLargeError'
  constructor(
    message: string,
    readonly limit: 'IMAGE_MAX_PIXELS' | 'IMAGE_MAX_SIDE',
  ) {
    super(message)
  }
}

/**
 * Throws when an area passes a limit. `bytesPerPixel` above RGBA's 4 (a 16-bit RGBA TIFF holds 8) counts as that
 * many more pixels, so the decoder's memory stays within what IMAGE_MAX_PIXELS RGBA pixels take.
 */
export function checkImageLimits(
  image: {
    readonly width: number
    readonly height: number
    readonly extents: readonly Extent[]
    readonly bytesPerPixel?: number
  },
  limits: ImageLimits,
): void {
  const weight = Math.max(1, (image.bytesPerPixel ?? 4) / 4)
  for (const { width, height } of image.extents) {
    const what = width === image.width && height === image.height ? 'the image' : 'an area the decoder allocates'
    if (width === 0 || height === 0) throw new ImageStructureError(`${what} has no pixels (${width}×${height})`)
    if (Math.max(width, height) > limits.maxSide) {
      throw new ImageTooLargeError(
        `${what} is ${width}×${height}; the limit is ${limits.maxSide} pixels a side (IMAGE_MAX_SIDE)`,
        'IMAGE_MAX_SIDE',
      )
    }
    const pixels = width * height * weight
    if (pixels > limits.maxPixels) {
      const counted =
        weight > 1 ? `${pixels} pixels, counting ${image.bytesPerPixel} bytes a pixel as ${weight}` : `${pixels} pixels`
      throw new ImageTooLargeError(
        `${what} is ${width}×${height} (${counted}); the limit is ${limits.maxPixels} pixels (IMAGE_MAX_PIXELS)`,
        'IMAGE_MAX_PIXELS',
      )
    }
  }
}
