// Downscaling by area averaging (each output pixel the mean of the source pixels it covers): sharp enough for
// photos and screenshots, and exact for integer factors.
import type { RawImage } from '../png/encode'

export function fitWithin(image: RawImage, maxDimension: number): RawImage {
  const scale = maxDimension / Math.max(image.width, image.height)
  if (scale >= 1) return image
  const width = Math.max(1, Math.round(image.width * scale))
  const height = Math.max(1, Math.round(image.height * scale))
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
