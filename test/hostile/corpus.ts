// The hostile-input corpus, generated at test time (nothing large is committed): one file per case of issue 17
// and the classic attacks on parsers (decompression bombs, cycles, deep nesting, lying headers, truncation,
// huge dimensions in tiny files), for every converter. Pure: runs in workerd (tests) and Node (bench/hostile.ts).
import { buildPdf } from '../support/pdf.ts'
import { concatBytes } from '../support/bytes.ts'
import type { EncryptionKind } from '../support/qpdf.ts'

const encoder = new TextEncoder()
const text = (value: string) => encoder.encode(value)

export interface HostileCase {
  readonly name: string // the file name uploaded, its extension chooses the converter
  readonly why: string
  /** What must happen: refused before a job (4xx, no job), a failed job, a bounded success (done), or either of the last two. */
  readonly expect: 'refused' | 'failed' | 'done' | 'settled'
  /** The reason given, when refused or failed. */
  readonly reason?: RegExp
  /**
   * The bytes are encrypted by qpdf with an empty user password before they are used (Node only: the tests get
   * them from test/setup/encrypted-pdfs.ts, the bench runs qpdf).
   */
  readonly encryption?: EncryptionKind
  bytes(): Promise<Uint8Array>
}

const concat = concatBytes

const u16le = (value: number) => [value & 0xff, (value >> 8) & 0xff]
const u16be = (value: number) => [(value >> 8) & 0xff, value & 0xff]
const u32be = (value: number) => [(value >>> 24) & 0xff, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff]
const u32le = (value: number) => [value & 0xff, (value >>> 8) & 0xff, (value >>> 16) & 0xff, (value >>> 24) & 0xff]
const u24le = (value: number) => [value & 0xff, (value >> 8) & 0xff, (value >> 16) & 0xff]

export async function deflate(bytes: Uint8Array, format: 'deflate' | 'deflate-raw' = 'deflate'): Promise<Uint8Array> {
  return new Uint8Array(
    await new Response(new Blob([bytes]).stream().pipeThrough(new CompressionStream(format))).arrayBuffer(),
  )
}

/** The issue's 35-byte GIF: a 10×10 logical screen whose first frame is 60000×60000. */
export function gifFrameFlood(): Uint8Array {
  return concat(
    text('GIF89a'),
    u16le(10),
    u16le(10),
    [0, 0, 0],
    [0x2c],
    u16le(0),
    u16le(0),
    u16le(60000),
    u16le(60000),
    [0],
    [2, 2, 0x4c, 0x01, 0],
    [0x3b],
  )
}

function pngChunk(type: string, data: Uint8Array): Uint8Array {
  return concat(u32be(data.length), text(type), data, [0, 0, 0, 0]) // CRC unchecked before the size check
}

export function pngWithSize(width: number, height: number): Uint8Array {
  return concat(
    [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a],
    pngChunk('IHDR', new Uint8Array([...u32be(width), ...u32be(height), 8, 6, 0, 0, 0])),
    pngChunk('IEND', new Uint8Array()),
  )
}

/**
 * A 1200 × 1000 RGBA PNG (4.8 MB of rows, every row the same) whose ~10 KB IDAT stream comes in one-byte chunks:
 * an inflater fed a chunk at a time, with a turn of the event loop after each, took 12,616 turns (45 s) for it.
 */
export async function pngIdatCrumbs(): Promise<Uint8Array> {
  const row = Uint8Array.from({ length: 1 + 1200 * 4 }, (_, i) => (i === 0 ? 0 : (i * 2654435761) >>> 24)) // filter 0
  const rows = new Uint8Array(row.length * 1000)
  for (let r = 0; r < 1000; r++) rows.set(row, r * row.length)
  const stream = await deflate(rows)
  const crumbs = Array.from(stream, (byte) => pngChunk('IDAT', Uint8Array.of(byte)))
  const ihdr = pngChunk('IHDR', new Uint8Array([...u32be(1200), ...u32be(1000), 8, 6, 0, 0, 0]))
  return concat([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], ihdr, ...crumbs, pngChunk('IEND', new Uint8Array()))
}

/** SOI, a baseline SOF0 of the given size, EOI: a JPEG header that claims a size and holds nothing. */
export function jpegWithSize(width: number, height: number): Uint8Array {
  return concat(
    [0xff, 0xd8],
    [0xff, 0xc0],
    u16be(17),
    [8],
    u16be(height),
    u16be(width),
    [3, 1, 0x11, 0, 2, 0x11, 0, 3, 0x11, 0],
    [0xff, 0xd9],
  )
}

/** Bits written MSB first into entropy-coded JPEG data: 0xFF stuffed with 0x00, the last byte padded with ones (T.81 F.1.2.3). */
function jpegBits(fields: ReadonlyArray<readonly [value: number, bits: number]>): Uint8Array {
  const out: number[] = []
  let pending = 0
  let count = 0
  const put = (bit: number) => {
    pending = (pending << 1) | bit
    if (++count < 8) return
    out.push(pending)
    if (pending === 0xff) out.push(0)
    pending = 0
    count = 0
  }
  for (const [value, bits] of fields) for (let i = bits - 1; i >= 0; i--) put((value >> i) & 1)
  while (count > 0) put(1)
  return new Uint8Array(out)
}

/**
 * A progressive gray JPEG (T.81 Annex G) of 8456 × 1240 (10.5 MP, under IMAGE_MAX_PIXELS), all gray, whose AC
 * refinement scan is repeated `refinements` times: each scan is ten bytes (five end-of-band runs of 32767 blocks)
 * and costs the decoder a pass over every coefficient of 163,835 blocks. Issue 29's case: 1000 of them.
 */
export function jpegRepeatedScans(refinements = 1000): Uint8Array {
  const blocks = (8456 / 8) * (1240 / 8)
  const segment = (marker: number, ...body: Array<readonly number[]>) =>
    concat([0xff, marker], u16be(2 + body.reduce((sum, part) => sum + part.length, 0)), ...body)
  // Huffman tables with one code each, '0': DC difference category 0; AC EOB14 (0xE0), a run of 2^14 + 14 bits.
  const dht = segment(
    0xc4,
    [0x00],
    [1, ...new Array(15).fill(0)],
    [0x00],
    [0x10],
    [1, ...new Array(15).fill(0)],
    [0xe0],
  )
  const scan = (ss: number, se: number, ah: number, al: number) => segment(0xda, [1, 1, 0x00], [ss, se, (ah << 4) | al])
  const dc = jpegBits(Array.from({ length: blocks }, () => [0, 1] as const))
  const runs = jpegBits(Array.from({ length: blocks / 32767 }, () => [[0, 1] as const, [16383, 14] as const]).flat())
  return concat(
    [0xff, 0xd8],
    segment(0xdb, [0x00], new Array(64).fill(1)),
    segment(0xc2, [8], u16be(1240), u16be(8456), [1, 1, 0x11, 0]),
    dht,
    scan(0, 0, 0, 0),
    dc,
    scan(1, 63, 0, 1),
    runs,
    ...Array.from({ length: refinements }, () => concat(scan(1, 63, 1, 0), runs)),
    [0xff, 0xd9],
  )
}

/** A WebP whose VP8X canvas is 16384 × 16384 around a 1 × 1 lossless frame. */
export function webpCanvasFlood(): Uint8Array {
  const vp8x = concat(text('VP8X'), u32le(10), [0, 0, 0, 0], u24le(16383), u24le(16383))
  const vp8l = concat(text('VP8L'), u32le(5), [0x2f, 0, 0, 0, 0], [0])
  const body = concat(text('WEBP'), vp8x, vp8l)
  return concat(text('RIFF'), u32le(body.length), body)
}

/** A lossless WebP frame that claims 16384 × 16384 in a 30-byte file. */
export function webpFrameFlood(): Uint8Array {
  const vp8l = concat(text('VP8L'), u32le(5), [0x2f], u32le(16383 | (16383 << 14)))
  const body = concat(text('WEBP'), vp8l, [0])
  return concat(text('RIFF'), u32le(body.length), body)
}

function box(type: string, ...content: Array<Uint8Array | readonly number[]>): Uint8Array {
  const body = concat(...content)
  return concat(u32be(8 + body.length), text(type), body)
}

/** AVIF whose first ispe (a thumbnail's) is 10×10 while the primary item's (pitm → ipma) is 60000×60000. */
export function avifPrimaryFlood(): Uint8Array {
  const ispe = (width: number, height: number) => box('ispe', [0, 0, 0, 0], u32be(width), u32be(height))
  const ipco = box('ipco', ispe(10, 10), ispe(60000, 60000))
  // version 0, flags 0; two entries: item 2 (thumbnail) → property 1, item 1 (primary) → property 2.
  const ipma = box('ipma', [0, 0, 0, 0], u32be(2), u16be(2), [1, 0x81], u16be(1), [1, 0x82])
  const meta = box(
    'meta',
    [0, 0, 0, 0],
    box('hdlr', [0, 0, 0, 0], [0, 0, 0, 0], text('pict'), new Uint8Array(13)),
    box('pitm', [0, 0, 0, 0], u16be(1)),
    box('iprp', ipco, ipma),
  )
  return concat(box('ftyp', text('avif'), [0, 0, 0, 0], text('mif1avif')), meta)
}

/** An AV1 sequence header OBU (AV1 spec §5.5, reduced still-picture form) whose frames may be up to width × height. */
function av1SequenceHeaderObu(width: number, height: number): Uint8Array {
  const fields: Array<[number, number]> = [
    [0, 3],
    [1, 1],
    [1, 1],
    [31, 5],
    [15, 4],
    [15, 4],
    [width - 1, 16],
    [height - 1, 16],
  ]
  const bits = fields.flatMap(([value, count]) =>
    Array.from({ length: count }, (_, i) => (value >> (count - 1 - i)) & 1),
  )
  const payload = Array.from({ length: Math.ceil(bits.length / 8) }, (_, byte) =>
    bits.slice(byte * 8, byte * 8 + 8).reduce((sum, bit, i) => sum | (bit << (7 - i)), 0),
  )
  return concat([(1 << 3) | 0x02, payload.length], payload) // OBU_SEQUENCE_HEADER with obu_size
}

/**
 * A still AVIF whose primary item (av01, its data in mdat through iloc) has the ispe `declared` while the AV1
 * sequence header in its data allows frames of `coded`; `av1c` puts another sequence header in its av1C property.
 */
export function avifCodedFlood(declared: number, coded: number, av1c?: number): Uint8Array {
  const ispe = box('ispe', [0, 0, 0, 0], u32be(declared), u32be(declared))
  const config = box('av1C', [0x81, 0, 0, 0], av1c ? av1SequenceHeaderObu(av1c, av1c) : [])
  const data = av1SequenceHeaderObu(coded, coded)
  const meta = (offset: number) =>
    box(
      'meta',
      [0, 0, 0, 0],
      box('hdlr', [0, 0, 0, 0], [0, 0, 0, 0], text('pict'), new Uint8Array(13)),
      box('pitm', [0, 0, 0, 0], u16be(1)),
      box('iinf', [0, 0, 0, 0], u16be(1), box('infe', [2, 0, 0, 0], u16be(1), u16be(0), text('av01'), [0])),
      // version 0, offset and length 4 bytes, no base offset; item 1: one extent.
      box(
        'iloc',
        [0, 0, 0, 0],
        [0x44, 0x00],
        u16be(1),
        u16be(1),
        u16be(0),
        u16be(1),
        u32be(offset),
        u32be(data.length),
      ),
      box('iprp', box('ipco', ispe, config), box('ipma', [0, 0, 0, 0], u32be(1), u16be(1), [2, 0x81, 0x82])),
    )
  const ftyp = box('ftyp', text('avif'), [0, 0, 0, 0], text('mif1avif'))
  const offset = ftyp.length + meta(0).length + 8 // the data begins after mdat's header
  return concat(ftyp, meta(offset), box('mdat', data))
}

/** AVIF with no primary item at all. */
export function avifWithoutPrimary(): Uint8Array {
  return concat(
    box('ftyp', text('avif'), [0, 0, 0, 0], text('mif1avif')),
    box('meta', [0, 0, 0, 0], box('hdlr', [0, 0, 0, 0], [0, 0, 0, 0], text('pict'), new Uint8Array(13))),
  )
}

interface TiffEntry {
  readonly tag: number
  readonly type: number
  readonly count: number
  readonly value: number
}

/** A little-endian TIFF: header, one IFD at offset 8 with the entries, `next` as next-IFD offset, then `data`. */
function tiff(entries: readonly TiffEntry[], next = 0, data: Uint8Array = new Uint8Array()): Uint8Array {
  const ifd = concat(
    u16le(entries.length),
    ...entries.map((e) =>
      concat(
        u16le(e.tag),
        u16le(e.type),
        u32le(e.count),
        e.type === 3 && e.count === 1 ? [...u16le(e.value), 0, 0] : u32le(e.value),
      ),
    ),
    u32le(next),
  )
  return concat(text('II'), [42, 0], u32le(8), ifd, data)
}

const tiffDataOffset = (entries: number) => 8 + 2 + entries * 12 + 4

/** A gray 8-bit TIFF of the given size whose one strip is `strip`, compressed as `compression` says. */
function grayTiff(width: number, height: number, compression: number, strip: Uint8Array, next = 0): Uint8Array {
  const entries = 8
  return tiff(
    [
      { tag: 256, type: 4, count: 1, value: width },
      { tag: 257, type: 4, count: 1, value: height },
      { tag: 258, type: 3, count: 1, value: 8 },
      { tag: 259, type: 3, count: 1, value: compression },
      { tag: 262, type: 3, count: 1, value: 1 },
      { tag: 273, type: 4, count: 1, value: tiffDataOffset(entries) },
      { tag: 278, type: 4, count: 1, value: height },
      { tag: 279, type: 4, count: 1, value: strip.length },
    ],
    next,
    strip,
  )
}

/** Zeros compressed as they are made, a MiB at a time (workerd refuses blobs over 128 MiB). */
export async function deflatedZeros(mebibytes: number): Promise<Uint8Array> {
  const compressor = new CompressionStream('deflate')
  const writer = compressor.writable.getWriter()
  const compressed = new Response(compressor.readable).arrayBuffer()
  const zeros = new Uint8Array(2 ** 20)
  for (let i = 0; i < mebibytes; i++) await writer.write(zeros)
  await writer.close()
  return new Uint8Array(await compressed)
}

/** A 1000 × 1000 TIFF whose Deflate strip inflates to 256 MiB (it may hold 1 MB). */
export async function tiffDeflateBomb(): Promise<Uint8Array> {
  return grayTiff(1000, 1000, 8, await deflatedZeros(256))
}

/** A TIFF whose IFD names itself as the next one: UTIF.decode would loop forever (only the first IFD is read). */
export function tiffIfdCycle(): Uint8Array {
  return grayTiff(4, 4, 1, new Uint8Array(16), 8)
}

/** A TIFF whose SubIFDs tag points back at its own IFD: UTIF would recurse until the stack ran out. */
export function tiffSubIfdCycle(): Uint8Array {
  return tiff([
    { tag: 256, type: 4, count: 1, value: 4 },
    { tag: 257, type: 4, count: 1, value: 4 },
    { tag: 330, type: 4, count: 1, value: 8 },
  ])
}

/** A 12-byte tag entry that claims 4 billion values. */
export function tiffCountBomb(): Uint8Array {
  return tiff([
    { tag: 256, type: 4, count: 1, value: 4 },
    { tag: 257, type: 4, count: 1, value: 4 },
    { tag: 273, type: 4, count: 0xfffffff0, value: 8 },
  ])
}

/**
 * A 1 × 20000 gray PackBits TIFF of one-row strips, every strip naming the same megabyte of PackBits no-op bytes
 * (0x80, which decode to nothing): a decoder that reads each strip's whole byte count passes over the file 20,000 times.
 */
export function tiffSharedStrips(height = 20_000, dataBytes = 1_000_000): Uint8Array {
  const entries = 8
  const arrays = tiffDataOffset(entries)
  const dataStart = arrays + 8 * height
  const values = (value: number) => concat(...Array.from({ length: height }, () => u32le(value)))
  return tiff(
    [
      { tag: 256, type: 4, count: 1, value: 1 },
      { tag: 257, type: 4, count: 1, value: height },
      { tag: 258, type: 3, count: 1, value: 8 },
      { tag: 259, type: 3, count: 1, value: 32773 },
      { tag: 262, type: 3, count: 1, value: 1 },
      { tag: 273, type: 4, count: height, value: arrays },
      { tag: 278, type: 4, count: 1, value: 1 },
      { tag: 279, type: 4, count: height, value: arrays + 4 * height },
    ],
    0,
    concat(values(dataStart), values(dataBytes), new Uint8Array(dataBytes).fill(0x80)),
  )
}

export function tiffWithSize(width: number, height: number): Uint8Array {
  return grayTiff(width, height, 1, new Uint8Array(16))
}

export function bmpWithSize(width: number, height: number): Uint8Array {
  return concat(
    text('BM'),
    u32le(54),
    [0, 0, 0, 0],
    u32le(54),
    u32le(40),
    u32le(width),
    u32le(height),
    u16le(1),
    u16le(24),
    u32le(0),
    new Uint8Array(20),
  )
}

/** A PDF built by hand from object bodies (1 is the catalog), with a correct xref; `trailer` adds entries. */
function rawPdf(objects: readonly (string | Uint8Array)[], trailer = ''): Uint8Array {
  const chunks: Uint8Array[] = [text('%PDF-1.7\n')]
  let offset = chunks[0]!.length
  const offsets: number[] = []
  objects.forEach((body, index) => {
    offsets.push(offset)
    for (const part of [
      text(`${index + 1} 0 obj\n`),
      typeof body === 'string' ? text(body) : body,
      text('\nendobj\n'),
    ]) {
      chunks.push(part)
      offset += part.length
    }
  })
  const xref = `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`
  chunks.push(
    text(`${xref}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R${trailer} >>\nstartxref\n${offset}\n%%EOF\n`),
  )
  return concat(...chunks)
}

/** A page tree whose Kids holds itself. */
export function pdfCyclicPages(): Uint8Array {
  return rawPdf([
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [2 0 R 3 0 R] /Count 2 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 100 100] >>',
  ])
}

/** A page tree that claims 1,000,000,000 pages and holds one. */
export function pdfLyingCount(): Uint8Array {
  return rawPdf([
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1000000000 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 100 100] >>',
  ])
}

/** A content stream of 100,000 nested arrays, and a page dictionary nested as deep. */
export function pdfDeepNesting(): Uint8Array {
  const depth = 100_000
  const content = `${'['.repeat(depth)}${']'.repeat(depth)} pop`
  return rawPdf([
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 100 100] /Contents 4 0 R /Deep ${'<< /A '.repeat(depth / 10)}1${' >>'.repeat(depth / 10)} >>`,
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
  ])
}

/** A 64 MiB Flate content stream (of spaces) in a 64 KB file. */
export async function pdfFlateBomb(): Promise<Uint8Array> {
  const stream = await deflate(new Uint8Array(64 * 2 ** 20).fill(0x20)) // under workerd's 128 MiB blob limit
  return rawPdf([
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 100 100] /Contents 4 0 R >>',
    concat(text(`<< /Length ${stream.length} /Filter /FlateDecode >>\nstream\n`), stream, text('\nendstream')),
  ])
}

/** The catalog, a one-page tree and a page whose content is object 4: the start of every stream case below. */
const ONE_PAGE = [
  '<< /Type /Catalog /Pages 2 0 R >>',
  '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
  '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 100 100] /Contents 4 0 R >>',
] as const

const streamObject = (dictionary: string, data: Uint8Array) =>
  concat(text(`<< /Length ${data.length} ${dictionary} >>\nstream\n`), data, text('\nendstream'))

/** The 64 MiB Flate bomb written in hexadecimal under /ASCIIHexDecode: a zlib header no longer shows. */
export async function pdfHexFlateBomb(): Promise<Uint8Array> {
  const stream = await deflate(new Uint8Array(64 * 2 ** 20).fill(0x20))
  const hex = text(`${Array.from(stream, (byte) => byte.toString(16).padStart(2, '0')).join('')}>`)
  return rawPdf([...ONE_PAGE, streamObject('/Filter [/ASCIIHexDecode /FlateDecode]', hex)])
}

/** The Flate bomb whose /Length is an indirect object that says 10 (PDFium searches for endstream instead). */
export async function pdfIndirectLengthBomb(): Promise<Uint8Array> {
  const stream = await deflate(new Uint8Array(64 * 2 ** 20).fill(0x20))
  return rawPdf([
    ...ONE_PAGE,
    concat(text('<< /Length 5 0 R /Filter /FlateDecode >>\nstream\n'), stream, text('\nendstream')),
    '10',
  ])
}

/**
 * PDF's LZW (ISO 32000-1 §7.4.4, EarlyChange 1) of `count` repetitions of one byte: codes for runs of 1, 2, 3, …
 * bytes until the table is full (or the rest is shorter), then a clear code; 9 to 12 bits a code as the decoder
 * widens them.
 */
export function lzwRun(byte: number, count: number): Uint8Array {
  const codes: number[] = []
  let left = count
  while (left > 0) {
    codes.push(byte) // after a clear: one byte, no entry
    left--
    // Code c is entry c − 256 bytes long: the previous run and one more byte (each read as KwKwK).
    for (let code = 258; code < 4096 && left >= code - 256; code++) {
      codes.push(code)
      left -= code - 256
    }
    codes.push(256)
  }
  codes.push(257)
  const out: number[] = []
  let bits = 0
  let pending = 0
  let width = 9
  let nextCode = 258
  let afterClear = true
  for (const code of codes) {
    pending = (pending << width) | code
    bits += width
    while (bits >= 8) {
      bits -= 8
      out.push((pending >>> bits) & 0xff)
    }
    pending &= (1 << bits) - 1
    if (code === 256) {
      width = 9
      nextCode = 258
      afterClear = true
      continue
    }
    if (!afterClear && nextCode < 4096) nextCode++
    afterClear = false
    if (nextCode + 1 >= 1 << width && width < 12) width++
  }
  if (bits > 0) out.push((pending << (8 - bits)) & 0xff)
  return new Uint8Array(out)
}

/** A content stream of 64 MiB of spaces under /LZWDecode, in about 50 KB. */
export function pdfLzwBomb(): Uint8Array {
  return pdfLzwSpaces(64 * 2 ** 20)
}

/** One page whose content stream is `count` spaces in LZW, its entries as long as the count lets them grow. */
export function pdfLzwSpaces(count: number): Uint8Array {
  return rawPdf([...ONE_PAGE, streamObject('/Filter /LZWDecode', lzwRun(0x20, count))])
}

/** An object stream (PDFium inflates those while loading) of 64 MiB of spaces. */
export async function pdfObjectStreamBomb(): Promise<Uint8Array> {
  const stream = await deflate(new Uint8Array(64 * 2 ** 20).fill(0x20))
  return rawPdf([
    ...ONE_PAGE,
    '<< /Length 0 >>\nstream\n\nendstream',
    streamObject('/Type /ObjStm /N 1 /First 4 /Filter /FlateDecode', stream),
  ])
}

/** One page and five fonts of 10 MiB each: each under the stream limit, together over the page's budget. */
export async function pdfManyStreams(): Promise<Uint8Array> {
  const stream = await deflate(new Uint8Array(10 * 2 ** 20).fill(0x20))
  return rawPdf([
    ...ONE_PAGE,
    '<< /Length 0 >>\nstream\n\nendstream',
    ...Array.from({ length: 5 }, () => streamObject('/Filter /FlateDecode', stream)),
  ])
}

/** The Flate bomb behind a /Crypt filter, which PDFium skips (decoding the filters after it). */
export async function pdfCryptFilterBomb(): Promise<Uint8Array> {
  const stream = await deflate(new Uint8Array(64 * 2 ** 20).fill(0x20))
  return rawPdf([
    ...ONE_PAGE,
    streamObject('/Filter [/Crypt /FlateDecode] /DecodeParms [<< /Name /Identity >> null]', stream),
  ])
}

/** A PDF encrypted (so its trailer says) by the public-key security handler, which PDFium does not read. */
export function pdfPublicKeyEncrypted(): Uint8Array {
  return rawPdf(
    [
      ...ONE_PAGE,
      '<< /Length 0 >>\nstream\n\nendstream',
      '<< /Filter /Adobe.PubSec /SubFilter /adbe.pkcs7.s5 /V 4 /Recipients [<00>] >>',
    ],
    ' /Encrypt 5 0 R /ID [<00112233445566778899aabbccddeeff> <00112233445566778899aabbccddeeff>]',
  )
}

/** A stream whose /Filter names an object that is not in the file (PDFium would look in object streams). */
export function pdfHiddenFilter(): Uint8Array {
  return rawPdf([...ONE_PAGE, streamObject('/Filter 9 0 R', text('x'))])
}

/**
 * Issue 29's first PDF: thousands of streams whose /Filter and /DecodeParms name one shared object each, the
 * DecodeParms a 350 KB array. A reader that parses a named object again for every stream does streams × 350 KB.
 */
export function pdfSharedIndirectParams(streams = 6000, paramsBytes = 350_000): Uint8Array {
  const params = `[${'null '.repeat(Math.floor(paramsBytes / 5))}]`
  const stream = streamObject('/Filter 5 0 R /DecodeParms 6 0 R', text('>'))
  return rawPdf([
    ...ONE_PAGE,
    '<< /Length 0 >>\nstream\n\nendstream',
    '[/ASCIIHexDecode]',
    params,
    ...Array.from({ length: streams }, () => stream),
  ])
}

/**
 * Issue 29's second PDF: streams under /ASCII85Decode with no /Length, their data bytes of 0x76 ('v', outside
 * ASCII85's '!'..'u'). A decoder that skips such bytes reads each stream to the end of the file.
 */
export function pdfAscii85ToEnd(streams = 2000, dataBytes = 1000): Uint8Array {
  const stream = concat(
    text('<< /Filter /ASCII85Decode >>\nstream\n'),
    new Uint8Array(dataBytes).fill(0x76),
    text('\nendstream'),
  )
  return rawPdf([...ONE_PAGE, ...Array.from({ length: streams }, () => stream)])
}

/**
 * Streams whose /Length names an object the file does not hold (PDFium may find it in an object stream: the
 * pre-scan reads each to the end of the file), their data RunLength literals: each stream's reading goes on
 * through every stream after it, output and all.
 */
export function pdfRunLengthToEnd(streams = 1000, dataBytes = 1000, pages = 40): Uint8Array {
  const literals = new Uint8Array(dataBytes)
  for (let at = 0; at < dataBytes; at += 128) literals[at] = Math.min(127, dataBytes - at - 2) // n + 1 bytes follow
  const stream = concat(
    text('<< /Length 999999 0 R /Filter /RunLengthDecode >>\nstream\n'),
    literals,
    text('\nendstream'),
  )
  const kids = Array.from({ length: pages }, (_, i) => `${i + 3} 0 R`).join(' ')
  const page = '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 100 100] >>'
  return rawPdf([
    '<< /Type /Catalog /Pages 2 0 R >>',
    `<< /Type /Pages /Kids [${kids}] /Count ${pages} >>`,
    ...Array.from({ length: pages }, () => page),
    ...Array.from({ length: streams }, () => stream),
  ])
}

/**
 * A one-page PDF that draws jpegRepeatedScans as an image XObject (DCTDecode): PDFium's own libjpeg would make a
 * pass over the image's 163,835 blocks for each of its scans.
 */
export function pdfJpegRepeatedScans(refinements = 1000): Uint8Array {
  const jpeg = jpegRepeatedScans(refinements)
  const content = 'q 846 0 0 124 0 0 cm /Im0 Do Q'
  return rawPdf([
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 846 124] /Contents 4 0 R /Resources << /XObject << /Im0 5 0 R >> >> >>',
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
    streamObject(
      '/Type /XObject /Subtype /Image /Width 8456 /Height 1240 /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /DCTDecode',
      jpeg,
    ),
  ])
}

/** A stream dictionary with a 1 MB word of digits that ends in a letter (a number pattern that backtracks on it). */
export function pdfLongWord(digits = 1_000_000): Uint8Array {
  return rawPdf([...ONE_PAGE, `<< /Length 1 /W ${'1'.repeat(digits)}x >>\nstream\nx\nendstream`])
}

/** `count` opaque fills of one rectangle ("x y width height"), in ten greys by turns. */
const fillsOf = (count: number, rectangle: string) =>
  Array.from({ length: count }, (_, i) => `${(i % 10) / 10} g ${rectangle} re f`).join('\n')

/**
 * A US Letter page painted over by `fills` opaque fills of the whole page, 23 bytes of content each: the costliest
 * drawing for its bytes (each fill paints every pixel). Issue 29 measured 0.4 ms a fill at 2.2 MP: the 8.8 MB of
 * content a page may hold would be 150–194 s of CPU.
 */
export function pdfWholePageFills(fills: number): Uint8Array {
  return buildPdf([{ width: 612, height: 792, content: fillsOf(fills, '0 0 612 792') }])
}

/**
 * A US Letter page with one annotation whose appearance paints `fills` opaque fills of its whole box, the
 * annotation's rectangle the page's: PDFium draws annotations' appearances over the page.
 */
export function pdfAnnotationFills(fills: number): Uint8Array {
  return rawPdf([
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Annots [5 0 R] >>',
    '<< /Length 0 >>\nstream\n\nendstream',
    '<< /Type /Annot /Subtype /Square /Rect [0 0 612 792] /AP << /N 6 0 R >> >>',
    streamObject('/Type /XObject /Subtype /Form /BBox [0 0 100 100]', text(fillsOf(fills, '0 0 100 100'))),
  ])
}

/**
 * A US Letter page that draws form /A `references` times; /A draws form /B `references` times, and /B holds `fills`
 * small fills. A few kilobytes make references² × fills objects, which PDFium builds in its heap when it loads the
 * page, before anything counts them: at 30 references and 1,000 fills, 900,000 objects in 275 MiB.
 */
export function pdfNestedForms(references: number, fills: number): Uint8Array {
  const draws = (form: string) => Array.from({ length: references }, () => `/${form} Do`).join('\n')
  const leaf = Array.from({ length: fills }, (_, i) => `${i % 600} 0 1 1 re f`).join('\n')
  return rawPdf([
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /XObject << /A 5 0 R >> >> >>',
    streamObject('', text(draws('A'))),
    streamObject(
      '/Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << /XObject << /B 6 0 R >> >>',
      text(draws('B')),
    ),
    streamObject('/Type /XObject /Subtype /Form /BBox [0 0 612 792]', text(leaf)),
  ])
}

/** The catalog, a one-page tree and a US Letter page whose content is object 4 and whose resources are `resources`. */
const letterPage = (resources: string) => [
  '<< /Type /Catalog /Pages 2 0 R >>',
  '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
  `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources ${resources} >>`,
]

/**
 * `count` copies of one character shown 10,000 to a `Tj`: PDFium keeps the first 32,767 bytes of a string in a
 * content stream (`kMaxStringLength`, cpdf_streamparser.cpp), and makes a text object of each.
 */
const shown = (character: string, count: number) =>
  Array.from(
    { length: Math.ceil(count / 10_000) },
    (_, i) => `(${character.repeat(Math.min(10_000, count - i * 10_000))}) Tj`,
  ).join('\n')

/**
 * A US Letter page that shows `glyphs` bytes of Helvetica (the standard font, not embedded) at `points` (12), the
 * character spacing set to minus each glyph's advance so that every glyph lands on the same spot, a box of 9 × 12 pt
 * at 12 pt however many are shown, 10,000 to a text object. Flate makes them small: 1,000,000 glyphs are a 2 KB file. Issue 29
 * measured 900,000 glyphs drawing in 2.4 s; the walk sees 100 small text objects.
 */
export async function pdfGlyphPile(glyphs: number, points = 12): Promise<Uint8Array> {
  // 'H' is 722 units of 1000 wide in Helvetica: 8.664 pt at 12 pt.
  const spacing = -0.722 * points
  const content = await deflate(text(`BT /F1 ${points} Tf ${spacing} Tc 100 400 Td\n${shown('H', glyphs)}\nET`))
  return rawPdf([
    ...letterPage('<< /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >>'),
    streamObject('/Filter /FlateDecode', content),
  ])
}

/**
 * A US Letter page that shows `glyphs` copies of the one glyph of a Type 3 font at `points` (600: 600 × 600 pt of the
 * page), each on the same spot, whose glyph procedure paints `procFills` opaque fills of its 1000 × 1000 box. The
 * procedure begins with `d0` (a coloured glyph: nothing PDFium could cache as a mask) or `d1` (a shape in the text's
 * colour); PDFium draws the procedure again for each glyph either way. Flate makes the content small; the walk sees a
 * text object for each 10,000 glyphs.
 */
export async function pdfType3Glyphs(
  glyphs: number,
  procFills: number,
  { points = 600, declaration = 'd0' }: { points?: number; declaration?: 'd0' | 'd1' } = {},
): Promise<Uint8Array> {
  const procedure = `${declaration === 'd0' ? '1000 0 d0' : '1000 0 0 0 1000 1000 d1'}\n${fillsOf(procFills, '0 0 1000 1000')}`
  const content = await deflate(text(`BT /F1 ${points} Tf -${points} Tc 6 96 Td\n${shown('a', glyphs)}\nET`))
  return rawPdf([
    ...letterPage('<< /Font << /F1 5 0 R >> >>'),
    streamObject('/Filter /FlateDecode', content),
    '<< /Type /Font /Subtype /Type3 /FontBBox [0 0 1000 1000] /FontMatrix [0.001 0 0 0.001 0 0] /CharProcs << /a 6 0 R >> /Encoding << /Type /Encoding /Differences [97 /a] >> /FirstChar 97 /LastChar 97 /Widths [1000] /Resources << >> >>',
    streamObject('', text(procedure)),
  ])
}

/**
 * A US Letter page that fills `rectangle` (the page: "0 0 612 792") `objects` times with a tiling pattern whose one
 * cell is the page (BBox, XStep and YStep 612 × 792) and paints `cellFills` opaque fills of itself: PDFium draws the
 * cell for each fill that uses the pattern. The walk sees `objects` paths of the rectangle's size.
 */
export function pdfPatternCells(objects: number, cellFills: number, rectangle = '0 0 612 792'): Uint8Array {
  const content = `/Pattern cs /P1 scn\n${Array.from({ length: objects }, () => `${rectangle} re f`).join('\n')}`
  return rawPdf([
    ...letterPage('<< /Pattern << /P1 5 0 R >> >>'),
    streamObject('', text(content)),
    streamObject(
      '/Type /Pattern /PatternType 1 /PaintType 1 /TilingType 1 /BBox [0 0 612 792] /XStep 612 /YStep 792 /Resources << >>',
      text(fillsOf(cellFills, '0 0 612 792')),
    ),
  ])
}

/**
 * A US Letter page that sets a luminosity soft mask (ExtGState /GS1, its group a page-sized transparency group of
 * `groupFills` opaque fills, grey 0.5 to 0.9) and fills `rectangle` (the page: "0 0 612 792") `objects` times under
 * it: PDFium draws the mask's group again for each object, within the object's box. Issue 29 measured 10 fills over
 * a 1,000-fill group taking 4.6 s at 1.1 MP.
 */
export function pdfSoftMaskRedraw(objects: number, groupFills: number, rectangle = '0 0 612 792'): Uint8Array {
  const group = Array.from({ length: groupFills }, (_, i) => `${0.5 + (i % 5) / 10} g 0 0 612 792 re f`).join('\n')
  return rawPdf([
    ...letterPage(
      '<< /ExtGState << /GS1 << /Type /ExtGState /SMask << /Type /Mask /S /Luminosity /G 5 0 R >> >> >> >>',
    ),
    streamObject('', text(`/GS1 gs\n${fillsOf(objects, rectangle)}`)),
    streamObject(
      '/Type /XObject /Subtype /Form /BBox [0 0 612 792] /Group << /S /Transparency /CS /DeviceGray >> /Resources << >>',
      text(group),
    ),
  ])
}

/** A PostScript calculator function (FunctionType 4) of `operators` operators: `dup 0.5 mul pop`, repeated. */
const postScriptProgram = (operators: number, end = '') =>
  text(`{ ${'dup 0.5 mul pop '.repeat(Math.ceil(operators / 3))}${end}}`)

/**
 * A US Letter page filled by a function shading (ShadingType 1) whose PostScript function runs `operators`
 * operators: PDFium runs it for each pixel. 1,200 operators drew for 5.5 s at 2.1 MP; a 100 KB program, minutes.
 */
export async function pdfFunctionShading(operators: number): Promise<Uint8Array> {
  return rawPdf([
    ...letterPage('<< /Shading << /S1 5 0 R >> >>'),
    streamObject('', text('/S1 sh')),
    '<< /ShadingType 1 /ColorSpace /DeviceGray /Domain [0 612 0 792] /Function 6 0 R >>',
    streamObject(
      '/FunctionType 4 /Domain [0 612 0 792] /Range [0 1] /Filter /FlateDecode',
      await deflate(postScriptProgram(operators)),
    ),
  ])
}

/**
 * A US Letter page filled by a free-form triangle mesh (ShadingType 4) of `triangles` triangles, each the size of
 * the page: PDFium fills each. 400 drew for 2.2 s at 2.1 MP, from 2 KB.
 */
export async function pdfMeshShading(triangles: number): Promise<Uint8Array> {
  // Each vertex: a flag byte, two 16-bit coordinates, an 8-bit grey.
  const data = new Uint8Array(triangles * 3 * 6)
  for (let t = 0; t < triangles; t++) {
    for (const [j, [x, y]] of [
      [0, 0],
      [65535, 0],
      [0, 65535],
    ].entries()) {
      const at = (t * 3 + j) * 6
      data.set([0, x! >> 8, x! & 0xff, y! >> 8, y! & 0xff, (t * 37 + j * 80) & 0xff], at)
    }
  }
  return rawPdf([
    ...letterPage('<< /Shading << /S1 5 0 R >> >>'),
    streamObject('', text('/S1 sh')),
    streamObject(
      '/ShadingType 4 /ColorSpace /DeviceGray /BitsPerCoordinate 16 /BitsPerComponent 8 /BitsPerFlag 8 /Decode [0 1224 0 1584 0 1] /Filter /FlateDecode',
      await deflate(data),
    ),
  ])
}

/**
 * A US Letter page drawing a `side` × `side` image in a two-ink DeviceN colour space whose tint transform is a
 * PostScript function of `operators` operators: PDFium runs it for each pixel of the image (1 MP at 200 operators:
 * 7 s).
 */
export async function pdfTintImage(side: number, operators: number): Promise<Uint8Array> {
  const pixels = new Uint8Array(side * side * 2).map((_, i) => (i * 7) & 0xff)
  return rawPdf([
    ...letterPage('<< /XObject << /Im 5 0 R >> >>'),
    streamObject('', text('612 0 0 792 0 0 cm /Im Do')),
    streamObject(
      `/Type /XObject /Subtype /Image /Width ${side} /Height ${side} /BitsPerComponent 8 /ColorSpace [/DeviceN [/A /B] /DeviceGray 6 0 R] /Filter /FlateDecode`,
      await deflate(pixels),
    ),
    streamObject(
      '/FunctionType 4 /Domain [0 1 0 1] /Range [0 1] /Filter /FlateDecode',
      await deflate(postScriptProgram(operators, 'pop ')),
    ),
  ])
}

export function pdfPage(width: number, height: number): Uint8Array {
  return buildPdf([{ width, height, content: '0 0 0 rg 0 0 1 1 re f' }])
}

/** A 16-bit PCM WAV whose format and data chunks say what the case needs, with 64 bytes of samples. */
function wavWith(fields: { channels?: number; rate?: number; declared?: number }): Uint8Array {
  const { channels = 1, rate = 8000, declared = 64 } = fields
  const align = (channels * 2) & 0xffff
  return concat(
    text('RIFF'),
    u32le(36 + 64),
    text('WAVEfmt '),
    u32le(16),
    u16le(1),
    u16le(channels),
    u32le(rate),
    u32le((rate * align) >>> 0),
    u16le(align),
    u16le(16),
    text('data'),
    u32le(declared),
    new Uint8Array(64),
  )
}

/**
 * A DOCX cut short: its first part's local header and XML, and no central directory after them. LibreOffice cannot
 * read it as a package and its type detection goes on: 7.4 opened some such prefixes as WordPerfect (a PDF of "PK…").
 */
function truncatedDocx(): Uint8Array {
  const name = new TextEncoder().encode('[Content_Types].xml')
  const xml = new TextEncoder().encode(
    '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">',
  )
  const header = new Uint8Array(30)
  const view = new DataView(header.buffer)
  view.setUint32(0, 0x04034b50, true)
  view.setUint16(4, 20, true) // version needed; method 0 (stored), CRC left 0: the bytes end before it matters
  view.setUint32(18, xml.length, true)
  view.setUint32(22, xml.length, true)
  view.setUint16(26, name.length, true)
  return concat(header, name, xml)
}

const A_PNG = pngWithSize(1, 1)
const A_JPEG = jpegWithSize(8, 8)

/** Every case, by converter. */
export const HOSTILE_CASES: readonly HostileCase[] = [
  // image → PNG: every decoder checks what it will decode
  {
    name: 'gif-frame-flood.gif',
    why: 'a 35-byte GIF: 10×10 screen, 60000×60000 first frame',
    expect: 'failed',
    reason: /60000×60000.*IMAGE_MAX_SIDE/,
    bytes: async () => gifFrameFlood(),
  },
  {
    name: 'png-flood.png',
    why: 'a PNG IHDR of 60000×60000',
    expect: 'failed',
    reason: /IMAGE_MAX_SIDE/,
    bytes: async () => pngWithSize(60000, 60000),
  },
  {
    name: 'png-pixels.png',
    why: 'a PNG IHDR of 10000×10000 (sides allowed, pixels not)',
    expect: 'failed',
    reason: /IMAGE_MAX_PIXELS/,
    bytes: async () => pngWithSize(10000, 10000),
  },
  {
    name: 'png-thin.png',
    why: 'a PNG IHDR of 1×4,000,000 (few pixels, one huge side)',
    expect: 'failed',
    reason: /IMAGE_MAX_SIDE/,
    bytes: async () => pngWithSize(1, 4_000_000),
  },
  {
    name: 'png-idat-crumbs.png',
    why: 'a 4.8 MB-of-rows PNG whose IDAT stream is in one-byte chunks',
    expect: 'done',
    bytes: pngIdatCrumbs,
  },
  {
    name: 'jpeg-flood.jpg',
    why: 'a JPEG SOF of 60000×60000',
    expect: 'failed',
    reason: /IMAGE_MAX_SIDE/,
    bytes: async () => jpegWithSize(60000, 60000),
  },
  {
    name: 'webp-canvas.webp',
    why: 'a WebP VP8X canvas of 16384×16384 around a 1×1 frame',
    expect: 'failed',
    reason: /IMAGE_MAX_PIXELS/,
    bytes: async () => webpCanvasFlood(),
  },
  {
    name: 'webp-frame.webp',
    why: 'a WebP VP8L frame of 16384×16384 in 30 bytes',
    expect: 'failed',
    reason: /IMAGE_MAX_PIXELS/,
    bytes: async () => webpFrameFlood(),
  },
  {
    name: 'avif-primary.avif',
    why: 'an AVIF whose first ispe is a 10×10 thumbnail, the primary 60000×60000',
    expect: 'failed',
    reason: /60000×60000.*IMAGE_MAX_SIDE/,
    bytes: async () => avifPrimaryFlood(),
  },
  {
    name: 'avif-coded.avif',
    why: 'an AVIF whose ispe says 10×10 and whose AV1 data is coded for 60000×60000',
    expect: 'failed',
    reason: /10×10 \(ispe\) but its AV1 data is coded for frames of up to 60000×60000/,
    bytes: async () => avifCodedFlood(10, 60000),
  },
  {
    name: 'avif-config.avif',
    why: 'an AVIF whose av1C sequence header allows 60000×60000 frames',
    expect: 'failed',
    reason: /60000×60000.*IMAGE_MAX_SIDE/,
    bytes: async () => avifCodedFlood(100, 100, 60000),
  },
  {
    name: 'avif-no-primary.avif',
    why: 'an AVIF with no primary item',
    expect: 'failed',
    reason: /no primary item|no meta/,
    bytes: async () => avifWithoutPrimary(),
  },
  {
    name: 'tiff-flood.tif',
    why: 'a TIFF first IFD of 60000×60000',
    expect: 'failed',
    reason: /IMAGE_MAX_SIDE/,
    bytes: async () => tiffWithSize(60000, 60000),
  },
  {
    name: 'tiff-cycle.tif',
    why: 'a TIFF whose IFD chain is a cycle (only the first IFD is read)',
    expect: 'done',
    bytes: async () => tiffIfdCycle(),
  },
  {
    name: 'tiff-subifd-cycle.tif',
    why: 'a TIFF whose SubIFDs point back at its own IFD',
    expect: 'failed',
    reason: /cycle of IFDs/,
    bytes: async () => tiffSubIfdCycle(),
  },
  {
    name: 'tiff-count.tif',
    why: 'a TIFF tag claiming 4 billion values',
    expect: 'failed',
    reason: /claims \d+ values/,
    bytes: async () => tiffCountBomb(),
  },
  {
    name: 'tiff-shared-strips.tif',
    why: '20,000 one-row PackBits strips, each naming the same megabyte of no-op bytes',
    expect: 'done',
    bytes: async () => tiffSharedStrips(),
  },
  {
    name: 'tiff-deflate-bomb.tif',
    why: 'a 1000×1000 TIFF whose Deflate strip inflates to 256 MiB',
    expect: 'done',
    bytes: tiffDeflateBomb,
  },
  {
    name: 'jpeg-scans.jpg',
    why: 'a 10.5 MP progressive JPEG whose AC refinement scan is repeated 1000 times',
    expect: 'failed',
    reason: /has 1002 scans; at most 100/,
    bytes: async () => jpegRepeatedScans(1000),
  },
  {
    name: 'bmp-flood.bmp',
    why: 'a BMP header of 60000×60000',
    expect: 'failed',
    reason: /IMAGE_MAX_SIDE/,
    bytes: async () => bmpWithSize(60000, 60000),
  },
  {
    name: 'truncated.png',
    why: 'a PNG cut after its header',
    expect: 'failed',
    reason: /cannot be decoded/,
    bytes: async () => pngWithSize(64, 64).subarray(0, 33),
  },
  {
    name: 'truncated.gif',
    why: 'a GIF cut inside its first frame',
    expect: 'failed',
    reason: /cannot be decoded|no image/,
    bytes: async () => gifFrameFlood().subarray(0, 20),
  },
  {
    name: 'empty.png',
    why: 'an empty .png',
    expect: 'refused',
    reason: /is empty/,
    bytes: async () => new Uint8Array(),
  },
  // PDF → PNG: each page checked after rounding to pixels
  {
    name: 'thin-page.pdf',
    why: 'a 2,000,000,000 × 1 pt page',
    expect: 'done',
    bytes: async () => pdfPage(2_000_000_000, 1),
  },
  {
    name: 'cyclic-pages.pdf',
    why: 'a page tree whose Kids hold itself',
    expect: 'settled',
    reason: /cannot be (read|loaded)/,
    bytes: async () => pdfCyclicPages(),
  },
  {
    name: 'lying-count.pdf',
    why: 'a page tree claiming 1,000,000,000 pages',
    expect: 'done',
    bytes: async () => pdfLyingCount(),
  },
  {
    name: 'deep-nesting.pdf',
    why: '100,000 nested arrays and dictionaries',
    expect: 'done',
    bytes: async () => pdfDeepNesting(),
  },
  {
    name: 'flate-bomb.pdf',
    why: 'a 64 MiB Flate content stream in 64 KB',
    expect: 'failed',
    reason: /object 4's stream decodes to more than \d+ bytes.*PDF_MAX_BYTES/,
    bytes: pdfFlateBomb,
  },
  {
    name: 'hex-flate-bomb.pdf',
    why: 'the Flate bomb behind /ASCIIHexDecode',
    expect: 'failed',
    reason: /decodes? to more than \d+ bytes/,
    bytes: pdfHexFlateBomb,
  },
  {
    name: 'indirect-length-bomb.pdf',
    why: 'the Flate bomb with a /Length that lies, indirectly',
    expect: 'failed',
    reason: /decodes to more than \d+ bytes.*PDF_MAX_BYTES/,
    bytes: pdfIndirectLengthBomb,
  },
  {
    name: 'lzw-bomb.pdf',
    why: 'a 64 MiB LZW content stream in 50 KB',
    expect: 'failed',
    reason: /decodes to more than \d+ bytes.*PDF_MAX_BYTES/,
    bytes: async () => pdfLzwBomb(),
  },
  {
    name: 'objstm-bomb.pdf',
    why: 'a 64 MiB object stream, inflated while PDFium loads',
    expect: 'failed',
    reason: /object 5's stream decodes to more than \d+ bytes/,
    bytes: pdfObjectStreamBomb,
  },
  {
    name: 'many-streams.pdf',
    why: 'one page and 50 MiB of streams, each under the stream limit',
    expect: 'failed',
    reason: /streams decode to more than \d+ bytes.*PDF_MAX_PAGE_PIXELS/,
    bytes: pdfManyStreams,
  },
  {
    name: 'crypt-filter-bomb.pdf',
    why: 'the Flate bomb behind a /Crypt filter (PDFium skips it)',
    expect: 'failed',
    reason: /object 4's stream decodes to more than \d+ bytes.*PDF_MAX_BYTES/,
    bytes: pdfCryptFilterBomb,
  },
  // The Flate bomb in each kind of encryption with an empty user password (qpdf): its streams measured decrypted.
  ...(['rc4-40', 'rc4-128', 'aes-128', 'aes-256'] as const).map(
    (encryption): HostileCase => ({
      name: `flate-bomb-${encryption}.pdf`,
      why: `the Flate bomb encrypted (${encryption}, empty user password)`,
      expect: 'failed',
      reason: /stream decodes to more than \d+ bytes.*PDF_MAX_BYTES/,
      encryption,
      bytes: pdfFlateBomb,
    }),
  ),
  {
    name: 'public-key.pdf',
    why: 'encrypted by the public-key handler',
    expect: 'failed',
    reason: /unsupported security scheme.*\/Adobe\.PubSec/,
    bytes: async () => pdfPublicKeyEncrypted(),
  },
  {
    name: 'hidden-filter.pdf',
    why: 'a /Filter naming an object not in the file',
    expect: 'failed',
    reason: /cannot be read: object 9.*not in the file/,
    bytes: async () => pdfHiddenFilter(),
  },
  {
    name: 'shared-params.pdf',
    why: '6000 streams naming one 350 KB /DecodeParms',
    expect: 'done',
    bytes: async () => pdfSharedIndirectParams(),
  },
  {
    name: 'ascii85-to-end.pdf',
    why: '2000 ASCII85 streams without /Length, their data bytes outside the alphabet',
    expect: 'done',
    bytes: async () => pdfAscii85ToEnd(),
  },
  {
    name: 'runlength-to-end.pdf',
    why: '1000 RunLength streams whose /Length names no object, read to the end of the file',
    expect: 'failed',
    reason: /streams' data overlap/,
    bytes: async () => pdfRunLengthToEnd(),
  },
  {
    name: 'jpeg-scans-in-page.pdf',
    why: "a page drawing the 1002-scan JPEG of jpeg-scans.jpg, which PDFium's libjpeg would decode",
    expect: 'failed',
    reason: /page 1 holds a JPEG image of 1002 scans; at most 100 are decoded/,
    bytes: async () => pdfJpegRepeatedScans(1000),
  },
  {
    name: 'fill-bomb.pdf',
    why: 'a page of 20,000 opaque fills of the whole page, each painting every pixel (460 KB)',
    expect: 'failed',
    reason: /page 1 would paint 42135\.0 megapixels .*; at most 660\.0 are painted/,
    bytes: async () => pdfWholePageFills(20_000),
  },
  {
    name: 'nested-forms.pdf',
    why: 'a page drawing a form 100 times that draws another 100 times, of 1,000 fills: 10 million objects in 16 KB',
    expect: 'failed',
    reason:
      /page 1 would draw 10010100 objects and glyphs and .*: 13650\.1 areas of the page .*; at most 300 are drawn/,
    bytes: async () => pdfNestedForms(100, 1000),
  },
  {
    name: 'glyph-pile.pdf',
    why: 'a million Helvetica glyphs of 12 pt shown on one spot, 10,000 to a text object (2 KB)',
    expect: 'failed',
    reason:
      /page 1 would draw 1000100 objects and glyphs and 297\.1 times its area again .*: 1660\.9 areas of the page/,
    bytes: async () => pdfGlyphPile(1_000_000),
  },
  {
    name: 'glyph-pile-aes.pdf',
    why: 'glyph-pile.pdf encrypted with AES-256 by qpdf: the count reads the content as PDFium decrypts it',
    expect: 'failed',
    reason: /page 1 would draw 1000100 objects and glyphs and 297\.1 times its area again/,
    encryption: 'aes-256',
    bytes: async () => pdfGlyphPile(1_000_000),
  },
  {
    name: 'big-glyphs.pdf',
    why: '1,000 Helvetica glyphs of 600 pt on one spot, each drawn over most of the page (0.36 ms each)',
    expect: 'failed',
    reason: /page 1 would draw 1001 objects and glyphs and 742\.7 times its area again/,
    bytes: async () => pdfGlyphPile(1_000, 600),
  },
  {
    name: 'type3-glyphs.pdf',
    why: 'a Type 3 font whose glyph procedure paints 10 fills of its box, 400 glyphs of 600 pt on one spot',
    expect: 'failed',
    reason: /page 1 would draw 4401 objects and glyphs and 3268\.0 times its area again/,
    bytes: async () => pdfType3Glyphs(400, 10),
  },
  {
    name: 'pattern-cells.pdf',
    why: 'a page filled 100 times with a tiling pattern whose page-sized cell paints 100 fills of itself',
    expect: 'failed',
    reason: /page 1 would draw 10100 objects and glyphs and 10000\.0 times its area again/,
    bytes: async () => pdfPatternCells(100, 100),
  },
  {
    name: 'soft-mask-redraw.pdf',
    why: '10 fills of the page under a soft mask whose group holds 1,000 more (issue 29: 4.6 s at 1.1 MP)',
    expect: 'failed',
    reason: /page 1 would draw 10010 objects and glyphs and 10000\.0 times its area again/,
    bytes: async () => pdfSoftMaskRedraw(10, 1000),
  },
  {
    name: 'function-shading.pdf',
    why: 'a page filled by a function shading whose PostScript function runs 1,200 operators for each pixel (5.5 s)',
    expect: 'failed',
    reason: /page 1 would draw 1 objects and glyphs and 2433\.0 times its area again/,
    bytes: async () => pdfFunctionShading(1_200),
  },
  {
    name: 'mesh-shading.pdf',
    why: 'a triangle mesh of 400 page-sized triangles, 2 KB (2.2 s)',
    expect: 'failed',
    reason: /page 1 would draw 1 objects and glyphs and 2400\.0 times its area again/,
    bytes: async () => pdfMeshShading(400),
  },
  {
    name: 'tint-image.pdf',
    why: 'a 1 MP image in two DeviceN inks whose tint transform runs 600 operators for each pixel (7 s)',
    expect: 'failed',
    reason: /page 1 would draw 1 objects and glyphs and 0\.0 times its area again .*: 2294\.5 areas of the page/,
    bytes: async () => pdfTintImage(1000, 600),
  },
  {
    name: 'annotation-fills.pdf',
    why: "an annotation whose appearance paints 20,000 fills of the page's size",
    expect: 'failed',
    reason: /page 1 would paint 42135\.0 megapixels .*; at most 660\.0 are painted/,
    bytes: async () => pdfAnnotationFills(20_000),
  },
  {
    name: 'long-word.pdf',
    why: 'a stream dictionary with a word of a million digits',
    expect: 'failed',
    reason: /cannot be read/,
    bytes: async () => pdfLongWord(),
  },
  {
    name: 'truncated.pdf',
    why: 'a PDF cut in half',
    expect: 'failed',
    reason: /cannot be read|no pages/,
    bytes: async () => pdfPage(100, 100).subarray(0, 200),
  },
  {
    name: 'empty.pdf',
    why: 'an empty .pdf',
    expect: 'refused',
    reason: /is empty/,
    bytes: async () => new Uint8Array(),
  },
  // text → PNG: layout linear and bounded
  {
    name: 'combining.txt',
    why: 'one letter and 200,000 combining marks',
    expect: 'done',
    bytes: async () => text(`a${'\u0301'.repeat(200_000)}`),
  },
  {
    name: 'newlines.txt',
    why: '5 MB of newlines',
    expect: 'failed',
    reason: /TEXT_MAX_PAGES/,
    bytes: async () => new Uint8Array(5 * 2 ** 20 - 1).fill(0x0a),
  },
  {
    name: 'long-line.txt',
    why: 'one 5 MB line without spaces',
    expect: 'failed',
    reason: /TEXT_MAX_PAGES/,
    bytes: async () => new Uint8Array(5 * 2 ** 20 - 1).fill(0x61),
  },
  {
    name: 'zero-width.txt',
    why: '5 MB of zero-width spaces on one line',
    expect: 'done',
    bytes: async () => text('\u200b'.repeat(1_700_000)),
  },
  {
    name: 'marks-everywhere.txt',
    why: '5 MB of letters each with 40 combining marks',
    expect: 'failed',
    reason: /would draw more than \d+ characters/,
    bytes: async () => text(`x${'\u0301'.repeat(40)} `.repeat(60_000)),
  },
  {
    name: 'empty.txt',
    why: 'an empty .txt',
    expect: 'refused',
    reason: /is empty/,
    bytes: async () => new Uint8Array(),
  },
  // Office → PDF: only office documents reach LibreOffice
  {
    name: 'photo.docx',
    why: 'a JPEG named .docx',
    expect: 'refused',
    reason: /content is image\/jpeg/,
    bytes: async () => A_JPEG,
  },
  {
    name: 'picture.docx',
    why: 'a PNG named .docx',
    expect: 'refused',
    reason: /content is image\/png/,
    bytes: async () => A_PNG,
  },
  {
    name: 'page.docx',
    why: 'an HTML file named .docx',
    expect: 'refused',
    reason: /content is text\/plain/,
    bytes: async () => text('<!doctype html><html><body><img src="file:///etc/passwd"></body></html>'),
  },
  {
    name: 'drawing.odt',
    why: 'an SVG named .odt',
    expect: 'refused',
    reason: /content is text\/plain/,
    bytes: async () => text('<svg xmlns="http://www.w3.org/2000/svg"><image href="file:///usr/share/icons"/></svg>'),
  },
  {
    name: 'document.doc',
    why: 'a PDF named .doc',
    expect: 'refused',
    reason: /content is application\/pdf/,
    bytes: async () => pdfPage(100, 100),
  },
  {
    name: 'table.csv',
    why: 'HTML named .csv',
    expect: 'failed',
    reason: /markup \(HTML, XML or SVG\), not CSV/,
    bytes: async () => text('<html><body><table><tr><td>1</td></tr></table></body></html>'),
  },
  {
    name: 'empty.docx',
    why: 'an empty .docx',
    expect: 'refused',
    reason: /is empty/,
    bytes: async () => new Uint8Array(),
  },
  {
    name: 'truncated.docx',
    why: 'a DOCX cut short: no central directory',
    expect: 'failed',
    reason: /truncated or damaged zip \(its end of central directory record is missing\)/,
    bytes: async () => truncatedDocx(),
  },
  // audio → text
  {
    name: 'empty.mp3',
    why: 'an empty .mp3',
    expect: 'refused',
    reason: /is empty/,
    bytes: async () => new Uint8Array(),
  },
  {
    name: 'photo.mp3',
    why: 'a JPEG named .mp3',
    expect: 'refused',
    reason: /content is image\/jpeg; audio-to-text reads only/,
    bytes: async () => A_JPEG,
  },
  {
    name: 'notes.wav',
    why: 'text named .wav',
    expect: 'refused',
    reason: /content is text\/plain; audio-to-text reads only/,
    bytes: async () => text('RIFF? no, a diary entry.'),
  },
  {
    name: 'lying.wav',
    why: 'a WAV whose data chunk claims 4 GB',
    expect: 'failed',
    reason: /data chunk declares 4294967280 bytes and the file holds 64/,
    bytes: async () => wavWith({ declared: 0xfffffff0 }),
  },
  {
    name: 'fast.wav',
    why: 'a WAV of 4 billion samples a second',
    expect: 'failed',
    reason: /declares 4000000000 samples a second/,
    bytes: async () => wavWith({ rate: 4_000_000_000 }),
  },
  {
    name: 'crowd.wav',
    why: 'a WAV of 65535 channels',
    expect: 'failed',
    reason: /declares 65535 channels/,
    bytes: async () => wavWith({ channels: 65535 }),
  },
  {
    name: 'cut.mp3',
    why: 'an MP3 cut inside its first frame',
    expect: 'failed',
    reason: /ends inside its first MP3 frame/,
    bytes: async () => concat([0xff, 0xfb, 0x90, 0x00], new Uint8Array(100)),
  },
]
