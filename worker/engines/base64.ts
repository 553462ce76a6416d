// Base64 of bytes, in slices: String.fromCharCode(...bytes) on a whole file would pass the engine's argument limit.

export function toBase64(bytes: Uint8Array): string {
  let binary = ''
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
  return btoa(binary)
}
