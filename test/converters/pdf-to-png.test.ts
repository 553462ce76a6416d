// PDF → PNG pages with PDFium in WASM, on real PDFs made by LibreOffice.
import { describe, expect, it } from 'vitest'
import { pageScale, pdfToPng } from '../../worker/converters/pdf-to-png'
import { PDFIUM_HEAP_MAX_BYTES, pdfiumHeapBytes, REUSE_MAX_HEAP_BYTES, STRIP_BYTES } from '../../worker/engines/pdfium'
import { decodeImage } from '../../worker/engines/image/decode'
import { readPngHeader } from '../../worker/engines/png/encode'
import { encrypted, threePages } from '../fixtures/pdf/pdfs'
import { callJson } from '../support/api'
import { signUp } from '../support/accounts'
import { convertAll, inputFromBytes, outputBytes, TEST_IMAGE_LIMITS, testContext } from '../support/conversion'
import { downloadBytes, uploaded } from '../support/files'
import { turnsDuring } from '../support/turns'
import {
  pdfAnnotationFills,
  pdfFlateBomb,
  pdfFunctionShading,
  pdfGlyphPile,
  pdfJpegRepeatedScans,
  pdfMeshShading,
  pdfNestedForms,
  pdfPatternCells,
  pdfSoftMaskRedraw,
  pdfTintImage,
  pdfType3Glyphs,
  pdfWholePageFills,
} from '../hostile/corpus'
import { buildPdf } from '../support/pdf'
import { pattern_jpg } from '../fixtures/images/images'

/** Share of dark pixels in a rectangle of the rendered page (0..1). */
async function inkIn(png: Uint8Array, box: { x0: number; y0: number; x1: number; y1: number }) {
  const image = await decodeImage(png, TEST_IMAGE_LIMITS)
  let dark = 0
  let total = 0
  for (let y = Math.floor(box.y0 * image.height); y < box.y1 * image.height; y++) {
    for (let x = Math.floor(box.x0 * image.width); x < box.x1 * image.width; x++) {
      const i = (y * image.width + x) * 4
      if (image.data[i]! < 128) dark++
      total++
    }
  }
  return dark / total
}

describe('pdf-to-png', () => {
  it('plans the pages in ranges and records page_count', async () => {
    const plan = await pdfToPng.plan!(
      inputFromBytes('three.pdf', threePages),
      testContext({ settings: { CONVERT_PAGES_PER_STEP: 2 } }),
    )
    expect(plan).toEqual({
      total: 3,
      parts: [
        { start: 0, end: 2 },
        { start: 2, end: 3 },
      ],
      sourceMetadata: { page_count: 3 },
    })
  })

  it('renders each page at PDF_DPI, in order, with text where the text is', async () => {
    const outputs = await convertAll(pdfToPng, inputFromBytes('three.pdf', threePages), testContext())
    expect(outputs.map((output) => [output.index, output.total, output.extension])).toEqual([
      [0, 3, '.png'],
      [1, 3, '.png'],
      [2, 3, '.png'],
    ])
    const first = await outputBytes(outputs[0]!)
    // A4 at 150 dpi is 1240 × 1754 pixels (PDFium floors the page's points first: 1239 × 1752); a text page
    // needs no colour.
    expect(readPngHeader(first)).toMatchObject({ width: 1239, height: 1752, colorType: 0 })
    expect(outputs[0]!.metadata).toEqual({ page: 1, width: 1239, height: 1752, dpi: 150 })
    expect(await inkIn(first, { x0: 0.05, y0: 0.03, x1: 0.7, y1: 0.12 })).toBeGreaterThan(0.005)
    expect(await inkIn(first, { x0: 0.1, y0: 0.5, x1: 0.9, y1: 0.9 })).toBe(0)
  })

  it('renders only the part it is given', async () => {
    const outputs = await convertAll(
      pdfToPng,
      inputFromBytes('three.pdf', threePages),
      testContext({ part: { start: 1, end: 3 } }),
    )
    expect(outputs.map((output) => output.metadata?.page)).toEqual([2, 3])
  })

  it('lowers the DPI of pages that would pass PDF_MAX_PAGE_PIXELS', async () => {
    expect(pageScale({ width: 595, height: 842 }, 150, 40_000_000)).toBeCloseTo(150 / 72)
    const [output] = await convertAll(
      pdfToPng,
      inputFromBytes('three.pdf', threePages),
      testContext({ part: { start: 0, end: 1 }, settings: { PDF_MAX_PAGE_PIXELS: 100_000 } }),
    )
    const { width, height } = output!.metadata as { width: number; height: number }
    expect(width * height).toBeLessThanOrEqual(100_000)
    expect(width * height).toBeGreaterThan(90_000)
  })

  it('keeps A4 at 150 dpi within the default PDF_MAX_PAGE_PIXELS, and lowers the DPI of an A3 page', async () => {
    const pdf = buildPdf([{ width: 842, height: 1191, content: '0 0 0 rg 0 0 10 10 re f' }])
    const [output] = await convertAll(pdfToPng, inputFromBytes('a3.pdf', pdf), testContext())
    const { width, height, dpi } = output!.metadata as { width: number; height: number; dpi: number }
    expect(width * height).toBeLessThanOrEqual(2_200_000)
    expect(dpi).toBe(107)
    expect(pageScale({ width: 595, height: 842 }, 150, 2_200_000)).toBeCloseTo(150 / 72)
  })

  it('refuses a PDF over PDF_MAX_BYTES before reading it, with 413', async () => {
    const failure = await pdfToPng.plan!(
      inputFromBytes('big.pdf', threePages),
      testContext({ settings: { PDF_MAX_BYTES: 1000 } }),
    ).catch((error) => error)
    expect(failure).toMatchObject({ name: 'ConversionError', code: 'FILE_TOO_LARGE', retryable: false })
    expect(failure.message).toBe(
      `"big.pdf" is ${threePages.byteLength} bytes; PDF pages are rendered from PDFs of at most 1000 bytes`,
    )
  })

  it('fails a PDF whose stored bytes are fewer than its recorded size, without reading past them', async () => {
    const input = { ...inputFromBytes('short.pdf', threePages), size: threePages.byteLength + 10 }
    await expect(pdfToPng.plan!(input, testContext())).rejects.toMatchObject({
      retryable: false,
      message: 'the PDF cannot be read: the file is shorter than its recorded size',
    })
  })

  it('renders a page taller than one strip with its ink in the right rows', async () => {
    // 1239 px wide at 150 dpi: 2 MiB strips hold 423 rows, so this 3000-row page takes 8 strips.
    const pdf = buildPdf([
      { width: 595, height: 1440, content: '0 0 0 rg 0 0 595 100 re f 0 0 0 rg 0 1340 595 100 re f' },
    ])
    const [output] = await convertAll(
      pdfToPng,
      inputFromBytes('tall.pdf', pdf),
      testContext({ settings: { PDF_MAX_PAGE_PIXELS: 4_000_000 } }),
    )
    const png = await outputBytes(output!)
    const { width, height } = readPngHeader(png)!
    expect(width * 4 * height).toBeGreaterThan(STRIP_BYTES)
    expect(await inkIn(png, { x0: 0, y0: 0, x1: 1, y1: 0.06 })).toBe(1)
    expect(await inkIn(png, { x0: 0, y0: 0.08, x1: 1, y1: 0.92 })).toBe(0)
    expect(await inkIn(png, { x0: 0, y0: 0.94, x1: 1, y1: 1 })).toBe(1)
  })

  it('draws and encodes a page strip by strip with a turn of the event loop between them', async () => {
    // 1239 × 3000 px: 8 strips of 2 MiB, and 3.5 MiB of gray rows: a turn after every 512 KiB of them.
    const pdf = buildPdf([{ width: 595, height: 1440, content: '0 0 0 rg 0 0 595 100 re f' }])
    const input = inputFromBytes('tall.pdf', pdf)
    const { result: outputs, turns } = await turnsDuring(() =>
      convertAll(pdfToPng, input, testContext({ settings: { PDF_MAX_PAGE_PIXELS: 4_000_000 } })),
    )
    expect(outputs).toHaveLength(1)
    expect(turns).toBeGreaterThanOrEqual(6)
  })

  it("measures a Flate bomb's streams in slices with a turn of the event loop between them, then refuses it", async () => {
    // 64 KB inflating to 64 MiB: measured up to PDF_MAX_BYTES (24 MiB) of output, a turn every 256 KiB of work.
    const input = inputFromBytes('bomb.pdf', await pdfFlateBomb())
    const { result: failure, turns } = await turnsDuring(() =>
      pdfToPng.plan!(input, testContext()).catch((error) => error),
    )
    expect(failure).toMatchObject({ name: 'ConversionError', retryable: false })
    expect(failure.message).toMatch(/object 4's stream decodes to more than \d+ bytes/)
    expect(turns).toBeGreaterThanOrEqual(20)
  })

  it.each([
    ['without a password', {}, 'password-protected PDF: give its password as options.password'],
    ['with a wrong one', { password: 'nope' }, 'password-protected PDF: the password is wrong'],
  ])('refuses an encrypted PDF %s', async (_case, options, message) => {
    await expect(
      pdfToPng.plan!(inputFromBytes('locked.pdf', encrypted), testContext({ options })),
    ).rejects.toMatchObject({ retryable: false, message })
  })

  it('opens an encrypted PDF with its password', async () => {
    const outputs = await convertAll(
      pdfToPng,
      inputFromBytes('locked.pdf', encrypted),
      testContext({ options: { password: 's3cret' }, part: { start: 0, end: 1 } }),
    )
    expect(outputs).toHaveLength(1)
  })

  it.each([
    ['truncated', threePages.slice(0, 2000)],
    ['not a PDF', new TextEncoder().encode('%PDF-1.7 but then nothing of the sort')],
  ])("fails a %s PDF permanently with the engine's reason", async (_case, bytes) => {
    const failure = await pdfToPng.plan!(inputFromBytes('bad.pdf', bytes), testContext()).catch((error) => error)
    expect(failure).toMatchObject({ name: 'ConversionError', retryable: false })
    expect(failure.message).toMatch(/^the PDF cannot be read: /)
  })

  it('refuses more pages than PDF_MAX_PAGES', async () => {
    await expect(
      pdfToPng.plan!(inputFromBytes('three.pdf', threePages), testContext({ settings: { PDF_MAX_PAGES: 2 } })),
    ).rejects.toThrow('the PDF has 3 pages; the limit is 2')
  })
})

describe('pdf-to-png on page features', () => {
  it('renders a rotated page with its width and height swapped', async () => {
    const pdf = buildPdf([{ width: 200, height: 100, rotate: 90, content: '0 0 0 rg 0 0 100 100 re f' }])
    const [output] = await convertAll(
      pdfToPng,
      inputFromBytes('rotated.pdf', pdf),
      testContext({ settings: { PDF_DPI: 72 } }),
    )
    expect(readPngHeader(await outputBytes(output!))).toMatchObject({ width: 100, height: 200 })
  })

  it('renders an image-heavy page in colour, and a black-and-white page as grayscale', async () => {
    const pdf = buildPdf([
      {
        width: 320,
        height: 240,
        content: 'q 320 0 0 240 0 0 cm /Im0 Do Q',
        jpeg: { bytes: pattern_jpg, width: 64, height: 48 },
      },
      { width: 320, height: 240, content: '0 0 0 rg 20 20 100 100 re f' },
    ])
    const outputs = await convertAll(
      pdfToPng,
      inputFromBytes('mixed.pdf', pdf),
      testContext({ settings: { PDF_DPI: 72 } }),
    )
    const [photo, drawing] = await Promise.all(outputs.map(outputBytes))
    expect(readPngHeader(photo!)).toMatchObject({ width: 320, height: 240, colorType: 2 })
    expect(readPngHeader(drawing!)).toMatchObject({ width: 320, height: 240, colorType: 0 })
    expect(await inkIn(drawing!, { x0: 0.1, y0: 0.5, x1: 0.3, y1: 0.85 })).toBeGreaterThan(0.9)
  })
})

describe('the PDFium instance', () => {
  it('is kept while its heap stays under 32 MiB, and made anew after a document that grew it past that', async () => {
    const onePage = testContext({ part: { start: 0, end: 1 }, settings: { PDF_MAX_BYTES: 64 * 2 ** 20 } })
    await convertAll(pdfToPng, inputFromBytes('three.pdf', threePages), onePage)
    const kept = await pdfiumHeapBytes()
    expect(kept).toBeGreaterThan(0)
    expect(kept).toBeLessThanOrEqual(REUSE_MAX_HEAP_BYTES)
    // 40 MB of an image the page never draws: the PDF itself fills the heap.
    const padding = new Uint8Array(40 * 2 ** 20)
    const big = buildPdf([
      { width: 200, height: 200, content: '0 0 0 rg 0 0 10 10 re f', jpeg: { bytes: padding, width: 1, height: 1 } },
    ])
    await convertAll(pdfToPng, inputFromBytes('big.pdf', big), onePage)
    expect(await pdfiumHeapBytes()).toBe(0)
    await convertAll(pdfToPng, inputFromBytes('three.pdf', threePages), onePage)
    const fresh = await pdfiumHeapBytes()
    expect(fresh).toBeGreaterThan(0)
    expect(fresh).toBeLessThanOrEqual(REUSE_MAX_HEAP_BYTES)
  })
})

describe("PDFium's heap", () => {
  it('refuses a page whose forms draw each other 100 × 100 times by counting them, before PDFium loads it', async () => {
    // 16 KB make 10 million objects, which PDFium builds while it loads the page: at 30 × 30 its heap grew to
    // 275 MiB, at 100 × 100 past 2 GiB. The content count (engines/pdf-content.ts) multiplies each form by its
    // references first: 100 + 100 × (100 + 100 × 1000).
    const bomb = pdfNestedForms(100, 1000)
    expect(bomb.byteLength).toBeLessThan(17 * 1024)
    const refused = await convertAll(pdfToPng, inputFromBytes('forms.pdf', bomb), testContext()).catch((error) => error)
    expect(refused).toMatchObject({
      name: 'ConversionError',
      code: 'CONVERSION_FAILED',
      retryable: false,
      message:
        'page 1 would draw 10010100 objects and glyphs and 0.0 times its area again (glyphs, soft-mask groups, pattern cells, Type 3 procedures, shading functions and meshes, each time they are drawn): 13650.1 areas of the page at 3000 pixels an object or a glyph; at most 300 are drawn (areas of PDF_MAX_PAGE_PIXELS)',
    })
    expect(await pdfiumHeapBytes()).toBeLessThanOrEqual(REUSE_MAX_HEAP_BYTES)
  })

  it('is capped at 100 MiB: with the count lifted, the same page is refused by the cap, and the next PDF converts', async () => {
    // PDF_MAX_PAGE_PIXELS of 1.1 billion lets the count take 11 million objects a page, so PDFium builds them. Capped,
    // its allocation fails and it aborts: the cap holds what no count of ours sees.
    const onePage = testContext({ part: { start: 0, end: 1 }, settings: { PDF_MAX_PAGE_PIXELS: 1_100_000_000 } })
    const bomb = pdfNestedForms(100, 1000)
    const refused = await convertAll(pdfToPng, inputFromBytes('forms.pdf', bomb), onePage).catch((error) => error)
    expect(refused).toMatchObject({
      name: 'ConversionError',
      code: 'CONVERSION_FAILED',
      retryable: false,
      message: expect.stringMatching(
        /^reading this PDF needs more memory than PDFium may take: its heap would grow to \d+ MiB, past the 100 MiB it may take \(a Worker has 128 MB\)$/,
      ),
    })
    expect(PDFIUM_HEAP_MAX_BYTES).toBe(100 * 2 ** 20)
    // The aborted instance is gone; a new one draws the next document.
    expect(await pdfiumHeapBytes()).toBe(0)
    const [page] = await convertAll(pdfToPng, inputFromBytes('three.pdf', threePages), onePage)
    expect(readPngHeader(await outputBytes(page!))).toMatchObject({ colorType: expect.any(Number) })
    expect(await pdfiumHeapBytes()).toBeLessThanOrEqual(REUSE_MAX_HEAP_BYTES)
  })

  it('draws forms that draw each other within the cap: 10 × 10 references of 100 fills', async () => {
    const [page] = await convertAll(pdfToPng, inputFromBytes('forms.pdf', pdfNestedForms(10, 100)), testContext())
    expect(readPngHeader(await outputBytes(page!))).toMatchObject({ width: 1275, height: 1650 })
  })
})

describe("what a page's content draws, counted before PDFium loads the page (engines/pdf-content.ts)", () => {
  it('draws 150,000 glyphs piled on one spot and refuses a million, each glyph counted', async () => {
    // 150,015 objects and glyphs at 3,000 pixels of PDF_MAX_PAGE_PIXELS' 2.2 million (204.6 areas) and 150,000 em
    // squares of 12 pt (44.6 pages of area): 249.2 of the 300 areas. A million: 1,660.9.
    const [page] = await convertAll(pdfToPng, inputFromBytes('pile.pdf', await pdfGlyphPile(150_000)), testContext())
    expect(readPngHeader(await outputBytes(page!))).toMatchObject({ width: 1275, height: 1650 })
    const refused = await convertAll(
      pdfToPng,
      inputFromBytes('pile.pdf', await pdfGlyphPile(1_000_000)),
      testContext(),
    ).then(
      () => undefined,
      (error) => error,
    )
    expect(refused).toMatchObject({
      name: 'ConversionError',
      code: 'CONVERSION_FAILED',
      retryable: false,
      message:
        'page 1 would draw 1000100 objects and glyphs and 297.1 times its area again (glyphs, soft-mask groups, pattern cells, Type 3 procedures, shading functions and meshes, each time they are drawn): 1660.9 areas of the page at 3000 pixels an object or a glyph; at most 300 are drawn (areas of PDF_MAX_PAGE_PIXELS)',
    })
  })

  it("refuses what the walk of PDFium's objects counts as little: Type 3 procedures, cells, masks, functions, meshes", async () => {
    // bench:pdf-draw-cost: 400 Type 3 glyphs of 600 pt took 6.4 s and the walk counted 0.7 areas; 10 fills under a
    // 1,000-fill soft mask took 4.6 s at 1.1 MP (issue 29) and counted 160.
    const cases: [string, Uint8Array, RegExp][] = [
      [
        'type3.pdf',
        await pdfType3Glyphs(400, 10),
        /^page 1 would draw 4401 objects and glyphs and 3268\.0 times its area again/,
      ],
      [
        'cells.pdf',
        pdfPatternCells(100, 100),
        /^page 1 would draw 10100 objects and glyphs and 10000\.0 times its area again/,
      ],
      [
        'mask.pdf',
        pdfSoftMaskRedraw(10, 1000),
        /^page 1 would draw 10010 objects and glyphs and 10000\.0 times its area again/,
      ],
      ['function.pdf', await pdfFunctionShading(1_200), /^page 1 would draw 1 objects and glyphs and 2433\.0 times/],
      ['mesh.pdf', await pdfMeshShading(400), /^page 1 would draw 1 objects and glyphs and 2400\.0 times/],
      ['tint.pdf', await pdfTintImage(1000, 600), /: 2294\.5 areas of the page/],
    ]
    for (const [name, bytes, reason] of cases) {
      const refused = await convertAll(pdfToPng, inputFromBytes(name, bytes), testContext()).then(
        () => undefined,
        (error) => error,
      )
      expect(refused).toMatchObject({
        name: 'ConversionError',
        retryable: false,
        message: expect.stringMatching(reason),
      })
    }
    // The same drawings at small sizes draw: 1,000 glyphs of 12 pt, 4 cells of 10 fills, 4 fills under 10, a function
    // of 30 operators (93 areas), 10 triangles (60), a tint of 3 operators on 1 MP (110).
    for (const bytes of [
      await pdfType3Glyphs(1_000, 10, { points: 12 }),
      pdfPatternCells(4, 10),
      pdfSoftMaskRedraw(4, 10),
      await pdfFunctionShading(30),
      await pdfMeshShading(10),
      await pdfTintImage(1000, 3),
    ]) {
      const [page] = await convertAll(pdfToPng, inputFromBytes('small.pdf', bytes), testContext())
      expect(readPngHeader(await outputBytes(page!))).toMatchObject({ width: 1275, height: 1650 })
    }
  })
})

describe('PDF → PNG through the pipeline', () => {
  it('makes one PNG per page, named "<name> (<n> of <m>)" as the seed says, ordered, each the child of the PDF', async () => {
    const user = await signUp()
    const pdf = await uploaded(user, 'Report.pdf', threePages)
    const res = await callJson('POST', `/files/${pdf._id}/convert`, { token: user.token })
    expect(res.status).toBe(200)
    // The seed (SPEC.md, files.name): 'Converted files are named "<name> (<n> of <m>)"': no extension in the name.
    expect(res.body.map((file) => [file.name, file.extension, file.parent_file, file.part_index])).toEqual([
      ['Report (1 of 3)', '.png', pdf._id, 0],
      ['Report (2 of 3)', '.png', pdf._id, 1],
      ['Report (3 of 3)', '.png', pdf._id, 2],
    ])
    const source = await callJson('GET', `/files/${pdf._id}`, { token: user.token })
    expect(source.body.metadata).toEqual({ page_count: 3 })
  })

  it('fans a 23-page PDF out into 3 queue steps of 10 pages and answers the pages in order', async () => {
    // Page n has one black bar, 8n points from the left edge, so each PNG shows which page it is.
    const pages = Array.from({ length: 23 }, (_, i) => ({
      width: 200,
      height: 100,
      content: `0 0 0 rg ${8 * (i + 1)} 0 4 100 re f`,
    }))
    const user = await signUp()
    const pdf = await uploaded(user, 'Long.pdf', buildPdf(pages))
    const res = await callJson('POST', `/files/${pdf._id}/convert`, { token: user.token })
    expect(res.status).toBe(200)
    expect(res.body.map((file) => [file.name, file.part_index, file.metadata.page])).toEqual(
      Array.from({ length: 23 }, (_, i) => [`Long (${i + 1} of 23)`, i, i + 1]),
    )
    const [job] = (await callJson('GET', `/files/${pdf._id}/jobs`, { token: user.token })).body
    // The planning step (split into parts), then one step per range of CONVERT_PAGES_PER_STEP pages (the steps
    // were made together: their listed order says nothing, so they are sorted by range here).
    const pdfSteps = job!.steps
      .filter((step) => step.converter === 'pdf-to-png')
      .sort(
        (a: { part: { start: number } | null }, b: { part: { start: number } | null }) =>
          (a.part?.start ?? -1) - (b.part?.start ?? -1),
      )
    expect(pdfSteps.map((step) => [step.part, step.status])).toEqual([
      [null, 'split'],
      [{ start: 0, end: 10 }, 'done'],
      [{ start: 10, end: 20 }, 'done'],
      [{ start: 20, end: 23 }, 'done'],
    ])
    const firstInkColumns = await Promise.all(
      res.body.map(async (file) => {
        const image = await decodeImage(
          (await downloadBytes(`/files/${file._id}/download`, { token: user.token })).bytes,
          TEST_IMAGE_LIMITS,
        )
        for (let x = 0; x < image.width; x++)
          if (image.data[(50 * image.width + x) * 4]! < 128) return Math.round((x * 72) / 150)
        return -1
      }),
    )
    expect(firstInkColumns).toEqual(Array.from({ length: 23 }, (_, i) => 8 * (i + 1)))
  })

  it('refuses a page drawing a JPEG of more than 100 scans before PDFium decodes it, and draws the same JPEG of 5', async () => {
    // Issue 29: each scan is a pass of libjpeg over the whole image (jpeg-scans.jpg took 25 s). PDFium's libjpeg has
    // no scan limit either: the page's JPEG is counted as the image engine counts it (jpeg-end.ts).
    const refused = await convertAll(
      pdfToPng,
      inputFromBytes('scans.pdf', pdfJpegRepeatedScans(1000)),
      testContext({ settings: { PDF_DPI: 72 } }),
    ).catch((error) => error)
    expect(refused).toMatchObject({
      name: 'ConversionError',
      code: 'CONVERSION_FAILED',
      retryable: false,
      message: 'page 1 holds a JPEG image of 1002 scans; at most 100 are decoded (each is a pass over the whole image)',
    })
    const [page] = await convertAll(
      pdfToPng,
      inputFromBytes('scans.pdf', pdfJpegRepeatedScans(3)),
      testContext({ settings: { PDF_DPI: 72 } }),
    )
    expect(readPngHeader(await outputBytes(page!))).toMatchObject({ width: 846, height: 124 })
  })

  it('refuses a page of 20,000 whole-page fills before PDFium draws it, its painted pixels counted exactly', async () => {
    // Issue 29: a page's bytes bound its objects, not their work. Each of these 23-byte fills paints every pixel
    // (0.4 ms at 2.2 MP): the 8.8 MB a page may hold would be 150–194 s of CPU, past the step's 60 s cpu_ms.
    const refused = await convertAll(
      pdfToPng,
      inputFromBytes('fills.pdf', pdfWholePageFills(20_000)),
      testContext(),
    ).catch((error) => error)
    expect(refused).toMatchObject({
      name: 'ConversionError',
      code: 'CONVERSION_FAILED',
      retryable: false,
      // 20,000 × (1275 × 1650 pixels + 3000 an object), against 300 × PDF_MAX_PAGE_PIXELS (2,200,000).
      message:
        "page 1 would paint 42135.0 megapixels (each object's box, weighted by its kind); at most 660.0 are painted (300 times PDF_MAX_PAGE_PIXELS)",
    })
  })

  it('draws 298 whole-page fills, the most a page of PDF_MAX_PAGE_PIXELS takes, and refuses 299', async () => {
    // At 72 dpi a point is a pixel: each fill paints the page's 484,704 pixels, and counts 3000 more as an object.
    // 298 × 487,704 is within 300 × 484,704; 299 × 487,704 (145,823,496) is not.
    const settings = { PDF_DPI: 72, PDF_MAX_PAGE_PIXELS: 612 * 792 }
    const [page] = await convertAll(
      pdfToPng,
      inputFromBytes('fills.pdf', pdfWholePageFills(298)),
      testContext({ settings }),
    )
    expect(page!.metadata).toMatchObject({ width: 612, height: 792 })
    const refused = await convertAll(
      pdfToPng,
      inputFromBytes('fills.pdf', pdfWholePageFills(299)),
      testContext({ settings }),
    ).catch((error) => error)
    expect(refused.message).toMatch(/^page 1 would paint 145\.8 megapixels .*; at most 145\.4 are painted/)
  })

  it("counts what an annotation's appearance paints: 300 fills of the page draw, 2,000 are refused", async () => {
    // PDFium draws annotations' appearances over the page (FPDF_ANNOT); they are not among the page's objects.
    const settings = { PDF_DPI: 72 }
    const [page] = await convertAll(
      pdfToPng,
      inputFromBytes('annotated.pdf', pdfAnnotationFills(300)),
      testContext({ settings }),
    )
    // The appearance's last fill (0.9 gray) covers the page.
    const { data } = await decodeImage(await outputBytes(page!), TEST_IMAGE_LIMITS)
    expect([data[0], data[data.length - 4]]).toEqual([230, 230])
    const refused = await convertAll(
      pdfToPng,
      inputFromBytes('annotated.pdf', pdfAnnotationFills(2000)),
      testContext({ settings }),
    ).catch((error) => error)
    expect(refused.message).toMatch(/^page 1 would paint 975\.4 megapixels /)
  })

  it('draws a page of 100,000 small paths and a page of text in 400 page-sized form XObjects', async () => {
    // A CAD-like page: each path's box is a few pixels, however many there are.
    const paths = Array.from({ length: 100_000 }, (_, i) => `${(i * 37) % 600} ${(i * 91) % 780} 4 3 re f`)
    // Text is often wrapped in a form XObject the page's size: it counts by its glyphs' boxes, not the form's.
    const lines = Array.from(
      { length: 400 },
      (_, i) => `BT /F1 8 Tf 20 ${780 - 1.9 * i} Td (Line ${i} of the report.) Tj ET`,
    )
    const pdf = buildPdf([
      { width: 612, height: 792, content: paths.join('\n') },
      { width: 612, height: 792, helvetica: true, forms: lines, content: lines.map((_, i) => `/Fm${i} Do`).join('\n') },
    ])
    const outputs = await convertAll(pdfToPng, inputFromBytes('ordinary.pdf', pdf), testContext())
    expect(outputs.map((output) => output.metadata)).toEqual([
      { page: 1, width: 1275, height: 1650, dpi: 150 },
      { page: 2, width: 1275, height: 1650, dpi: 150 },
    ])
    expect(await inkIn(await outputBytes(outputs[1]!), { x0: 0, y0: 0, x1: 0.3, y1: 0.95 })).toBeGreaterThan(0.01)
  })

  it.each([
    [
      'an encrypted PDF',
      'locked.pdf',
      () => encrypted,
      'pdf-to-png on "locked.pdf" failed: password-protected PDF: give its password as options.password',
    ],
    [
      'a truncated PDF',
      'cut.pdf',
      () => threePages.slice(0, 2000),
      'pdf-to-png on "cut.pdf" failed: the PDF cannot be read: file not in PDF format or corrupted',
    ],
  ])('fails %s with 422, a failed job saying why, and the original intact', async (_case, name, bytes, message) => {
    const user = await signUp()
    const source = await uploaded(user, name, bytes())
    const res = await callJson('POST', `/files/${source._id}/convert`, { token: user.token })
    expect(res.status).toBe(422)
    expect(res.body).toMatchObject({ message, code: 'CONVERSION_FAILED' })
    const job = await callJson('GET', `/jobs/${res.body.job}`, { token: user.token })
    expect(job.body).toMatchObject({ status: 'failed', files: [] })
    expect(job.body.steps).toMatchObject([{ converter: 'pdf-to-png', status: 'failed', attempts: 1 }])
    const original = await callJson('GET', `/files/${source._id}`, { token: user.token })
    expect(original.body).toMatchObject({ hash: source.hash, size: bytes().byteLength, files: [] })
    expect((await downloadBytes(`/files/${source._id}/download`, { token: user.token })).bytes).toEqual(bytes())
  })
})
