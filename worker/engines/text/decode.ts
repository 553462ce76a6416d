// Text files to a string: UTF-8 (with or without BOM) and UTF-16 LE/BE with a BOM; bytes that are not valid
// text become U+FFFD instead of failing the conversion.

export function decodeText(bytes: Uint8Array): string {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder('utf-16le').decode(bytes.subarray(2))
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder('utf-16be').decode(bytes.subarray(2))
  // The decoder drops a UTF-8 BOM by itself.
  return new TextDecoder('utf-8').decode(bytes)
}
