// Text files to strings: UTF-8 (with or without BOM) and UTF-16 LE/BE with a BOM; bytes that are not valid
// text become U+FFFD instead of failing the conversion.

/** The decoder the first bytes call for, and how many of them (a UTF-16 BOM) it should not see. */
function decoderFor(head: Uint8Array): { decoder: TextDecoder; skip: number } {
  if (head[0] === 0xff && head[1] === 0xfe) return { decoder: new TextDecoder('utf-16le'), skip: 2 }
  if (head[0] === 0xfe && head[1] === 0xff) return { decoder: new TextDecoder('utf-16be'), skip: 2 }
  // The decoder drops a UTF-8 BOM by itself.
  return { decoder: new TextDecoder('utf-8'), skip: 0 }
}

export function decodeText(bytes: Uint8Array): string {
  const { decoder, skip } = decoderFor(bytes)
  return decoder.decode(bytes.subarray(skip))
}

/** Some of a text, and how many bytes of the file were read to decode it. */
export interface TextPiece {
  readonly text: string
  readonly bytes: number
}

/**
 * A stream's text in pieces, each decoded from at most `pieceBytes` bytes. A character split between two pieces
 * comes whole in the second. A caller can give the event loop a turn between pieces and never hold the whole text.
 * Stops reading when the caller stops asking.
 */
export async function* decodeTextPieces(
  stream: ReadableStream<Uint8Array>,
  pieceBytes: number,
): AsyncGenerator<TextPiece> {
  const reader = stream.getReader()
  let isDone = false
  try {
    // Two bytes tell the encoding: a first chunk of one byte waits for the next.
    let head: Uint8Array = new Uint8Array(0)
    while (head.length < 2) {
      const { done, value } = await reader.read()
      if (done) break
      if (head.length === 0) {
        head = value
        continue
      }
      const joined = new Uint8Array(head.length + value.byteLength)
      joined.set(head)
      joined.set(value, head.length)
      head = joined
    }
    const { decoder, skip } = decoderFor(head)
    let chunk: Uint8Array | undefined = head.subarray(skip)
    while (chunk) {
      for (let start = 0; start < chunk.byteLength; start += pieceBytes) {
        const bytes = chunk.subarray(start, start + pieceBytes)
        yield { text: decoder.decode(bytes, { stream: true }), bytes: bytes.byteLength }
      }
      const next = await reader.read()
      chunk = next.done ? undefined : next.value
    }
    isDone = true
    const rest = decoder.decode()
    if (rest) yield { text: rest, bytes: 0 }
  } finally {
    if (!isDone) await reader.cancel().catch(() => {})
    reader.releaseLock()
  }
}
