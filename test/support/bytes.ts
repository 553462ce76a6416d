// Byte arrays joined end to end, for fixtures built in pieces (PDFs, hostile images), and their SHA-256.
export function concatBytes(...parts: Array<Uint8Array | readonly number[]>): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0))
  let at = 0
  for (const part of parts) {
    out.set(part, at)
    at += part.length
  }
  return out
}

/** The SHA-256 of the bytes (or of the text as UTF-8), in hex: a file record's `hash`, an API key's stored hash. */
export async function sha256Hex(data: Uint8Array | string): Promise<string> {
  return new Uint8Array(
    await crypto.subtle.digest('SHA-256', typeof data === 'string' ? new TextEncoder().encode(data) : data),
  ).toHex()
}
