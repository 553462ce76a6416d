// Types for the parts of omggif (MIT, no bundled types) the GIF decoding (and its tests, the writer) use.
declare module 'omggif' {
  export interface GifFrameInfo {
    readonly x: number
    readonly y: number
    readonly width: number
    readonly height: number
    readonly palette_offset: number
    readonly data_offset: number
    readonly transparent_index: number | null
    readonly interlaced: boolean
  }
  export class GifReader {
    constructor(bytes: Uint8Array)
    readonly width: number
    readonly height: number
    numFrames(): number
    frameInfo(frame: number): GifFrameInfo
    decodeAndBlitFrameRGBA(frame: number, pixels: Uint8Array): void
  }
  export class GifWriter {
    constructor(buffer: Uint8Array, width: number, height: number, options?: { palette?: number[]; loop?: number })
    addFrame(
      x: number,
      y: number,
      width: number,
      height: number,
      indices: Uint8Array,
      options?: { palette?: number[]; transparent?: number; interlaced?: boolean; delay?: number; disposal?: number },
    ): number
    end(): number
  }
}
