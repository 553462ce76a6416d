// The image decoders that work in pieces (issue 17: the API stays responsive while images convert): TIFF strip by
// strip (Deflate inflated in pieces) and converted to RGBA in bands, PNG inflated and unfiltered in batches of rows,
// BMP rows in bands, GIF's LZW data and painting in slices. Each gives the event loop turns (counted, never timed:
// test/support/turns.ts) and the same pixels as before: TIFF pages against UTIF's own one-call decodeImage +
// toRGBA8, GIF frames against omggif's decodeAndBlitFrameRGBA, which they replace.
import { deflateSync } from 'node:zlib'
import { GifReader, GifWriter } from 'omggif'
import pako from 'pako'
import UTIF from 'utif2'
import { describe, expect, it, vi } from 'vitest'
import { imageToPng } from '../../worker/converters/image-to-png'
import { decodeImage } from '../../worker/engines/image/decode'
import { decodePngRows } from '../../worker/engines/image/png'
import { TIFF_BANDED_RGBA_BYTES, tiffBands } from '../../worker/engines/image/tiff'
import { encodePng, encodePngBytes, pngChunks, type RawImage } from '../../worker/engines/png/encode'
import { convertAll, inputFromBytes, outputBytes, TEST_IMAGE_LIMITS, testContext } from '../support/conversion'
import { tiffSharedStrips } from '../hostile/corpus'
import { longestStretchDuring, turnsDuring } from '../support/turns'

/** Deterministic noise: nothing for a compressor to squeeze, every filter and predictor exercised. */
const noise = (length: number, seed = 1) => {
  const out = new Uint8Array(length)
  let s = seed
  for (let i = 0; i < length; i++) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0
    out[i] = s >>> 24
  }
  return out
}

interface TiffSpec {
  width: number
  height: number
  samples: 1 | 3 | 4
  bits: 8 | 16
  /** 1 none, 5 LZW, 8 Deflate, 32773 PackBits. */
  compression: 1 | 5 | 8 | 32773
  predictor?: boolean
  bigEndian?: boolean
  rowsPerStrip?: number
  tile?: number
}

/** PackBits as literal runs of at most 128 bytes (valid, if never shorter). */
function packBits(data: Uint8Array): Uint8Array {
  const out: number[] = []
  for (let at = 0; at < data.length; at += 128) {
    const run = data.subarray(at, at + 128)
    out.push(run.length - 1, ...run)
  }
  return new Uint8Array(out)
}

/** TIFF LZW (MSB first, 9-bit codes) of literal codes only, a Clear code every 250 codes so the width stays 9 bits. */
function lzw(data: Uint8Array): Uint8Array {
  const out: number[] = []
  let bits = 0
  let count = 0
  const put = (code: number) => {
    bits = (bits << 9) | code
    count += 9
    while (count >= 8) {
      count -= 8
      out.push((bits >>> count) & 0xff)
    }
  }
  put(256)
  data.forEach((byte, i) => {
    if (i > 0 && i % 250 === 0) put(256)
    put(byte)
  })
  put(257)
  if (count > 0) out.push((bits << (8 - count)) & 0xff)
  return new Uint8Array(out)
}

/** Horizontal differencing (TIFF predictor 2) of 8-bit rows, in place. */
function predict(raster: Uint8Array, rowBytes: number, samples: number): void {
  for (let row = 0; row < raster.length; row += rowBytes)
    for (let i = rowBytes - 1; i >= samples; i--)
      raster[row + i] = (raster[row + i]! - raster[row + i - samples]!) & 0xff
}

/** A TIFF of noise as the spec says, and its raster (rows of samples, in the file's byte order). */
function tiffOf(spec: TiffSpec): Uint8Array {
  const { width, height, samples, bits, compression } = spec
  const little = !spec.bigEndian
  const rowBytes = (width * samples * bits) / 8
  const raster = noise(rowBytes * height, width + height)
  const compress = (block: Uint8Array) => {
    const copy = block.slice()
    if (spec.predictor) predict(copy, rowBytes, samples)
    return compression === 8
      ? deflateSync(copy)
      : compression === 5
        ? lzw(copy)
        : compression === 32773
          ? packBits(copy)
          : copy
  }
  const blocks: Uint8Array[] = []
  if (spec.tile) {
    const t = spec.tile
    const tileRowBytes = (t * samples * bits) / 8
    for (let y = 0; y < height; y += t) {
      for (let x = 0; x < width; x += t) {
        const tile = new Uint8Array(tileRowBytes * t)
        for (let r = 0; r < t && y + r < height; r++) {
          const from = (y + r) * rowBytes + (x * samples * bits) / 8
          tile.set(raster.subarray(from, Math.min(from + tileRowBytes, (y + r + 1) * rowBytes)), r * tileRowBytes)
        }
        blocks.push(compress(tile))
      }
    }
  } else {
    const rows = spec.rowsPerStrip ?? height
    for (let y = 0; y < height; y += rows)
      blocks.push(compress(raster.subarray(y * rowBytes, Math.min(height, y + rows) * rowBytes)))
  }
  const entries: Array<[tag: number, type: 3 | 4, values: number[]]> = [
    [256, 4, [width]],
    [257, 4, [height]],
    [258, 3, Array(samples).fill(bits)],
    [259, 3, [compression]],
    [262, 3, [samples >= 3 ? 2 : 1]],
    [277, 3, [samples]],
  ]
  // A fourth sample is unassociated alpha.
  if (samples === 4) entries.push([338, 3, [2]])
  const offsets = new Array<number>(blocks.length).fill(0)
  if (spec.tile)
    entries.push([322, 4, [spec.tile]], [323, 4, [spec.tile]], [324, 4, offsets], [325, 4, blocks.map((b) => b.length)])
  else entries.push([273, 4, offsets], [278, 4, [spec.rowsPerStrip ?? height]], [279, 4, blocks.map((b) => b.length)])
  if (spec.predictor) entries.push([317, 3, [2]])
  entries.sort((a, b) => a[0] - b[0])
  const ifdBytes = 2 + entries.length * 12 + 4
  const outOfLine = entries.reduce(
    (sum, [, type, values]) =>
      sum + (values.length * (type === 3 ? 2 : 4) > 4 ? values.length * (type === 3 ? 2 : 4) : 0),
    0,
  )
  let dataAt = 8 + ifdBytes + outOfLine
  blocks.forEach((block, i) => {
    offsets[i] = dataAt
    dataAt += block.length
  })
  const file = new Uint8Array(dataAt)
  const view = new DataView(file.buffer)
  file.set(little ? [0x49, 0x49, 42, 0] : [0x4d, 0x4d, 0, 42])
  view.setUint32(4, 8, little)
  view.setUint16(8, entries.length, little)
  let valuesAt = 8 + ifdBytes
  entries.forEach(([tag, type, values], i) => {
    const at = 10 + i * 12
    const size = type === 3 ? 2 : 4
    view.setUint16(at, tag, little)
    view.setUint16(at + 2, type, little)
    view.setUint32(at + 4, values.length, little)
    let to = at + 8
    if (values.length * size > 4) {
      view.setUint32(at + 8, valuesAt, little)
      to = valuesAt
      valuesAt += values.length * size
    }
    values.forEach((value, v) => {
      if (size === 2) view.setUint16(to + v * 2, value, little)
      else view.setUint32(to + v * 4, value, little)
    })
  })
  let at = 8 + ifdBytes + outOfLine
  for (const block of blocks) {
    file.set(block, at)
    at += block.length
  }
  return file
}

/** UTIF's own decoding of the first page in one call each: the pixels before this change. */
function utifRgba(bytes: Uint8Array): Uint8Array {
  const buffer = bytes.slice().buffer
  const [first] = UTIF.decode(buffer)
  UTIF.decodeImage(buffer, first!)
  return UTIF.toRGBA8(first!)
}

/**
 * A PNG's chunks other than IDAT, and its IDAT chunks' data joined (the zlib stream), as hex. W3C PNG, 3rd edition,
 * "5.3 Chunk layout": Length (4 bytes), Chunk Type (4), Chunk Data (Length bytes), CRC (4).
 */
function pngParts(png: Uint8Array): { chunks: string[]; zlib: string } {
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength)
  const chunks: string[] = []
  const idat: Uint8Array[] = []
  for (let at = 8; at < png.length; ) {
    const length = view.getUint32(at)
    const type = String.fromCharCode(...png.subarray(at + 4, at + 8))
    if (type === 'IDAT') idat.push(png.subarray(at + 8, at + 8 + length))
    else chunks.push(Buffer.from(png.subarray(at, at + 12 + length)).toString('hex'))
    at += 12 + length
  }
  return { chunks, zlib: Buffer.concat(idat).toString('hex') }
}

/** Pages of each kind tiff.ts decodes in pieces. */
const TIFF_PAGES: Array<[string, TiffSpec]> = [
  ['uncompressed RGB, 7 rows a strip', { width: 37, height: 29, samples: 3, bits: 8, compression: 1, rowsPerStrip: 7 }],
  [
    'Deflate RGB with predictor 2, one strip',
    { width: 37, height: 29, samples: 3, bits: 8, compression: 8, predictor: true },
  ],
  ['Deflate gray, 16×16 tiles', { width: 37, height: 29, samples: 1, bits: 8, compression: 8, tile: 16 }],
  [
    'Deflate 16-bit big-endian gray, 5 rows a strip',
    { width: 37, height: 29, samples: 1, bits: 16, compression: 8, bigEndian: true, rowsPerStrip: 5 },
  ],
  ['PackBits RGB, 4 rows a strip', { width: 37, height: 29, samples: 3, bits: 8, compression: 32773, rowsPerStrip: 4 }],
  ['LZW gray, 3 rows a strip', { width: 37, height: 29, samples: 1, bits: 8, compression: 5, rowsPerStrip: 3 }],
  // 4 bytes a pixel: converted to RGBA in place, band by band.
  ['Deflate RGBA, 5 rows a strip', { width: 37, height: 29, samples: 4, bits: 8, compression: 8, rowsPerStrip: 5 }],
  [
    'uncompressed RGBA over two bands',
    { width: 1024, height: 300, samples: 4, bits: 8, compression: 1, rowsPerStrip: 64 },
  ],
]

describe('TIFF in pieces (strip by strip, tile by tile, RGBA in bands)', () => {
  it.each(TIFF_PAGES)("gives UTIF's own pixels for %s", async (_kind, spec) => {
    const bytes = tiffOf(spec)
    const decoded = await decodeImage(bytes, TEST_IMAGE_LIMITS)
    expect({ width: decoded.width, height: decoded.height }).toEqual({ width: spec.width, height: spec.height })
    const reference = utifRgba(bytes)
    expect(decoded.data.length).toBe(reference.length)
    expect(decoded.data.every((value, i) => value === reference[i])).toBe(true)
  })

  it('gives the event loop turns while a 1024×1024 RGB page of one Deflate strip decodes (3 MiB inflated, 4 MiB of RGBA)', async () => {
    const bytes = tiffOf({ width: 1024, height: 1024, samples: 3, bits: 8, compression: 8 })
    const { result, turns } = await turnsDuring(() => decodeImage(bytes, TEST_IMAGE_LIMITS))
    // The 3 MiB strip inflated in one native call (at most 4 MiB: milliseconds), then slices of at most 1 MiB
    // while converting the 4 MiB of RGBA.
    expect(turns).toBeGreaterThanOrEqual(3)
    const reference = utifRgba(bytes)
    expect(result.data.every((value, i) => value === reference[i])).toBe(true)
  })

  it('converts at most 128 KiB of RGBA between two turns (UTIF.toRGBA8 in bands of 32 rows of 1024 pixels)', async () => {
    const bytes = tiffOf({ width: 1024, height: 1024, samples: 1, bits: 8, compression: 8, predictor: true })
    const toRgba = UTIF.toRGBA8.bind(UTIF)
    let count: (units: number) => void = () => {}
    const spy = vi.spyOn(UTIF, 'toRGBA8').mockImplementation((img: UTIF.IFD) => {
      const rgba = toRgba(img)
      count(rgba.length)
      return rgba
    })
    try {
      const { result, longest, turns } = await longestStretchDuring((counted) => {
        count = counted
        return decodeImage(bytes, TEST_IMAGE_LIMITS)
      })
      // 4 MiB of RGBA: 32 bands (bands of 1 MiB before: ~4 ms of JavaScript each).
      expect(longest).toBeLessThanOrEqual(128 * 1024)
      expect(turns).toBeGreaterThanOrEqual(32)
      spy.mockRestore()
      const reference = utifRgba(bytes)
      expect(result.data.every((value, i) => value === reference[i])).toBe(true)
    } finally {
      spy.mockRestore()
    }
  })

  it("reads a strip's compressed bytes only as far as its rows can need: 20,000 one-row strips naming the same megabyte (issue 29)", async () => {
    const bytes = tiffSharedStrips(20_000, 1_000_000)
    // UTIF's per-strip decoder (not in its types), which tiff.ts calls for each strip with the bytes it may read.
    const decoder = UTIF.decode as unknown as { _decompress(...args: unknown[]): void }
    const decompress = decoder._decompress.bind(decoder)
    let read = 0
    const spy = vi.spyOn(decoder, '_decompress').mockImplementation((...args: unknown[]) => {
      read += args[4] as number
      return decompress(...args)
    })
    try {
      const decoded = await decodeImage(bytes, TEST_IMAGE_LIMITS)
      expect(decoded).toMatchObject({ width: 1, height: 20_000 })
      // Each one-byte strip: at most 8 bytes a byte, 4 a row and 1 KiB; as named, 20,000 × 1 MB = 20 GB.
      expect(read).toBeLessThanOrEqual(20_000 * (8 + 4 + 1024))
    } finally {
      spy.mockRestore()
    }
  })

  it('inflates 2000 corrupt one-row Deflate strips without a DecompressionStream each (a millisecond each to make)', async () => {
    const bytes = tiffSharedStrips(2000, 16)
    const view = new DataView(bytes.buffer)
    for (let i = 0; i < view.getUint16(8, true); i++)
      if (view.getUint16(10 + i * 12, true) === 259) view.setUint16(10 + i * 12 + 8, 8, true) // Deflate
    bytes.fill(0xff, bytes.length - 16) // not Deflate data: each strip fails at once
    const made = vi.spyOn(
      globalThis as unknown as { DecompressionStream: new (format: string) => object },
      'DecompressionStream',
    )
    try {
      expect(await decodeImage(bytes, TEST_IMAGE_LIMITS)).toMatchObject({ width: 1, height: 2000 })
      expect(made).not.toHaveBeenCalled()
    } finally {
      made.mockRestore()
    }
  })

  it('inflates 2000 one-row Deflate bomb strips (1 MiB of zeros each) to their row, without a DecompressionStream each', async () => {
    const bomb = deflateSync(new Uint8Array(2 ** 20), { level: 9 }) // zlib, as TIFF has it: ~1 KB
    const bytes = tiffSharedStrips(2000, bomb.length)
    const view = new DataView(bytes.buffer)
    for (let i = 0; i < view.getUint16(8, true); i++)
      if (view.getUint16(10 + i * 12, true) === 259) view.setUint16(10 + i * 12 + 8, 8, true) // Deflate
    bytes.set(bomb, bytes.length - bomb.length)
    const made = vi.spyOn(
      globalThis as unknown as { DecompressionStream: new (format: string) => object },
      'DecompressionStream',
    )
    const push = pako.Inflate.prototype.push
    let fed = 0
    const pushes = vi.spyOn(pako.Inflate.prototype, 'push').mockImplementation(function (
      this: InstanceType<typeof pako.Inflate>,
      data,
      mode,
    ) {
      fed += data.length
      return push.call(this, data, mode)
    })
    try {
      const decoded = await decodeImage(bytes, TEST_IMAGE_LIMITS)
      expect(decoded).toMatchObject({ width: 1, height: 2000 })
      expect(made).not.toHaveBeenCalled()
      // A one-byte row: pieces of a byte (at 1032:1, a byte may fill 1 KiB), through the block's header (~15 bytes)
      // to the first codes, which fill the row. As named, each strip is its whole ~1 KB bomb, inflated to 1 MiB.
      expect(fed).toBeLessThanOrEqual(2000 * 32)
    } finally {
      made.mockRestore()
      pushes.mockRestore()
    }
  })

  it("inflates a Deflate bomb strip only to the strip's size, in pieces", async () => {
    // 64 MiB of zeros in a strip of 1024×1024 gray: 1 MiB is kept, the rest never inflated.
    const bytes = tiffOf({ width: 1024, height: 1024, samples: 1, bits: 8, compression: 1 })
    const bomb = deflateSync(new Uint8Array(64 * 2 ** 20))
    const file = new Uint8Array(bytes.length - 1024 * 1024 + bomb.length)
    file.set(bytes.subarray(0, bytes.length - 1024 * 1024))
    file.set(bomb, bytes.length - 1024 * 1024)
    const view = new DataView(file.buffer)
    for (let i = 0; i < view.getUint16(8, true); i++) {
      const at = 10 + i * 12
      if (view.getUint16(at, true) === 259) view.setUint16(at + 8, 8, true)
      if (view.getUint16(at, true) === 279) view.setUint32(at + 8, bomb.length, true)
    }
    const { result, turns } = await turnsDuring(() => decodeImage(file, TEST_IMAGE_LIMITS))
    expect(result).toMatchObject({ width: 1024, height: 1024 })
    expect(result.data.every((value, i) => (i % 4 === 3 ? value === 255 : value === 0))).toBe(true)
    expect(turns).toBeGreaterThanOrEqual(4)
  })
  it.each(TIFF_PAGES.filter(([, spec]) => !spec.tile))(
    "gives UTIF's own pixels for %s in bands, strip by strip (tiffBands, image → PNG's way for a large page)",
    async (_kind, spec) => {
      const bytes = tiffOf(spec)
      const bands = tiffBands(bytes, 0)!
      expect({ width: bands.width, height: bands.height }).toEqual({ width: spec.width, height: spec.height })
      const rows: Uint8Array[] = []
      // Read twice, as image → PNG does: the same rows each time.
      for (let reading = 0; reading < 2; reading++) {
        rows.length = 0
        for await (const band of bands.bands()) for (let r = 0; r < band.rows; r++) rows.push(band.row(r).slice())
        expect(Buffer.concat(rows).equals(Buffer.from(utifRgba(bytes)))).toBe(true)
      }
    },
  )

  it('reads a tiled TIFF or a page of at most 16 MiB of RGBA whole, not in bands', () => {
    expect(
      tiffBands(tiffOf({ width: 37, height: 29, samples: 1, bits: 8, compression: 8, tile: 16 }), 0),
    ).toBeUndefined()
    expect(tiffBands(tiffOf({ width: 37, height: 29, samples: 4, bits: 8, compression: 1 }))).toBeUndefined()
  })

  it("converts a TIFF whose RGBA passes 16 MiB to PNG in bands: the whole page's IHDR and zlib stream, to the byte", async () => {
    const spec: TiffSpec = { width: 2100, height: 2050, samples: 4, bits: 8, compression: 1, rowsPerStrip: 16 }
    expect(spec.width * spec.height * 4).toBeGreaterThan(TIFF_BANDED_RGBA_BYTES)
    const bytes = tiffOf(spec)
    expect(tiffBands(bytes)).toBeDefined()
    const [output] = await convertAll(imageToPng, inputFromBytes('large.tif', bytes), testContext())
    expect(output!.metadata).toMatchObject({ width: spec.width, height: spec.height, source_format: 'tiff' })
    const whole = await pngChunks(encodePng(await decodeImage(bytes, TEST_IMAGE_LIMITS)))
    const expected = new Uint8Array(await new Response(whole.stream()).arrayBuffer())
    const got = await outputBytes(output!)
    // The same IHDR and the same zlib stream, byte for byte. Where the stream is cut into IDAT chunks is not the
    // picture's: each chunk is what the compressor had ready when the stream was read, which follows the timing of
    // the encoder's writes against the reads (the whole page's path cuts its stream the same way run after run, the
    // bands' way elsewhere, however the bands are cut).
    expect(pngParts(got)).toEqual(pngParts(expected))
  })
})

describe('PNG rows in pieces (inflated and unfiltered in batches)', () => {
  it('gives the event loop turns while a 1024×1024 RGBA PNG decodes, and the same pixels', async () => {
    const source: RawImage = { width: 1024, height: 1024, channels: 4, data: noise(1024 * 1024 * 4) }
    const png = await encodePngBytes(source, { keepChannels: true })
    const { result: pixels, turns } = await turnsDuring(() => decodePngRows(png))
    try {
      // 4 MiB of filtered rows: at least 3 turns while inflating and 3 between batches of rows.
      expect(turns).toBeGreaterThanOrEqual(6)
      for (let r = 0; r < 1024; r++)
        expect(pixels!.rows.row(r).every((value, i) => value === source.data[r * 4096 + i])).toBe(true)
    } finally {
      pixels?.release()
    }
  })
})

/** The PNG again with its IDAT stream in chunks of `size` bytes (CRCs zero: the rows decoder does not read them). */
function rechunked(png: Uint8Array, size: number): Uint8Array {
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength)
  const idat: number[] = []
  let ihdr: Uint8Array = new Uint8Array()
  for (let at = 8; at < png.length; at += 12 + view.getUint32(at)) {
    const type = String.fromCharCode(...png.subarray(at + 4, at + 8))
    if (type === 'IHDR') ihdr = png.subarray(at, at + 25)
    if (type === 'IDAT') idat.push(...png.subarray(at + 8, at + 8 + view.getUint32(at)))
  }
  const chunks: number[] = []
  for (let at = 0; at < idat.length; at += size) {
    const data = idat.slice(at, at + size)
    chunks.push(0, 0, 0, data.length, 0x49, 0x44, 0x41, 0x54, ...data, 0, 0, 0, 0)
  }
  return Uint8Array.from([...png.subarray(0, 8), ...ihdr, ...chunks, 0, 0, 0, 0, 0x49, 0x45, 0x4e, 0x44, 0, 0, 0, 0])
}

describe('PNG IDAT chunks, however small (issue 29)', () => {
  it('feeds the inflater as many pieces for one-byte IDAT chunks as for one chunk: a turn a piece, not a turn a chunk', async () => {
    // 1200 × 1000 RGBA (4.8 MB of rows: inflated in pieces), every row the same noise: ~10 KB of Deflate.
    const row = noise(1200 * 4)
    const source: RawImage = {
      width: 1200,
      height: 1000,
      channels: 4,
      data: Uint8Array.from({ length: 1200 * 4 * 1000 }, (_, i) => row[i % row.length]!),
    }
    const png = await encodePngBytes(source, { keepChannels: true })
    const split = rechunked(png, 1)
    const whole = await turnsDuring(() => decodePngRows(png))
    whole.result?.release()
    const { result: pixels, turns } = await turnsDuring(() => decodePngRows(split))
    try {
      // One turn for each of ~10,000 chunks before; now as many as for the whole stream, give or take a few.
      expect(turns).toBeLessThanOrEqual(whole.turns + 8)
      for (let r = 0; r < 1000; r += 97) expect(pixels!.rows.row(r).every((value, i) => value === row[i])).toBe(true)
    } finally {
      pixels?.release()
    }
  })
})

describe('GIF LZW data that decodes to nothing (issue 29)', () => {
  it('pauses while reading a megabyte of clear codes, though they fill no pixel', async () => {
    // A 1 × 1 frame whose LZW data (minimum code size 8: 9-bit codes, clear = 256) is 1 MiB of clear codes, then end.
    const clears = gifCodes(
      Array.from({ length: (8 * 2 ** 20) / 9 }, () => 256),
      9,
    )
    const blocks: number[] = []
    for (let at = 0; at < clears.length; at += 255) {
      const block = clears.subarray(at, at + 255)
      blocks.push(block.length, ...block)
    }
    const palette = new Array(256 * 3).fill(0)
    const gif = Uint8Array.from(
      [...'GIF89a']
        .map((c) => c.charCodeAt(0))
        .concat([1, 0, 1, 0, 0xf7, 0, 0], palette, [0x2c, 0, 0, 0, 0, 1, 0, 1, 0, 0, 8], blocks, [0, 0x3b]),
    )
    const { result, turns } = await turnsDuring(() => decodeImage(gif, TEST_IMAGE_LIMITS))
    expect(result).toMatchObject({ width: 1, height: 1 })
    // 1 MiB read: a pause every 512 KiB of input at least.
    expect(turns).toBeGreaterThanOrEqual(2)
  })
})

/** Codes of `bits` each, packed from the least significant bit as GIF packs them. */
function gifCodes(codes: readonly number[], bits: number): Uint8Array {
  const out: number[] = []
  let pending = 0
  let count = 0
  for (const code of codes) {
    pending |= code << count
    count += bits
    while (count >= 8) {
      out.push(pending & 0xff)
      pending >>>= 8
      count -= 8
    }
  }
  if (count > 0) out.push(pending & 0xff)
  return Uint8Array.from(out)
}

describe('BMP rows in bands', () => {
  it('gives the event loop turns while a 1024×1024 32-bit BMP decodes, and the same pixels', async () => {
    const [width, height] = [1024, 1024]
    const pixels = noise(width * height * 4)
    const bmp = new Uint8Array(54 + pixels.length)
    const view = new DataView(bmp.buffer)
    bmp.set([0x42, 0x4d])
    view.setUint32(2, bmp.length, true)
    view.setUint32(10, 54, true)
    view.setUint32(14, 40, true)
    view.setInt32(18, width, true)
    view.setInt32(22, -height, true)
    view.setUint16(26, 1, true)
    view.setUint16(28, 32, true)
    bmp.set(pixels, 54)
    const { result, turns } = await turnsDuring(() => decodeImage(bmp, TEST_IMAGE_LIMITS))
    expect(turns).toBeGreaterThanOrEqual(3)
    // BGRA in the file, RGBA decoded.
    expect(result.data.every((value, i) => value === pixels[i % 4 === 3 ? i : i - (i % 4) + 2 - (i % 4)])).toBe(true)
  })
})

/** A GIF of `width`×`height` noise indices on a screen of its own size (or `screen`), written by omggif's writer. */
function gifOf(
  width: number,
  height: number,
  options: { interlaced?: boolean; transparent?: number; screen?: [number, number]; at?: [number, number] } = {},
): Uint8Array {
  const palette = Array.from({ length: 256 }, (_, i) => (i * 0x010203 * 37) & 0xffffff)
  const [screenWidth, screenHeight] = options.screen ?? [width, height]
  const buffer = new Uint8Array(width * height * 2 + 4096)
  const writer = new GifWriter(buffer, screenWidth, screenHeight, { palette })
  const [x, y] = options.at ?? [0, 0]
  writer.addFrame(x, y, width, height, noise(width * height, 7), {
    ...(options.interlaced ? { interlaced: true } : {}),
    ...(options.transparent === undefined ? {} : { transparent: options.transparent }),
  })
  return buffer.subarray(0, writer.end())
}

/** omggif's own one-call decodeAndBlitFrameRGBA: the pixels before this change. */
function omggifRgba(bytes: Uint8Array): Uint8Array {
  const reader = new GifReader(bytes)
  const data = new Uint8Array(reader.width * reader.height * 4)
  reader.decodeAndBlitFrameRGBA(0, data)
  return data
}

describe('GIF first frame in pieces (LZW and painting in slices)', () => {
  it.each<[string, Uint8Array]>([
    ['a plain frame', gifOf(37, 29)],
    ['an interlaced frame', gifOf(37, 29, { interlaced: true })],
    [
      'a frame with a transparent index, smaller than its screen and placed inside it',
      gifOf(20, 11, { transparent: 3, screen: [37, 29], at: [5, 9] }),
    ],
  ])("gives omggif's own pixels for %s", async (_kind, bytes) => {
    const decoded = await decodeImage(bytes, TEST_IMAGE_LIMITS)
    const reference = omggifRgba(bytes)
    expect(decoded.data.length).toBe(reference.length)
    expect(decoded.data.every((value, i) => value === reference[i])).toBe(true)
  })

  it('gives the event loop turns while a 2048×1024 GIF decodes (2 Mi pixels)', async () => {
    const bytes = gifOf(2048, 1024)
    const { result, turns } = await turnsDuring(() => decodeImage(bytes, TEST_IMAGE_LIMITS))
    // Slices of 512 Ki pixels: 3 while decoding the LZW data, 3 while painting.
    expect(turns).toBeGreaterThanOrEqual(6)
    const reference = omggifRgba(bytes)
    expect(result.data.every((value, i) => value === reference[i])).toBe(true)
  })
})
