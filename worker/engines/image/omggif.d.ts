// Types for the parts of omggif (MIT, no bundled types) the GIF decoding uses.
declare module 'omggif' {
  export class GifReader {
    constructor(bytes: Uint8Array)
    readonly width: number
    readonly height: number
    numFrames(): number
    decodeAndBlitFrameRGBA(frame: number, pixels: Uint8Array): void
  }
}
