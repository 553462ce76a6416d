// Decoding images to RGBA pixels. JPEG with libjpeg-turbo in WASM (jpeg.ts), PNG and WebP through the Squoosh
// codecs compiled to WASM (imported statically: workerd compiles no WebAssembly from bytes), one instance per codec
// and isolate, reused (a fresh instance per image leaves the old heaps to the garbage collector, which may come too
// late for 128 MB); AVIF with the Squoosh libavif build the same way; GIF (first frame) read by omggif and decoded
// in slices (gif.ts), TIFF (first page) with UTIF (utif2, bounded and in slices: tiff.ts), BMP in TypeScript. Every
// decode first checks, from the structure that decoder reads, every area it would allocate against the caller's
// limits (IMAGE_MAX_PIXELS, IMAGE_MAX_SIDE): the check lives here, so every path to a decoder (conversions,
// previews) gets it.
import { decode as decodePngWasm } from '@jsquash/png/decode'
import initPng from '@jsquash/png/codec/pkg/squoosh_png.js'
import decodeWebpWasm, { init as initWebp } from '@jsquash/webp/decode'
import decodeAvifWasm, { init as initAvif } from '@jsquash/avif/decode'
import avifWasm from '@jsquash/avif/codec/dec/avif_dec.wasm'
// The package's own .d.ts for this file describes the instance exports; the bundler gives the module.
import * as pngWasmImport from '@jsquash/png/codec/pkg/squoosh_png_bg.wasm'
import webpWasm from '@jsquash/webp/codec/dec/webp_dec.wasm'
import type { PixelRows, RawImage } from '../png/encode'
import { decodeBmp } from './bmp'
import { decodeGifFirstFrame } from './gif'
import { readImageHeader } from './header'
import { decodeJpeg } from './jpeg'
import { decodePngRows } from './png'
import { checkImageLimits, type ImageLimits, ImageStructureError } from './limits'
import { decodeTiffFirstPage } from './tiff'

const pngWasm = (pngWasmImport as unknown as { default: WebAssembly.Module }).default
let pngReady: Promise<unknown> | undefined
let webpReady: Promise<void> | undefined
let avifReady: Promise<void> | undefined
const copyOf = (bytes: Uint8Array) => bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer

function fromImageData(image: { width: number; height: number; data: Uint8ClampedArray }): RawImage {
  return { width: image.width, height: image.height, channels: 4, data: new Uint8Array(image.data.buffer, image.data.byteOffset, image.data.byteLength) }
}

/**
 * The image's pixels, after its structure has been read and every area it makes the decoder allocate has been
 * checked against `limits` (ImageTooLargeError, ImageStructureError before anything is allocated).
 */
export async function decodeImage(bytes: Uint8Array, limits: ImageLimits): Promise<RawImage> {
  const header = readImageHeader(bytes)
  if (!header) throw new ImageStructureError('the bytes are not a JPEG, PNG, WebP, GIF, BMP, TIFF or AVIF image')
  checkImageLimits(header, limits)
  switch (header.format) {
    case 'jpeg': {
      const pixels = decodeJpeg(bytes, 'rgba')
      try {
        return { width: pixels.width, height: pixels.height, channels: 4, data: pixels.copy() }
      } finally {
        pixels.release()
      }
    }
    case 'webp':
      webpReady ??= initWebp(webpWasm)
      await webpReady
      return fromImageData(await decodeWebpWasm(copyOf(bytes)))
    case 'png': {
      // One gate for every PNG reader (image → PNG reads rows, previews read RGBA): a PNG the rows decoder takes
      // is decoded by it here too, so an IDAT that holds more than its rows is refused by both, and ancillary
      // chunks (a compressed iCCP profile) are skipped by both; the others go to the Squoosh decoder in both.
      const pixels = await decodePngRows(bytes)
      if (pixels) {
        try {
          return rowsToRgba(pixels)
        } finally {
          pixels.release()
        }
      }
      // wasm-bindgen's module keeps one instance; its memory is reused from image to image.
      pngReady ??= initPng(pngWasm)
      await pngReady
      return fromImageData((await decodePngWasm(copyOf(bytes))) as { width: number; height: number; data: Uint8ClampedArray })
    }
    case 'gif':
      return await decodeGifFirstFrame(bytes)
    case 'avif': {
      avifReady ??= initAvif(avifWasm)
      await avifReady
      const decoded = await decodeAvifWasm(copyOf(bytes))
      if (!decoded) throw new Error('the AVIF image cannot be decoded')
      return fromImageData(decoded as { width: number; height: number; data: Uint8ClampedArray })
    }
    case 'tiff':
      return { ...(await decodeTiffFirstPage(bytes)), channels: 4 }
    case 'bmp':
      return await decodeBmp(bytes)
  }
}

/** Rows of 1 to 4 channels (gray, gray + alpha, RGB, RGBA) as an RGBA copy. */
function rowsToRgba({ width, height, channels, rows }: Omit<ImageRows, 'release'>): RawImage {
  const data = new Uint8Array(width * height * 4)
  for (let y = 0; y < height; y++) {
    const row = rows.row(y)
    const out = y * width * 4
    if (channels === 4) {
      data.set(row.subarray(0, width * 4), out)
      continue
    }
    for (let x = 0; x < width; x++) {
      const at = x * channels
      const to = out + x * 4
      const [r, g, b] = channels >= 3 ? [row[at]!, row[at + 1]!, row[at + 2]!] : [row[at]!, row[at]!, row[at]!]
      data[to] = r
      data[to + 1] = g
      data[to + 2] = b
      data[to + 3] = channels === 2 ? row[at + 1]! : 255
    }
  }
  return { width, height, channels: 4, data }
}

/** Decoded rows in a decoder's heap, in the file's own channels: read them, then `release` them (also on failure). */
export interface ImageRows {
  readonly width: number
  readonly height: number
  readonly channels: 1 | 2 | 3 | 4
  readonly rows: PixelRows
  release(): void
}

/**
 * For an encoder that reads rows, without the RGBA copy decodeImage makes: a JPEG as RGB (gray for a grayscale
 * file) in libjpeg-turbo's heap, a common PNG (8-bit, not interlaced, no palette or tRNS) in its own channels in
 * png.ts's heap, after the checks of decodeImage. Undefined, with nothing decoded, for the other images.
 */
export async function decodeImageRows(bytes: Uint8Array, limits: ImageLimits): Promise<ImageRows | undefined> {
  const header = readImageHeader(bytes)
  if (header?.format !== 'jpeg' && header?.format !== 'png') return undefined
  checkImageLimits(header, limits)
  return header.format === 'jpeg' ? decodeJpeg(bytes, 'rgb') : await decodePngRows(bytes)
}
