// Byte arrays joined end to end, for fixtures built in pieces (PDFs, hostile images).
export function concatBytes(...parts: Array<Uint8Array | readonly number[]>): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0))
  let at = 0
  for (const part of parts) {
    out.set(part, at)
    at += part.length
  }
  return out
}
