// What libjpeg-turbo's heap holds for one decode, from the frame header, so that a JPEG whose decode would not fit an
// isolate's 128 MB is refused before anything is allocated. A progressive JPEG (or a baseline one whose components
// come in separate scans) keeps every component's DCT coefficients for the whole frame until its last scan: 2 bytes
// a coefficient, 64 a block, whatever the output's scale (libjpeg's jdcoefct.c, whole_image buffers). The output's
// pixels, the file's copy in the heap and these coefficients are the decode's memory.

/**
 * The most a decode may hold in libjpeg-turbo's heap: the rest of 128 MB is the file in JS, the PNG or
 * preview made and the runtime.
 */
export const JPEG_HEAP_MAX_BYTES = 80 * 2 ** 20

export interface JpegFrame {
  readonly width: number
  readonly height: number
  /** Each component's sampling factors. */
  readonly components: readonly { readonly h: number; readonly v: number }[]
  /**
   * True when the decoder buffers the whole frame's coefficients (progressive, or a first scan
   * without every component).
   */
  readonly isBuffered: boolean
}

/** The frame's SOF and its first SOS, or undefined when the markers before them cannot be walked. */
export function readJpegFrame(bytes: Uint8Array): JpegFrame | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let frame: Omit<JpegFrame, 'isBuffered'> | undefined
  let isProgressive = false
  for (let at = 2; at + 4 <= bytes.length; ) {
    if (bytes[at] !== 0xff) return undefined
    const marker = bytes[at + 1]!
    if (marker === 0xff) {
      at++
      continue
    }
    const length = view.getUint16(at + 2)
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      if (at + 10 > bytes.length) return undefined
      const count = bytes[at + 9]!
      if (at + 10 + count * 3 > bytes.length) return undefined
      const components = Array.from({ length: count }, (_, i) => ({
        h: bytes[at + 11 + i * 3]! >> 4,
        v: bytes[at + 11 + i * 3]! & 15,
      }))
      frame = { height: view.getUint16(at + 5), width: view.getUint16(at + 7), components }
      // SOF2, SOF6, SOF10, SOF14: progressive.
      isProgressive = (marker & 3) === 2
    }
    if (marker === 0xda) {
      if (!frame || at + 5 > bytes.length) return undefined
      return { ...frame, isBuffered: isProgressive || bytes[at + 4]! < frame.components.length }
    }
    at += 2 + length
  }
  return undefined
}

/** Bytes of the whole frame's coefficient buffers (0 when the decoder streams them). */
export function coefficientBytes(frame: JpegFrame): number {
  if (!frame.isBuffered) return 0
  const maxH = Math.max(1, ...frame.components.map((c) => c.h))
  const maxV = Math.max(1, ...frame.components.map((c) => c.v))
  // Blocks of each component, padded to a whole MCU (maxH × maxV blocks of the largest component).
  const mcusWide = Math.ceil(frame.width / (8 * maxH))
  const mcusHigh = Math.ceil(frame.height / (8 * maxV))
  return frame.components.reduce(
    (sum, c) => sum + mcusWide * Math.max(1, c.h) * mcusHigh * Math.max(1, c.v) * 64 * 2,
    0,
  )
}

/** The decode's heap: the file's copy, the coefficients and the output's pixels. */
export function jpegHeapBytes(
  frame: JpegFrame,
  fileBytes: number,
  output: { width: number; height: number; channels: number },
): number {
  return fileBytes + coefficientBytes(frame) + output.width * output.height * output.channels
}
