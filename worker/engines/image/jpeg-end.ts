// Whether a JPEG is whole. mozjpeg decodes a file cut short without an error (it warns "Premature end of JPEG
// file" and fills the missing rows with gray), so a truncated upload is found here, by walking its markers
// and scans to the end-of-image marker, before it is decoded into a half-gray picture.

const isRestart = (marker: number) => marker >= 0xd0 && marker <= 0xd7

/** True when the marker structure, from SOI, reaches EOI (0xFFD9) inside the bytes. */
export function reachesEndOfImage(bytes: Uint8Array): boolean {
  let offset = 2
  while (offset + 1 < bytes.length) {
    if (bytes[offset] !== 0xff) {
      // Stray bytes between segments: libjpeg skips them to the next marker, and so do we.
      offset++
      continue
    }
    const marker = bytes[offset + 1]!
    if (marker === 0xd9) return true
    if (marker === 0xff) {
      offset++
      continue
    }
    if (isRestart(marker) || marker === 0x01) {
      offset += 2
      continue
    }
    if (offset + 3 >= bytes.length) return false
    offset += 2 + ((bytes[offset + 2]! << 8) | bytes[offset + 3]!)
    if (marker === 0xda) {
      // Entropy-coded data runs to the next marker; 0xFF00 is a stuffed byte and restarts belong to the scan.
      while (offset + 1 < bytes.length && !(bytes[offset] === 0xff && bytes[offset + 1] !== 0 && !isRestart(bytes[offset + 1]!))) offset++
    }
  }
  return false
}
