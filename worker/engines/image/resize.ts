// Downscaling by area averaging (each output pixel the mean of the source pixels it covers): sharp enough for
// photos and screenshots, and exact for integer factors. Never enlarges.
import type { RawImage } from '../png/encode'

export function fitWithin(image: RawImage, maxDimension: number): RawImage {
  return fitInto(image, maxDimension, maxDimension)
}

/** The whole image scaled down to fit a width × height box, its proportions kept ("contain"). */
export function fitInto(image: RawImage, boxWidth: number, boxHeight: number): RawImage {
  const scale = Math.min(boxWidth / image.width, boxHeight / image.height)
  if (scale >= 1) return image
  return resizeTo(image, Math.max(1, Math.round(image.width * scale)), Math.max(1, Math.round(image.height * scale)))
}

/**
 * The image scaled and centre-cropped to fill a width × height box ("cover"). An image smaller than the box is
 * cropped to the box's proportions at its own size instead of being enlarged.
 */
export function coverInto(image: RawImage, boxWidth: number, boxHeight: number): RawImage {
  const cropWidth = Math.min(image.width, Math.round((image.height * boxWidth) / boxHeight))
  const cropHeight = Math.min(image.height, Math.round((image.width * boxHeight) / boxWidth))
  const cropped = crop(image, Math.floor((image.width - cropWidth) / 2), Math.floor((image.height - cropHeight) / 2), Math.max(1, cropWidth), Math.max(1, cropHeight))
  return cropped.width > boxWidth ? resizeTo(cropped, boxWidth, boxHeight) : cropped
}

function crop(image: RawImage, left: number, top: number, width: number, height: number): RawImage {
  if (left === 0 && top === 0 && width === image.width && height === image.height) return image
  const { channels } = image
  const out = new Uint8Array(width * height * channels)
  for (let y = 0; y < height; y++) {
    const from = ((top + y) * image.width + left) * channels
    out.set(image.data.subarray(from, from + width * channels), y * width * channels)
  }
  return { width, height, channels, data: out }
}

function resizeTo(image: RawImage, width: number, height: number): RawImage {
  const { channels, data } = image
  const out = new Uint8Array(width * height * channels)
  const sums = new Float64Array(channels)
  const xRatio = image.width / width
  const yRatio = image.height / height
  for (let y = 0; y < height; y++) {
    const y0 = Math.floor(y * yRatio)
    const y1 = Math.max(y0 + 1, Math.floor((y + 1) * yRatio))
    for (let x = 0; x < width; x++) {
      const x0 = Math.floor(x * xRatio)
      const x1 = Math.max(x0 + 1, Math.floor((x + 1) * xRatio))
      sums.fill(0)
      for (let sy = y0; sy < y1; sy++) {
        for (let sx = x0; sx < x1; sx++) {
          const i = (sy * image.width + sx) * channels
          for (let c = 0; c < channels; c++) sums[c]! += data[i + c]!
        }
      }
      const count = (y1 - y0) * (x1 - x0)
      const o = (y * width + x) * channels
      for (let c = 0; c < channels; c++) out[o + c] = Math.round(sums[c]! / count)
    }
  }
  return { width, height, channels, data: out }
}
