// Decoding images to RGBA pixels. JPEG, PNG and WebP through the Squoosh codecs compiled to WASM (imported
// statically: workerd compiles no WebAssembly from bytes), one instance per codec and isolate, reused (a
// fresh instance per image leaves the old heaps to the garbage collector, which may come too late for 128 MB); AVIF with the Squoosh libavif build the same way; GIF (first frame) with omggif, TIFF (first
// page) with UTIF (utif2), BMP in TypeScript.
import decodeJpegWasm, { init as initJpeg } from '@jsquash/jpeg/decode'
import { decode as decodePngWasm } from '@jsquash/png/decode'
import initPng from '@jsquash/png/codec/pkg/squoosh_png.js'
import decodeWebpWasm, { init as initWebp } from '@jsquash/webp/decode'
import decodeAvifWasm, { init as initAvif } from '@jsquash/avif/decode'
import avifWasm from '@jsquash/avif/codec/dec/avif_dec.wasm'
import UTIF from 'utif2'
import jpegWasm from '@jsquash/jpeg/codec/dec/mozjpeg_dec.wasm'
// The package's own .d.ts for this file describes the instance exports; the bundler gives the module.
import * as pngWasmImport from '@jsquash/png/codec/pkg/squoosh_png_bg.wasm'
import webpWasm from '@jsquash/webp/codec/dec/webp_dec.wasm'
import { GifReader } from 'omggif'
import type { RawImage } from '../png/encode'
import { decodeBmp } from './bmp'
import type { ImageFormat } from './header'

const pngWasm = (pngWasmImport as unknown as { default: WebAssembly.Module }).default
let pngReady: Promise<unknown> | undefined
let jpegReady: Promise<void> | undefined
let webpReady: Promise<void> | undefined
let avifReady: Promise<void> | undefined
const copyOf = (bytes: Uint8Array) => bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer

function fromImageData(image: { width: number; height: number; data: Uint8ClampedArray }): RawImage {
  return { width: image.width, height: image.height, channels: 4, data: new Uint8Array(image.data.buffer, image.data.byteOffset, image.data.byteLength) }
}

export async function decodeImage(bytes: Uint8Array, format: ImageFormat): Promise<RawImage> {
  switch (format) {
    case 'jpeg':
      jpegReady ??= initJpeg(jpegWasm)
      await jpegReady
      return fromImageData(await decodeJpegWasm(copyOf(bytes)))
    case 'webp':
      webpReady ??= initWebp(webpWasm)
      await webpReady
      return fromImageData(await decodeWebpWasm(copyOf(bytes)))
    case 'png':
      // wasm-bindgen's module keeps one instance; its memory is reused from image to image.
      pngReady ??= initPng(pngWasm)
      await pngReady
      return fromImageData((await decodePngWasm(copyOf(bytes))) as { width: number; height: number; data: Uint8ClampedArray })
    case 'gif': {
      const reader = new GifReader(bytes)
      const data = new Uint8Array(reader.width * reader.height * 4)
      reader.decodeAndBlitFrameRGBA(0, data)
      return { width: reader.width, height: reader.height, channels: 4, data }
    }
    case 'avif': {
      avifReady ??= initAvif(avifWasm)
      await avifReady
      const decoded = await decodeAvifWasm(copyOf(bytes))
      if (!decoded) throw new Error('the AVIF image cannot be decoded')
      return fromImageData(decoded as { width: number; height: number; data: Uint8ClampedArray })
    }
    case 'tiff': {
      const pages = UTIF.decode(copyOf(bytes))
      const first = pages[0]
      if (!first) throw new Error('the TIFF has no image')
      UTIF.decodeImage(copyOf(bytes), first)
      return { width: first.width, height: first.height, channels: 4, data: UTIF.toRGBA8(first) }
    }
    case 'bmp':
      return decodeBmp(bytes)
  }
}
