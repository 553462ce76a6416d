// Decoding images to RGBA pixels. The WASM codecs are imported statically: workerd compiles no WebAssembly from bytes.
// - JPEG: libjpeg-turbo (jpeg.ts).
// - WebP and AVIF: the Squoosh codecs, a fresh instance per image, dropped with it. A WASM memory never shrinks, so
//   an instance kept per isolate would stay at its largest image's heap for every later step.
// - PNG: the fast path (png.ts); the other PNGs go to Squoosh's PNG decoder, also a fresh instance per image
//   (png-squoosh.ts).
// - GIF (first frame): omggif's structure, decoded in slices (gif.ts). TIFF (first page): UTIF, bounded and in
//   slices (tiff.ts). BMP: TypeScript (bmp.ts).
// Every decode first checks, from the structure that decoder reads, every area it would allocate against the
// caller's limits (IMAGE_MAX_PIXELS, IMAGE_MAX_SIDE). The check lives here, so every path to a decoder (conversions,
// previews) gets it.
// First: the codecs' glue must find an ImageData that holds none of their instances (image-data.ts).
import './image-data'
import avifDecoderFactory from '@jsquash/avif/codec/dec/avif_dec.js'
import avifWasm from '@jsquash/avif/codec/dec/avif_dec.wasm'
import webpDecoderFactory from '@jsquash/webp/codec/dec/webp_dec.js'
import { initEmscriptenModule } from '@jsquash/webp/utils.js'
import webpWasm from '@jsquash/webp/codec/dec/webp_dec.wasm'
import type { PixelRows, RawImage } from '../png/encode'
import { decodeBmp } from './bmp'
import { decodeGifFirstFrame } from './gif'
import { readImageHeader } from './header'
import { decodeJpeg } from './jpeg'
import { decodePngDrawn, decodePngRows } from './png'
import { decodePngSquoosh } from './png-squoosh'
import { type DrawBox, drawInto, drawnSize } from './resize'
import { checkImageLimits, type ImageLimits, ImageStructureError, ImageTooLargeError } from './limits'
import { decodeTiffFirstPage } from './tiff'

const copyOf = (bytes: Uint8Array) =>
  bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer

function fromImageData(image: { width: number; height: number; data: Uint8ClampedArray }): RawImage {
  return {
    width: image.width,
    height: image.height,
    channels: 4,
    data: new Uint8Array(image.data.buffer, image.data.byteOffset, image.data.byteLength),
  }
}

interface EmscriptenDecoder {
  decode(data: ArrayBuffer, bitDepth?: number): { width: number; height: number; data: Uint8ClampedArray } | null
}

/**
 * The WebAssembly heap a Squoosh decoder grows to, per pixel of the image, as `npm run check:deploy` measured it on
 * 12 MP images (docs/platform-limits.md): the pixels, the codec's own planes and emscripten's growth steps.
 */
const WEBP_HEAP_BYTES_PER_PIXEL = 5
const AVIF_HEAP_BYTES_PER_PIXEL = 20
/**
 * Squoosh's PNG decoder (palette, 16-bit, interlaced, tRNS PNGs): the check measured its heap at the file plus about
 * 4 bytes a pixel for 12 MP (52, 83 and 79 MiB), and workerd's resident memory at 124 MiB (interlaced) and 166 MiB
 * (16-bit): 7 bytes a pixel keeps both inside.
 */
const PNG_HEAP_BYTES_PER_PIXEL = 7
/**
 * The heap a Squoosh decoder (WebP, AVIF) grows to for this file, estimated as checkDecodeHeap does; 0 for the
 * other formats, whose decoders draw in bands or keep no heap past the decode.
 */
export function squooshDecodeHeapBytes(header: { format: string; width: number; height: number }, fileBytes: number) {
  const perPixel =
    header.format === 'webp' ? WEBP_HEAP_BYTES_PER_PIXEL : header.format === 'avif' ? AVIF_HEAP_BYTES_PER_PIXEL : 0
  return perPixel ? fileBytes + header.width * header.height * perPixel : 0
}

/** The most a decoder's heap may grow to: with the RGBA copy and what the step makes, an isolate has 128 MB. */
export const DECODE_HEAP_MAX_BYTES = 80 * 2 ** 20

/** Refuses (ImageTooLargeError) an image whose decoder would grow past DECODE_HEAP_MAX_BYTES, before it starts. */
function checkDecodeHeap(
  format: string,
  image: { width: number; height: number },
  fileBytes: number,
  bytesPerPixel: number,
): void {
  const heapBytes = fileBytes + image.width * image.height * bytesPerPixel
  if (heapBytes <= DECODE_HEAP_MAX_BYTES) return
  const most = Math.floor((DECODE_HEAP_MAX_BYTES - fileBytes) / bytesPerPixel)
  throw new ImageTooLargeError(
    `a ${format} image of ${image.width}×${image.height} needs about ${Math.ceil(heapBytes / 2 ** 20)} MiB to decode; ${format} images are decoded up to about ${Math.max(0, most)} pixels (a Worker has 128 MB)`,
    'IMAGE_MAX_PIXELS',
  )
}

/** Rows in the file's channels as one RGBA copy. */
function rgbaOf({
  width,
  height,
  channels,
  rows,
}: {
  width: number
  height: number
  channels: 1 | 2 | 3 | 4
  rows: PixelRows
}): RawImage {
  const out = new Uint8Array(width * height * 4)
  for (let y = 0; y < height; y++) {
    const row = rows.row(y)
    const at = y * width * 4
    if (channels === 4) {
      out.set(row, at)
      continue
    }
    for (let x = 0; x < width; x++) {
      const i = x * channels
      const o = at + x * 4
      const gray = channels <= 2
      out[o] = row[i]!
      out[o + 1] = row[gray ? i : i + 1]!
      out[o + 2] = row[gray ? i : i + 2]!
      out[o + 3] = channels === 2 ? row[i + 1]! : 255
    }
  }
  return { width, height, channels: 4, data: out }
}

/** Bytes at each end of a freed block that an allocator may write its bookkeeping over (dlmalloc: 24 and 4). */
const ALLOCATOR_EDGE_BYTES = 256

/**
 * Runs a Squoosh decoder's `decode` so that the pixels it answers stay in its heap instead of being copied into
 * JavaScript. Its glue makes them with `new Uint8ClampedArray(view of the heap)`, which is a copy; for that one call
 * the constructor answers the view itself. The decoder frees the block before it returns, and free() may write its
 * bookkeeping at the block's ends: those bytes are saved when the view is made and put back after. Pixels of a few
 * hundred bytes at most are copied, as the glue does. Nothing else runs in that instance (a fresh one per image), so
 * the rest stays as decoded. The view keeps the instance's memory, which goes with the image.
 */
function withPixelsInHeap<T>(decode: () => T): T {
  const copying = globalThis.Uint8ClampedArray
  let view: Uint8Array | undefined
  let edges: [Uint8Array, Uint8Array] | undefined
  globalThis.Uint8ClampedArray = new Proxy(copying, {
    construct(target, args, newTarget) {
      const [source] = args as [unknown]
      if (view || !(source instanceof Uint8Array) || source.byteLength < 2 * ALLOCATOR_EDGE_BYTES)
        return Reflect.construct(target, args, newTarget)
      view = source
      edges = [source.slice(0, ALLOCATOR_EDGE_BYTES), source.slice(-ALLOCATOR_EDGE_BYTES)]
      return source
    },
  })
  try {
    return decode()
  } finally {
    globalThis.Uint8ClampedArray = copying
    if (view && edges) {
      view.set(edges[0], 0)
      view.set(edges[1], view.byteLength - ALLOCATOR_EDGE_BYTES)
    }
    // The proxy's handler closes over the view: nothing it leaves behind may reach the heap.
    view = undefined
  }
}

/** A fresh instance of a Squoosh decoder: it goes with the image it decoded. */
const freshDecoder = (factory: unknown, wasm: unknown) =>
  initEmscriptenModule(factory as never, wasm as WebAssembly.Module) as Promise<EmscriptenDecoder>

/**
 * The image's pixels, after its structure has been read and every area it makes the decoder allocate has been
 * checked against `limits` (ImageTooLargeError, ImageStructureError before anything is allocated). `atLeast`: the
 * size the caller will scale it to (a preview's), which a JPEG is decoded straight to (DCT scaling); other formats
 * decode at full size.
 */
export async function decodeImage(
  bytes: Uint8Array,
  limits: ImageLimits,
  atLeast?: { width: number; height: number },
): Promise<RawImage> {
  const header = readImageHeader(bytes)
  if (!header) throw new ImageStructureError('the bytes are not a JPEG, PNG, WebP, GIF, BMP, TIFF or AVIF image')
  checkImageLimits(header, limits)
  switch (header.format) {
    case 'jpeg': {
      const pixels = decodeJpeg(bytes, 'rgba', atLeast)
      try {
        return { width: pixels.width, height: pixels.height, channels: 4, data: pixels.copy() }
      } finally {
        pixels.release()
      }
    }
    case 'webp': {
      checkDecodeHeap('WebP', header, bytes.byteLength, WEBP_HEAP_BYTES_PER_PIXEL)
      const decoder = await freshDecoder(webpDecoderFactory, webpWasm)
      const decoded = withPixelsInHeap(() => decoder.decode(copyOf(bytes)))
      if (!decoded) throw new Error('the WebP image cannot be decoded')
      return fromImageData(decoded)
    }
    case 'png': {
      // One gate for every PNG reader (image → PNG reads rows, previews read RGBA): a PNG the rows decoder takes
      // is decoded by it here too, through its fresh heap (png.ts), copied out as RGBA and the heap dropped, so an
      // IDAT that holds more than its rows is refused by both, and ancillary chunks (a compressed iCCP profile) are
      // skipped by both; the others go to the Squoosh decoder in both.
      const rows = await decodePngRows(bytes)
      if (rows) {
        try {
          return rgbaOf(rows)
        } finally {
          rows.release()
        }
      }
      checkDecodeHeap('PNG', header, bytes.byteLength, PNG_HEAP_BYTES_PER_PIXEL)
      return decodePngSquoosh(bytes)
    }
    case 'gif':
      return await decodeGifFirstFrame(bytes)
    case 'avif': {
      checkDecodeHeap('AVIF', header, bytes.byteLength, AVIF_HEAP_BYTES_PER_PIXEL)
      const decoded = (await freshDecoder(avifDecoderFactory, avifWasm)).decode(copyOf(bytes), 8)
      if (!decoded) throw new Error('the AVIF image cannot be decoded')
      return fromImageData(decoded)
    }
    case 'tiff':
      return { ...(await decodeTiffFirstPage(bytes)), channels: 4 }
    case 'bmp':
      return await decodeBmp(bytes)
  }
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
 * For an encoder that reads rows, without the RGBA copy decodeImage makes, after the checks of decodeImage. A JPEG
 * as RGB (gray for a grayscale file) in libjpeg-turbo's heap; a common PNG (8-bit, not interlaced, no palette or
 * tRNS) in its own channels in png.ts's heap. Undefined, with nothing decoded, for the other images.
 */
export async function decodeImageRows(bytes: Uint8Array, limits: ImageLimits): Promise<ImageRows | undefined> {
  const header = readImageHeader(bytes)
  if (header?.format !== 'jpeg' && header?.format !== 'png') return undefined
  checkImageLimits(header, limits)
  return header.format === 'jpeg' ? decodeJpeg(bytes, 'rgb') : await decodePngRows(bytes)
}

/**
 * The image drawn into a preview's box (drawInto), after the checks of decodeImage, decoded no larger than it
 * needs. A common PNG goes a band of rows at a time straight into the drawing (png.ts's decodePngDrawn: its rows
 * never whole). A JPEG is decoded at the smallest DCT scale that covers the drawing; the others whole, then drawn.
 */
export async function decodeImageDrawn(bytes: Uint8Array, limits: ImageLimits, box: DrawBox): Promise<RawImage> {
  const header = readImageHeader(bytes)
  if (!header) throw new ImageStructureError('the bytes are not a JPEG, PNG, WebP, GIF, BMP, TIFF or AVIF image')
  checkImageLimits(header, limits)
  const drawn = header.format === 'png' ? await decodePngDrawn(bytes, box) : undefined
  return drawn ?? drawInto(await decodeImage(bytes, limits, drawnSize(header, box)), box)
}
