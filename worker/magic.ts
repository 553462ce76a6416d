// Magic numbers: whether bytes hold an ASCII signature at an offset (false where they are too short to). A leaf: the
// files module sniffs uploads with it in the API Worker, which carries no engine; the engines read headers with it.
export function hasAscii(bytes: Uint8Array, offset: number, text: string): boolean {
  return (
    offset >= 0 &&
    offset + text.length <= bytes.length &&
    [...text].every((char, i) => bytes[offset + i] === char.charCodeAt(0))
  )
}

/** The four-character code at an offset (an ISO BMFF box type or brand, a PNG chunk type, a RIFF chunk id), as
 * Latin-1 text; shorter where the bytes end first. */
export function fourCharacterCode(bytes: Uint8Array, offset: number): string {
  return String.fromCharCode(...bytes.subarray(offset, offset + 4))
}
