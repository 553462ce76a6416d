// The count of what a page's content draws (worker/engines/pdf-content.ts): the lexer's counts, exact, on content
// written to ISO 32000-1 §7.8 (content streams) and §9.4 (text objects); each page's count through its resources;
// the same counts whatever the pieces the data comes in, and through object streams.
import { describe, expect, it } from 'vitest'
import {
  ContentLexer,
  ContentScan,
  type ContentSummary,
  drawnAreas,
  PdfDrawingTooLargeError,
} from '../../worker/engines/pdf-content'
import { MAX_PAINTED_AREAS, PAINT_WEIGHTS } from '../../worker/engines/pdf-paint'
import { findPdfStreams, measurePdfStreams } from '../../worker/engines/pdf-streams'
import { pdfNestedForms } from '../hostile/corpus'

const encode = (text: string) => new TextEncoder().encode(text)

/** The summary of `content`, fed in pieces of `pieceBytes`. */
function lex(content: string | Uint8Array, pieceBytes = 64 * 1024): ContentSummary {
  const bytes = typeof content === 'string' ? encode(content) : content
  const lexer = new ContentLexer()
  for (let at = 0; at < bytes.length; at += pieceBytes) lexer.write(bytes.subarray(at, at + pieceBytes))
  lexer.end()
  return lexer.summary
}

/** The summary's counts, each use's times only. */
const plain = ({ objects, glyphs, uses }: ContentSummary) => ({
  objects,
  glyphs,
  uses: Object.fromEntries([...uses].map(([key, use]) => [key, use.times])),
})

/** The PDF engine's default PDF_MAX_PAGE_PIXELS. */
const PAGE_PIXELS = 2_200_000
/** US Letter's area in points, the pages' below. */
const LETTER = 612 * 792

/** Counts a whole PDF as the PDF engine does before it loads a page: the costliest page, or the refusal. */
function countPdf(bytes: Uint8Array, maxPagePixels = PAGE_PIXELS) {
  const streams = findPdfStreams(bytes)
  const scan = new ContentScan()
  const budget = { maxStreamBytes: 24 * 2 ** 20, maxTotalBytes: 2 ** 40 }
  for (const part of [streams.filter((s) => s.isStructure), streams.filter((s) => !s.isStructure)]) {
    const steps = measurePdfStreams(bytes, part, budget, 0, [], undefined, scan)
    while (!steps.next().done);
  }
  return scan.check(bytes, streams, maxPagePixels)
}

/** What `count` throws (a PdfDrawingTooLargeError is expected). */
function refusal(count: () => unknown): PdfDrawingTooLargeError {
  try {
    count()
  } catch (error) {
    return error as PdfDrawingTooLargeError
  }
  throw new Error('the count did not refuse')
}

/** A PDF of numbered objects (1 the catalog; null: an object kept elsewhere) with a cross-reference table. */
function pdfOf(objects: readonly (string | null)[]): Uint8Array {
  let body = '%PDF-1.7\n'
  const offsets: (number | null)[] = []
  for (const [i, object] of objects.entries()) {
    offsets.push(object === null ? null : body.length)
    if (object !== null) body += `${i + 1} 0 obj\n${object}\nendobj\n`
  }
  const entries = offsets.map((o) =>
    o === null ? '0000000000 00000 f \n' : `${String(o).padStart(10, '0')} 00000 n \n`,
  )
  const xref = `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${entries.join('')}`
  return encode(
    `${body}${xref}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${body.length}\n%%EOF\n`,
  )
}
const stream = (dictionary: string, data: string) =>
  `<< ${dictionary} /Length ${data.length} >>\nstream\n${data}\nendstream`
const onePage = (resources: string) => [
  '<< /Type /Catalog /Pages 2 0 R >>',
  '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
  `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources ${resources} >>`,
]

describe('the content lexer', () => {
  it('counts painting operators and the bytes text operators show (ISO 32000-1 Tables 59, 60 and 109)', () => {
    const content = [
      '0 0 m 10 10 l S', // a stroke
      '0 0 10 10 re f 0 0 5 5 re f* 1 1 2 2 re B', // three fills, one both
      '0 0 1 1 re n', // a path ended without painting: no object
      '/Sh1 sh /Im1 Do', // a shading and an XObject
      'BT /F1 12 Tf (Hello) Tj [(Wor) -120 (ld)] TJ (a\\(b\\)c) \' 1 2 (\\101\\102\\7) " <48656c6c6f> Tj <4 8 6> Tj ET',
      '% a comment: (not shown) Tj 0 0 1 1 re f',
    ].join('\n')
    expect(plain(lex(content))).toEqual({
      objects: 12,
      // Hello 5, World 5, a(b)c 5, \101\102\7 3, <48656c6c6f> 5, <4 8 6> 2
      glyphs: 25,
      uses: { SSh1: 1, XIm1: 1, FF1: 25 },
    })
  })

  it('gives the same counts in pieces of one byte as in one piece', () => {
    const content = `q /GS1 gs /Pattern cs /P1 scn 0 0 9 9 re f Q BT /F#31 9 Tf (a\\053b) Tj ET BI /W 2 /H 1 /BPC 8 /CS /G ID \x00\xff EI /X1 Do <</MCID 3>> BDC (x) Tj EMC`
    expect(plain(lex(content, 1))).toEqual(plain(lex(content)))
    expect(plain(lex(content))).toEqual({
      objects: 5,
      glyphs: 4,
      uses: { GGS1: 1, PP1: 1, FF1: 4, XX1: 1 },
    })
  })

  it('skips inline image data up to the EI that stands alone (PDFium skips to its keyword EI), counting the image', () => {
    // Image data that spells operators draws nothing; an `EI` inside a word does not end it.
    const content = 'BI /W 4 /H 1 /BPC 8 /CS /G ID 0 0 9 9 re f xEIx (a) Tj EI 0 0 1 1 re f'
    expect(plain(lex(content))).toEqual({ objects: 2, glyphs: 0, uses: {} })
  })

  it('restores the graphics state with Q: soft masks, patterns and fonts apply only where they are set', () => {
    const content =
      'q /GS1 gs /P1 scn 0 0 1 1 re f Q 0 0 1 1 re f q /F1 5 Tf Q BT (ab) Tj ET 0.5 g /GS2 gs 0 0 1 1 re B'
    expect(plain(lex(content))).toEqual({ objects: 4, glyphs: 2, uses: { GGS1: 1, PP1: 1, GGS2: 1 } })
  })

  it('keeps a stream of unbalanced input linear: an unclosed string, an unclosed hex string, a huge word', () => {
    for (const content of ['(' + 'a'.repeat(100_000), '<' + '0'.repeat(100_000), 'x'.repeat(100_000) + ' f']) {
      const summary = lex(content, 4096)
      expect(summary.objects).toBeLessThanOrEqual(1)
    }
  })
})

describe("a page's count", () => {
  it('weighs an object or a glyph as the paint walk does: 220,000 are the 300 areas of a page of 2.2 MP', () => {
    expect(PAINT_WEIGHTS.object).toBe(3000)
    expect(drawnAreas({ units: 220_000, boxes: 0, paint: 0, pixels: 0 }, PAGE_PIXELS)).toBe(MAX_PAINTED_AREAS)
    expect(drawnAreas({ units: 0, boxes: 300, paint: 0, pixels: 0 }, PAGE_PIXELS)).toBe(MAX_PAINTED_AREAS)
  })

  it('multiplies forms by their references, as PDFium builds them: 30 × 30 references of 300 fills', () => {
    // The page: 30 Do; form A: 30 Do; form B: 300 fills. 30 + 30 × (30 + 30 × 300) = 270,930: 369 areas.
    expect(() => countPdf(pdfNestedForms(30, 300))).toThrow(PdfDrawingTooLargeError)
    expect(countPdf(pdfNestedForms(30, 300), 10 * PAGE_PIXELS)).toMatchObject({
      units: 30 + 30 * (30 + 30 * 300),
      boxes: 0,
    })
  })

  it("draws a Type 3 glyph's procedure for each glyph, in glyph space, at the glyph's size (PDFium caches neither d0 nor d1)", () => {
    const type3 = (start: string) =>
      pdfOf([
        ...onePage('<< /Font << /T3 5 0 R >> >>'),
        stream('', 'BT /T3 100 Tf (aaaa) Tj ET'),
        '<< /Type /Font /Subtype /Type3 /FontBBox [0 0 1 1] /FontMatrix [1 0 0 1 0 0] /CharProcs << /a 6 0 R >> /Encoding << /Differences [97 /a] >> /FirstChar 97 /LastChar 97 /Widths [1] >>',
        stream('', `${start} 0 0 1 1 re f 0 0 1 1 re f 0 0 1 1 re f`),
      ])
    // One text object of 4 glyphs, each running the 3-fill procedure: 1 + 4 + 4 × 3 units. Each glyph's em square
    // is 100 × 100 pt: the glyphs cover 4 × 10,000 pt², their procedures' fills 3 times that.
    for (const start of ['1 0 d0', '1 0 0 0 1 1 d1']) {
      const counted = countPdf(type3(start))
      expect(counted.units).toBe(1 + 4 + 4 * 3)
      expect(counted.boxes).toBeCloseTo((4 * 10_000 + 4 * 3 * 10_000) / LETTER, 12)
    }
  })

  it('counts the area glyphs cover, each drawn: 600 glyphs of 600 pt on one spot are 445 pages of area', () => {
    const pdf = pdfOf([...onePage('<< >>'), stream('', `BT /F1 600 Tf (${'H'.repeat(600)}) Tj ET`)])
    const refused = refusal(() => countPdf(pdf))
    expect(refused).toBeInstanceOf(PdfDrawingTooLargeError)
    expect(refused.drawing).toMatchObject({ units: 601, boxes: (600 * 600 * 600) / LETTER })
    expect(refused.message).toMatch(/^page 1 would draw 601 objects and glyphs and 445\.6 times its area again/)
  })

  it("counts a matrix past a double's range as the largest, each glyph then the whole page, never nothing", () => {
    const huge = `1${'0'.repeat(400)}`
    const pdf = pdfOf([...onePage('<< >>'), stream('', `BT /F1 12 Tf ${huge} 0 0 ${huge} 0 0 Tm (ab) Tj ET`)])
    expect(countPdf(pdf)).toMatchObject({ units: 3, boxes: 2 })
  })

  it('counts the glyphs of a form without /BBox against a Letter page, each drawing of it at most the whole page', () => {
    const pdf = pdfOf([
      ...onePage('<< /XObject << /X1 5 0 R >> >>'),
      stream('', '/X1 Do /X1 Do'),
      stream('/Subtype /Form', `BT /F1 600 Tf (${'H'.repeat(100)}) Tj ET`),
    ])
    // Two drawings of 100 glyphs of 600 pt: 74.3 pages of area each.
    expect(countPdf(pdf)).toMatchObject({ units: 2 + 2 * 101, boxes: (2 * 100 * 600 * 600) / LETTER })
  })

  it('counts at most the 32,767 bytes of a string PDFium keeps (kMaxStringLength)', () => {
    expect(lex(`(${'a'.repeat(40_000)}) Tj <${'61'.repeat(40_000)}> Tj`).glyphs).toBe(2 * 32_767)
  })

  it("draws a pattern's cell for each object painted with it, in the stream's space through the pattern's matrix", () => {
    const pattern = pdfOf([
      ...onePage('<< /Pattern << /P1 5 0 R >> >>'),
      stream('', '/Pattern cs /P1 scn 0 0 9 9 re f 0 0 9 9 re f 0 g 0 0 9 9 re f'),
      stream(
        '/PatternType 1 /PaintType 1 /TilingType 1 /BBox [0 0 90 90] /XStep 90 /YStep 90 /Matrix [2 0 0 2 0 0]',
        '0 0 1 1 re f 0 0 2 2 re f',
      ),
    ])
    // Three fills, two with the pattern's two-fill cell (1 + 4 pt² of cell space, 4 times that on the page).
    const counted = countPdf(pattern)
    expect(counted.units).toBe(3 + 2 * 2)
    expect(counted.boxes).toBeCloseTo((2 * 4 * (1 + 4)) / LETTER, 12)
  })

  it("draws a soft mask's group for each object under it, in the space of the gs that set it", () => {
    const mask = pdfOf([
      ...onePage('<< /ExtGState << /GS1 << /SMask << /S /Luminosity /G 5 0 R >> >> >> >>'),
      // The mask is set at a scale of 2 × 3; the matrix after it does not change where its group is drawn.
      stream('', '0 0 9 9 re f q 2 0 0 3 0 0 cm /GS1 gs 1 0 0 9 0 0 cm 0 0 9 9 re f 0 0 9 9 re S Q 0 0 9 9 re f'),
      stream(
        '/Subtype /Form /BBox [0 0 100 100] /Group << /S /Transparency >>',
        '0 0 9 9 re f 0 0 9 9 re f 0 0 9 9 re f',
      ),
    ])
    // Four objects, two under the mask: its group's three fills of 81 pt² drawn for each, 6 times larger.
    const counted = countPdf(mask)
    expect(counted.units).toBe(4 + 2 * 3)
    expect(counted.boxes).toBeCloseTo((2 * 6 * 3 * 81) / LETTER, 12)
  })

  it("counts a group's objects within the objects it masks: page-sized fills over two pages and over two points", () => {
    const masked = (objects: string) =>
      pdfOf([
        ...onePage('<< /ExtGState << /GS1 << /SMask << /S /Luminosity /G 5 0 R >> >> >> >>'),
        stream('', `/GS1 gs ${objects}`),
        stream(
          '/Subtype /Form /BBox [-50000 -50000 50000 50000]',
          '-50000 -50000 100000 100000 re f -50000 -50000 100000 100000 re f',
        ),
      ])
    // Each of the group's two fills covers the whole masked object, and no more: a page, or a point.
    expect(countPdf(masked('0 0 612 792 re f 0 0 612 792 re f'))).toMatchObject({ units: 2 + 2 * 2, boxes: 2 * 2 })
    expect(countPdf(masked('0 0 1 1 re f 0 0 1 1 re f')).boxes).toBeCloseTo((2 * 2) / LETTER, 12)
  })

  it("runs a function shading's PostScript function for each pixel, and a DeviceN image's tint for each of its pixels", () => {
    // ISO 32000-1 §7.10.5: a type 4 function is a program of operators, here `dup 0.5 mul pop` 10 times: 30.
    const program = `{ ${'dup 0.5 mul pop '.repeat(10)}}`
    const shading = pdfOf([
      ...onePage('<< /Shading << /S1 5 0 R >> >>'),
      stream('', 'q 0 0 306 792 re W n /S1 sh Q'),
      '<< /ShadingType 1 /ColorSpace /DeviceGray /Function 6 0 R >>',
      stream('/FunctionType 4 /Domain [0 1 0 1] /Range [0 1]', program),
    ])
    // Half the page, each pixel 33 + 2 × 30 pixels of work.
    expect(countPdf(shading)).toMatchObject({ units: 1, boxes: (33 + 2 * 30) / 2 })
    const image = (space: string) =>
      pdfOf([
        ...onePage('<< /XObject << /Im 5 0 R >> >>'),
        stream('', '612 0 0 792 0 0 cm /Im Do /Im Do'),
        stream(`/Subtype /Image /Width 100 /Height 50 /BitsPerComponent 8 /ColorSpace ${space}`, ''),
        stream('/FunctionType 4 /Domain [0 1 0 1] /Range [0 1]', program),
      ])
    // Two inks: each pixel through the tint, drawn twice. One: a palette of 256.
    expect(countPdf(image('[/DeviceN [/A /B] /DeviceGray 6 0 R]')).pixels).toBe(2 * 100 * 50 * (240 + 8 * 30))
    expect(countPdf(image('[/Separation /A /DeviceGray 6 0 R]')).pixels).toBe(2 * 256 * 8 * 30)
  })

  it("draws a mesh's triangles, which its data bounds: a vertex a triangle at most, each over the shading's area", () => {
    // 16-bit coordinates, an 8-bit flag and an 8-bit grey: 6 bytes a vertex, 60 bytes 10 vertices.
    const mesh = pdfOf([
      ...onePage('<< /Shading << /M1 5 0 R >> >>'),
      stream('', '0 0 612 396 re W n /M1 sh'),
      stream(
        '/ShadingType 4 /ColorSpace /DeviceGray /BitsPerCoordinate 16 /BitsPerComponent 8 /BitsPerFlag 8 /Decode [0 612 0 792 0 1]',
        'x'.repeat(60),
      ),
    ])
    // The data read from the line end before it too (a reading pdf-streams.ts tries) is 61 bytes: 10⅙ vertices.
    const counted = countPdf(mesh)
    expect(counted.units).toBe(1)
    expect(counted.boxes).toBeCloseTo((2 * (61 / 6)) / 2, 12)
  })

  it("adds a page's content streams and its annotations' appearances, with resources inherited from its parents", () => {
    const pdf = pdfOf([
      '<< /Type /Catalog /Pages 2 0 R >>',
      '<< /Type /Pages /Kids [3 0 R] /Count 1 /Resources << /XObject << /X1 6 0 R >> >> >>',
      '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents [4 0 R 5 0 R] /Annots [7 0 R] >>',
      stream('', '/X1 Do'),
      stream('', '/X1 Do /X1 Do'),
      stream('/Subtype /Form /BBox [0 0 9 9]', '0 0 1 1 re f 0 0 1 1 re f'),
      '<< /Type /Annot /Subtype /Square /Rect [0 0 9 9] /AP << /N << /On 8 0 R /Off 9 0 R >> >> >>',
      stream('/Subtype /Form /BBox [0 0 9 9]', '0 0 1 1 re f'),
      stream('/Subtype /Form /BBox [0 0 9 9]', '0 0 1 1 re f 0 0 1 1 re f 0 0 1 1 re f 0 0 1 1 re f'),
    ])
    // Three Do of a two-fill form (3 × 3), and the costlier appearance state (4).
    expect(countPdf(pdf)).toMatchObject({ units: 9 + 4, boxes: 0 })
  })

  it('finds pages and resources kept in an object stream (ISO 32000-1 §7.5.7), numbering pages by the page tree', () => {
    // Objects 1–3 (catalog, page tree, page) are packed in object 6; the page draws form 5 three times.
    const packed = [
      '<< /Type /Catalog /Pages 2 0 R >>',
      '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
      '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /XObject << /X1 5 0 R >> >> >>',
    ]
    let offsets = ''
    let body = ''
    for (const [i, object] of packed.entries()) {
      offsets += `${i + 1} ${body.length} `
      body += `${object}\n`
    }
    const objectStream = `${offsets}\n`
    const pdf = pdfOf([
      null,
      null,
      null,
      stream('', '/X1 Do /X1 Do /X1 Do'),
      stream('/Subtype /Form /BBox [0 0 9 9]', '0 0 1 1 re f 0 0 1 1 re f'),
      stream(`/Type /ObjStm /N 3 /First ${objectStream.length}`, objectStream + body),
    ])
    expect(countPdf(pdf)).toMatchObject({ units: 3 + 3 * 2 })
    const refused = refusal(() => countPdf(pdf, 20))
    expect(refused).toBeInstanceOf(PdfDrawingTooLargeError)
    expect(refused.message).toMatch(/^page 1 would draw 9 objects and glyphs/)
  })

  it('draws a form that draws itself once, as PDFium does', () => {
    const pdf = pdfOf([
      ...onePage('<< /XObject << /X1 5 0 R >> >>'),
      stream('', '/X1 Do'),
      stream('/Subtype /Form /BBox [0 0 9 9] /Resources << /XObject << /X1 5 0 R >> >>', '/X1 Do /X1 Do 0 0 1 1 re f'),
    ])
    expect(countPdf(pdf)).toMatchObject({ units: 1 + 3 })
  })

  it('refuses a page past 300 areas, naming it and the count', () => {
    // 11 text objects of 10 glyphs of 1 pt: 121 units, 299.8 areas of a page of 1,211 pixels, 302.5 of one of 1,200.
    const content = Array.from({ length: 11 }, () => '(0123456789) Tj').join(' ')
    const pdf = pdfOf([...onePage('<< >>'), stream('', `BT ${content} ET`)])
    expect(countPdf(pdf, 1211).units).toBe(121)
    expect(countPdf(pdf, 1211).areas).toBeCloseTo((121 * 3000) / 1211 + 110 / LETTER, 9)
    expect(() => countPdf(pdf, 1200)).toThrow(
      'page 1 would draw 121 objects and glyphs and 0.0 times its area again (glyphs, soft-mask groups, pattern cells, Type 3 procedures, shading functions and meshes, each time they are drawn): 302.5 areas of the page at 3000 pixels an object or a glyph; at most 300 are drawn',
    )
  })
})
