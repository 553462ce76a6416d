// JPEG decoding with libjpeg-turbo compiled to WASM (@cwasm/jpeg-turbo: libjpeg-turbo 2.0's TurboJPEG API, MIT
// wrapper, IJG/BSD code), imported statically (workerd compiles no WebAssembly from bytes). Chosen over Squoosh's
// mozjpeg build: the same pixels byte for byte (both are libjpeg-turbo's islow IDCT and fancy upsampling; checked on
// 4:4:4, 4:2:2, 4:2:0 and gray files), less CPU (docs/benchmarks.md, "Engine constants"), and RGB decoded straight
// into its heap, where the PNG encoder reads the rows: no RGBA copy of the picture outside it.
// A fresh instance per decode, dropped with its pixels: a WASM memory never shrinks, so one kept per isolate would
// stay at the largest picture's heap for every later step. A preview asks for the size it draws: libjpeg-turbo
// scales by DCT (1/8 to 8/8), so a 12 MP photo is decoded at 1/8 for a thumbnail and the full-size pixels never
// exist. The heap a decode needs is estimated from the frame first (jpeg-memory.ts), and a JPEG past
// JPEG_HEAP_MAX_BYTES is refused before anything is allocated.
import jpegTurboWasm from '@cwasm/jpeg-turbo/jpeg-turbo.wasm'
import type { PixelRows } from '../png/encode'
import { JPEG_HEAP_MAX_BYTES, jpegHeapBytes, readJpegFrame } from './jpeg-memory'
import { ImageTooLargeError } from './limits'

interface TurboJpeg {
  memory: WebAssembly.Memory
  malloc(bytes: number): number
  free(pointer: number): void
  tjInitDecompress(): number
  tjDestroy(handle: number): number
  tjDecompressHeader3(
    handle: number,
    source: number,
    size: number,
    width: number,
    height: number,
    subsampling: number,
    colorspace: number,
  ): number
  tjDecompress2(
    handle: number,
    source: number,
    size: number,
    target: number,
    width: number,
    pitch: number,
    height: number,
    pixelFormat: number,
    flags: number,
  ): number
}

// TurboJPEG's constants (turbojpeg.h).
const TJPF_RGB = 0
const TJPF_GRAY = 6
const TJPF_RGBA = 7
const TJCS_GRAY = 2

/** libjpeg's error exit reached longjmp: the decode is abandoned, and with it the instance (see below). */
class JpegAbort extends Error {
  override readonly name = 'JpegAbort'
}

// libjpeg reports fatal errors by longjmp to TurboJPEG's setjmp. The build imports both: setjmp answers 0 (the
// first return) and longjmp throws, which unwinds the WASM stack without restoring its stack pointer or freeing
// what the decode allocated, so an instance that threw is dropped and the next decode gets a fresh one.
// The WASI calls are those of the libc's stdio, which TurboJPEG's decoder never reaches.
const unreachable = (name: string) => () => {
  throw new Error(`${name} is not available to the JPEG decoder`)
}
const imports = {
  env: {
    setjmp: () => 0,
    longjmp: () => {
      throw new JpegAbort('the JPEG decoder stopped on an error')
    },
  },
  wasi_snapshot_preview1: {
    environ_sizes_get: () => 0,
    environ_get: unreachable('environ_get'),
    proc_exit: unreachable('proc_exit'),
    fd_close: unreachable('fd_close'),
    fd_seek: unreachable('fd_seek'),
    fd_write: unreachable('fd_write'),
  },
}

/** Scaled sizes TurboJPEG 2.0 decodes to: k/8 of each side, rounded up (TJSCALED). */
const SCALE_EIGHTHS = [1, 2, 3, 4, 5, 6, 7, 8]

/** The smallest DCT scale whose output is at least `atLeast` (the whole size when none is asked). */
export function jpegScaledSize(
  width: number,
  height: number,
  atLeast?: { width: number; height: number },
): { width: number; height: number } {
  if (!atLeast) return { width, height }
  for (const eighths of SCALE_EIGHTHS) {
    const scaled = { width: Math.ceil((width * eighths) / 8), height: Math.ceil((height * eighths) / 8) }
    if (scaled.width >= Math.min(width, atLeast.width) && scaled.height >= Math.min(height, atLeast.height))
      return scaled
  }
  return { width, height }
}

/** Decoded pixels in the decoder's heap: read them through `rows` (or `copy`), then `release` them. */
export interface JpegPixels {
  readonly width: number
  readonly height: number
  /** 1 for a grayscale JPEG decoded as 'rgb', else 3 ('rgb') or 4 ('rgba', alpha 255). */
  readonly channels: 1 | 3 | 4
  /** The rows, each a fresh view of the heap (a view taken before another decode grew the memory would be empty). */
  readonly rows: PixelRows
  /** All the pixels, copied out of the heap. */
  copy(): Uint8Array
  /** Frees the pixels in the heap; the rows must not be read after. */
  release(): void
}

/**
 * Decodes a whole JPEG into a fresh decoder's heap. 'rgb' gives 3 channels (1 for a grayscale file), 'rgba' always
 * 4. With `atLeast`, at the smallest DCT scale at least that large (a preview's size), else at full size. The caller
 * has checked the frame's size against the image limits (decodeImage, decodeJpegRows); the heap the decode needs is
 * checked here (ImageTooLargeError). Warnings (corrupt data libjpeg decodes past) keep the pixels, as mozjpeg's
 * decoder does; errors throw.
 */
export function decodeJpeg(
  bytes: Uint8Array,
  format: 'rgb' | 'rgba',
  atLeast?: { width: number; height: number },
): JpegPixels {
  const frame = readJpegFrame(bytes)
  if (frame) {
    const output = {
      ...jpegScaledSize(frame.width, frame.height, atLeast),
      channels: format === 'rgba' ? 4 : frame.components.length === 1 ? 1 : 3,
    }
    const heapBytes = jpegHeapBytes(frame, bytes.byteLength, output)
    if (heapBytes > JPEG_HEAP_MAX_BYTES) {
      const how = frame.isBuffered
        ? `a progressive JPEG of ${frame.width}×${frame.height} with ${frame.components.length} full components`
        : `a JPEG of ${frame.width}×${frame.height}`
      throw new ImageTooLargeError(
        `${how} needs ${Math.ceil(heapBytes / 2 ** 20)} MiB to decode${atLeast ? ' at this size' : ''}; the limit is ${JPEG_HEAP_MAX_BYTES / 2 ** 20} MiB (a Worker has 128 MB)`,
        'IMAGE_MAX_PIXELS',
      )
    }
  }
  // Dropped with the pixels: nothing keeps the instance once `release` is called and the rows are read.
  const jpeg = new WebAssembly.Instance(jpegTurboWasm, imports).exports as unknown as TurboJpeg
  let source = 0
  let header = 0
  let handle = 0
  let target = 0
  let failed = false
  try {
    source = jpeg.malloc(bytes.byteLength)
    header = jpeg.malloc(16)
    handle = jpeg.tjInitDecompress()
    if (!source || !header || !handle) throw new Error('the JPEG decoder is out of memory')
    new Uint8Array(jpeg.memory.buffer, source, bytes.byteLength).set(bytes)
    if (jpeg.tjDecompressHeader3(handle, source, bytes.byteLength, header, header + 4, header + 8, header + 12) !== 0) {
      throw new Error('the JPEG header cannot be read')
    }
    const [fullWidth, fullHeight, , colorspace] = new Int32Array(jpeg.memory.buffer, header, 4) as unknown as [
      number,
      number,
      number,
      number,
    ]
    // TurboJPEG picks the largest scale that fits the size asked: the one computed here.
    const { width, height } = jpegScaledSize(fullWidth, fullHeight, atLeast)
    const channels = format === 'rgba' ? 4 : colorspace === TJCS_GRAY ? 1 : 3
    const pixelFormat = channels === 4 ? TJPF_RGBA : channels === 1 ? TJPF_GRAY : TJPF_RGB
    const stride = width * channels
    target = jpeg.malloc(stride * height)
    if (!target) throw new Error('the JPEG decoder is out of memory')
    // -1 without a throw is mostly a warning (an error reaches longjmp) and the pixels are there; but TurboJPEG
    // also answers -1 without writing them when its own small allocation fails: the rows start zeroed, so such
    // a failure gives black, never the pixels of an image decoded before in this heap (another user's).
    new Uint8Array(jpeg.memory.buffer, target, stride * height).fill(0)
    jpeg.tjDecompress2(handle, source, bytes.byteLength, target, width, stride, height, pixelFormat, 0)
    const at = target
    // The closures hold the instance through this variable alone, emptied on release: optimized code that inlined
    // one of them may keep it, and its scope, past the step (PixelRows, engines/png/encode.ts).
    let decoder: TurboJpeg | undefined = jpeg
    const heap = () => {
      if (!decoder) throw new Error('the JPEG pixels were released')
      return decoder.memory.buffer
    }
    return {
      width,
      height,
      channels,
      rows: { rows: height, row: (r) => new Uint8Array(heap(), at + r * stride, stride) },
      copy: () => new Uint8Array(heap(), at, stride * height).slice(),
      release() {
        decoder?.free(at)
        decoder = undefined
      },
    }
  } catch (error) {
    // Whatever the decoder holds is lost with the instance.
    failed = true
    throw error
  } finally {
    if (!failed) {
      if (handle) jpeg.tjDestroy(handle)
      if (header) jpeg.free(header)
      if (source) jpeg.free(source)
    }
  }
}
