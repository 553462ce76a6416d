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
  const cropped = crop(
    image,
    Math.floor((image.width - cropWidth) / 2),
    Math.floor((image.height - cropHeight) / 2),
    Math.max(1, cropWidth),
    Math.max(1, cropHeight),
  )
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

/** A preview's box: the image fitted in it ("contain") or filling it, centre-cropped ("cover"); never enlarged. */
export interface DrawBox {
  readonly fit: 'contain' | 'cover'
  readonly width: number
  readonly height: number
}

/** The whole image's size as drawn in the box (before a cover's crop), never enlarged. */
export function drawnSize(image: { width: number; height: number }, box: DrawBox): { width: number; height: number } {
  const ratios = [box.width / image.width, box.height / image.height]
  const scale = Math.min(1, box.fit === 'cover' ? Math.max(...ratios) : Math.min(...ratios))
  return { width: Math.ceil(image.width * scale), height: Math.ceil(image.height * scale) }
}

/** The whole image drawn in the box: fitInto or coverInto. */
export function drawInto(image: RawImage, box: DrawBox): RawImage {
  return box.fit === 'cover' ? coverInto(image, box.width, box.height) : fitInto(image, box.width, box.height)
}

/** Where drawInto takes its pixels from (a crop of the image) and the size it draws them at. */
interface DrawPlan {
  readonly left: number
  readonly top: number
  readonly cropWidth: number
  readonly cropHeight: number
  readonly width: number
  readonly height: number
}

function drawPlan(image: { width: number; height: number }, box: DrawBox): DrawPlan {
  if (box.fit === 'cover') {
    const croppedWidth = Math.min(image.width, Math.round((image.height * box.width) / box.height))
    const croppedHeight = Math.min(image.height, Math.round((image.width * box.height) / box.width))
    const left = Math.floor((image.width - croppedWidth) / 2)
    const top = Math.floor((image.height - croppedHeight) / 2)
    const cropWidth = Math.max(1, croppedWidth)
    const cropHeight = Math.max(1, croppedHeight)
    const isScaled = cropWidth > box.width
    return {
      left,
      top,
      cropWidth,
      cropHeight,
      width: isScaled ? box.width : cropWidth,
      height: isScaled ? box.height : cropHeight,
    }
  }
  const scale = Math.min(box.width / image.width, box.height / image.height)
  const size =
    scale >= 1
      ? image
      : { width: Math.max(1, Math.round(image.width * scale)), height: Math.max(1, Math.round(image.height * scale)) }
  return { left: 0, top: 0, cropWidth: image.width, cropHeight: image.height, ...size }
}

/**
 * drawInto for an image that comes a row at a time, top to bottom, in 1–4 channels: each row is added to the output
 * row it falls in and dropped, so only the output (RGBA) and one output row of sums exist. The pixels are
 * drawInto's, on the image expanded to RGBA, to the byte (the same crop, the same areas averaged, the same rounding).
 */
export class RowsDrawer {
  private readonly plan: DrawPlan
  private readonly out: Uint8Array
  private readonly sums: Float64Array
  /** Each output column's first and last-plus-one source column, in the image. */
  private readonly x0: Int32Array
  private readonly x1: Int32Array
  private readonly yRatio: number
  /** The output row being summed, and its source rows (in the crop). */
  private y = 0
  private y0 = 0
  private y1: number
  private next = 0

  constructor(
    image: { width: number; height: number },
    private readonly channels: 1 | 2 | 3 | 4,
    box: DrawBox,
  ) {
    this.plan = drawPlan(image, box)
    const { width, height, cropWidth, cropHeight, left } = this.plan
    this.out = new Uint8Array(width * height * 4)
    this.sums = new Float64Array(width * channels)
    this.x0 = new Int32Array(width)
    this.x1 = new Int32Array(width)
    const xRatio = cropWidth / width
    for (let x = 0; x < width; x++) {
      const x0 = Math.floor(x * xRatio)
      this.x0[x] = left + x0
      this.x1[x] = left + Math.max(x0 + 1, Math.floor((x + 1) * xRatio))
    }
    this.yRatio = cropHeight / height
    this.y1 = this.rowEnd(0)
  }

  private rowEnd(y: number): number {
    const y0 = Math.floor(y * this.yRatio)
    return Math.max(y0 + 1, Math.floor((y + 1) * this.yRatio))
  }

  /** The next row of the image (its row `index`, counted from 0 by the caller's order). */
  push(row: Uint8Array): void {
    const source = this.next++ - this.plan.top
    if (source < this.y0 || this.y >= this.plan.height) return
    const { channels, sums, x0, x1 } = this
    for (let x = 0, o = 0; x < this.plan.width; x++, o += channels) {
      for (let sx = x0[x]!; sx < x1[x]!; sx++) {
        const i = sx * channels
        for (let c = 0; c < channels; c++) sums[o + c]! += row[i + c]!
      }
    }
    if (source + 1 >= this.y1) this.emitRow()
  }

  private emitRow(): void {
    const { channels, sums, x0, x1, out } = this
    const rows = this.y1 - this.y0
    for (let x = 0, o = 0, p = this.y * this.plan.width * 4; x < this.plan.width; x++, o += channels, p += 4) {
      const count = rows * (x1[x]! - x0[x]!)
      const first = Math.round(sums[o]! / count)
      if (channels <= 2) {
        out[p] = out[p + 1] = out[p + 2] = first
        out[p + 3] = channels === 2 ? Math.round(sums[o + 1]! / count) : 255
      } else {
        out[p] = first
        out[p + 1] = Math.round(sums[o + 1]! / count)
        out[p + 2] = Math.round(sums[o + 2]! / count)
        out[p + 3] = channels === 4 ? Math.round(sums[o + 3]! / count) : 255
      }
    }
    sums.fill(0)
    this.y++
    this.y0 = Math.floor(this.y * this.yRatio)
    this.y1 = this.rowEnd(this.y)
  }

  /** The drawing, once every row of the image has been pushed. */
  image(): RawImage {
    if (this.y < this.plan.height) throw new Error(`the drawing has ${this.y} of its ${this.plan.height} rows`)
    return { width: this.plan.width, height: this.plan.height, channels: 4, data: this.out }
  }
}
