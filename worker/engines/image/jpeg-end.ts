// Whether a JPEG is whole, and how many scans it holds. mozjpeg decodes a file cut short without an error (it
// warns "Premature end of JPEG file" and fills the missing rows with gray), so a truncated upload is found here, by
// walking its markers and scans to the end-of-image marker, before it is decoded into a half-gray picture. Each
// scan of a progressive JPEG is a pass of libjpeg-turbo over the whole image, and nothing in the format or in our
// build (libjpeg-turbo 2.0: no TJPARAM_SCANLIMIT, no djpeg -maxscans) bounds their count (docs/hostile-inputs.md:
// jpeg-scans.jpg). The walk counts them first.

const isRestart = (marker: number) => marker >= 0xd0 && marker <= 0xd7

/** Scans (SOS segments) a JPEG may hold to be decoded: ten times the 10 of libjpeg's own progressive script. */
export const MAX_JPEG_SCANS = 100

export interface JpegStructure {
  /** The marker structure, from SOI, reaches EOI (0xFFD9) inside the bytes. */
  readonly isWhole: boolean
  /** Start-of-scan segments before EOI (or the end of the bytes). */
  readonly scans: number
}

/** Walks the markers once, linear in the bytes: each scan's entropy-coded data is skipped to the next marker. */
export function readJpegStructure(bytes: Uint8Array): JpegStructure {
  let offset = 2
  let scans = 0
  while (offset + 1 < bytes.length) {
    if (bytes[offset] !== 0xff) {
      // Stray bytes between segments: libjpeg skips them to the next marker, and so do we.
      offset++
      continue
    }
    const marker = bytes[offset + 1]!
    if (marker === 0xd9) return { isWhole: true, scans }
    if (marker === 0xff) {
      offset++
      continue
    }
    if (isRestart(marker) || marker === 0x01) {
      offset += 2
      continue
    }
    if (offset + 3 >= bytes.length) break
    offset += 2 + ((bytes[offset + 2]! << 8) | bytes[offset + 3]!)
    if (marker === 0xda) {
      scans++
      // Entropy-coded data runs to the next marker; 0xFF00 is a stuffed byte and restarts belong to the scan.
      while (
        offset + 1 < bytes.length &&
        !(bytes[offset] === 0xff && bytes[offset + 1] !== 0 && !isRestart(bytes[offset + 1]!))
      )
        offset++
    }
  }
  return { isWhole: false, scans }
}

/** True when the marker structure, from SOI, reaches EOI (0xFFD9) inside the bytes. */
export function reachesEndOfImage(bytes: Uint8Array): boolean {
  return readJpegStructure(bytes).isWhole
}
