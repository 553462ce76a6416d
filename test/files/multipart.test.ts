// The streaming multipart reader (worker/files/multipart.ts) against bodies cut at every byte around the closing
// delimiter: the file part keeps its bytes, byte for byte, wherever the chunks of the body end (RFC 7578 §4.1: the
// part ends at CRLF "--" boundary, and the content may hold anything else, partial delimiters included).
import { describe, expect, it } from 'vitest'
import { readMultipartFile } from '../../worker/files/multipart'

const encoder = new TextEncoder()
const boundary = '----formdata-edgefloor-7f3a'

function body(file: Uint8Array): Uint8Array {
  const head = encoder.encode(
    `--${boundary}\r\nContent-Disposition: form-data; name="note"\r\n\r\nhello\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  )
  const tail = encoder.encode(`\r\n--${boundary}--\r\n`)
  return new Uint8Array([...head, ...file, ...tail])
}

/** The body as a stream whose chunks end at `cuts` (offsets), like a network that splits anywhere. */
function chunked(bytes: Uint8Array, cuts: number[]): ReadableStream<Uint8Array> {
  const ends = [...cuts.filter((cut) => cut > 0 && cut < bytes.length).sort((a, b) => a - b), bytes.length]
  let start = 0
  let index = 0
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const end = ends[index++]
      if (end === undefined) return controller.close()
      controller.enqueue(bytes.slice(start, end))
      start = end
    },
  })
}

async function fileOf(stream: ReadableStream<Uint8Array>) {
  const { fields, file } = await readMultipartFile(stream, `multipart/form-data; boundary=${boundary}`)
  const chunks: number[] = []
  // Each view is valid until the next read: copied out at once.
  for (let view = await file.blocks.read(); view; view = await file.blocks.read()) chunks.push(...view)
  return { fields, filename: file.filename, bytes: new Uint8Array(chunks) }
}

describe('readMultipartFile', () => {
  // Content full of near-delimiters: CRLF, "--", and the boundary less its last byte.
  const file = new Uint8Array([
    ...encoder.encode(`x\r\n--${boundary.slice(0, -1)}\r\n-\r\n--`),
    ...new Uint8Array(300).map((_, i) => i),
    ...encoder.encode(`\r\n--${boundary.slice(0, 10)}`),
  ])
  const whole = body(file)
  const fileEnd = whole.length - encoder.encode(`\r\n--${boundary}--\r\n`).length

  it('keeps the file byte for byte wherever one chunk ends, around the closing delimiter', async () => {
    for (let cut = fileEnd - 80; cut <= whole.length; cut++) {
      const read = await fileOf(chunked(whole, [cut]))
      expect(read.bytes, `cut at ${cut}`).toEqual(file)
    }
    expect((await fileOf(chunked(whole, []))).fields).toEqual({ note: 'hello' })
  })

  it('keeps the file byte for byte with chunks of 1 to 7 bytes and with tiny chunks after big ones', async () => {
    for (const size of [1, 2, 3, 7]) {
      const cuts = Array.from({ length: Math.ceil(whole.length / size) }, (_, i) => i * size)
      expect((await fileOf(chunked(whole, cuts))).bytes, `chunks of ${size}`).toEqual(file)
    }
    // A big block, then a few bytes, then the rest: the junction between a kept tail and a short chunk.
    for (let cut = fileEnd - 70; cut < fileEnd; cut += 3) {
      expect((await fileOf(chunked(whole, [cut, cut + 2, cut + 5]))).bytes, `cuts at ${cut}`).toEqual(file)
    }
  })

  it('errors (400 BAD_MULTIPART) when the file part never ends', async () => {
    const read = fileOf(chunked(whole.subarray(0, fileEnd + 3), [fileEnd - 10]))
    await expect(read).rejects.toMatchObject({ status: 400, code: 'BAD_MULTIPART' })
  })
})
