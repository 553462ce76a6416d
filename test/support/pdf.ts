// A minimal PDF writer for tests that need page features no fixture has: rotation, embedded JPEG images.
import { concatBytes } from './bytes.ts'
const encoder = new TextEncoder()

export interface TestPage {
  readonly width: number
  readonly height: number
  readonly rotate?: number
  /** Content stream operators, e.g. "0 0 0 rg 10 10 50 50 re f". */
  readonly content: string
  /** Helvetica as /F1, for text operators ("BT /F1 12 Tf 72 700 Td (Hello) Tj ET"). */
  readonly helvetica?: boolean
  /** A JPEG drawn by the content as /Im0. */
  readonly jpeg?: { bytes: Uint8Array; width: number; height: number }
  /** Form XObjects of the page's size, drawn by the content as /Fm0, /Fm1, …, each with the page's fonts. */
  readonly forms?: readonly string[]
}

export function buildPdf(pages: readonly TestPage[]): Uint8Array {
  const objects: Uint8Array[][] = []
  const add = (...parts: Array<string | Uint8Array>) => {
    objects.push(parts.map((part) => (typeof part === 'string' ? encoder.encode(part) : part)))
    return objects.length
  }
  const catalog = add('') // filled below
  const pagesId = add('')
  const kids: number[] = []
  for (const page of pages) {
    const content = encoder.encode(page.content)
    const contentId = add(`<< /Length ${content.length} >>\nstream\n`, content, '\nendstream')
    const fonts = page.helvetica ? '/Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >>' : ''
    let resources = page.helvetica ? `<< ${fonts} >>` : '<< >>'
    if (page.forms) {
      const forms = page.forms.map((form, index) => {
        const bytes = encoder.encode(form)
        const dictionary = `/Type /XObject /Subtype /Form /BBox [0 0 ${page.width} ${page.height}] /Resources << ${fonts} >>`
        return `/Fm${index} ${add(`<< ${dictionary} /Length ${bytes.length} >>\nstream\n`, bytes, '\nendstream')} 0 R`
      })
      resources = `<< ${fonts} /XObject << ${forms.join(' ')} >> >>`
    }
    if (page.jpeg) {
      const image = add(
        `<< /Type /XObject /Subtype /Image /Width ${page.jpeg.width} /Height ${page.jpeg.height} /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /DCTDecode /Length ${page.jpeg.bytes.length} >>\nstream\n`,
        page.jpeg.bytes,
        '\nendstream',
      )
      resources = `<< /XObject << /Im0 ${image} 0 R >> >>`
    }
    kids.push(
      add(
        `<< /Type /Page /Parent ${pagesId} 0 R /MediaBox [0 0 ${page.width} ${page.height}] /Rotate ${page.rotate ?? 0} /Resources ${resources} /Contents ${contentId} 0 R >>`,
      ),
    )
  }
  objects[catalog - 1] = [encoder.encode(`<< /Type /Catalog /Pages ${pagesId} 0 R >>`)]
  objects[pagesId - 1] = [
    encoder.encode(`<< /Type /Pages /Kids [${kids.map((id) => `${id} 0 R`).join(' ')}] /Count ${kids.length} >>`),
  ]
  const chunks: Uint8Array[] = [encoder.encode('%PDF-1.4\n%\u00e2\u00e3\n')]
  let offset = chunks[0]!.length
  const offsets: number[] = []
  objects.forEach((parts, index) => {
    offsets.push(offset)
    for (const part of [encoder.encode(`${index + 1} 0 obj\n`), ...parts, encoder.encode('\nendobj\n')]) {
      chunks.push(part)
      offset += part.length
    }
  })
  const xref = `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`
  chunks.push(
    encoder.encode(
      `${xref}trailer\n<< /Size ${objects.length + 1} /Root ${catalog} 0 R >>\nstartxref\n${offset}\n%%EOF\n`,
    ),
  )
  return concatBytes(...chunks)
}

/** The length of squarePage()'s content stream: what it decodes to, whatever a writer compresses it to. */
export const SQUARE_PAGE_CONTENT_BYTES = 300_000

/** One 100 × 100 pt page with a black square on its lower left quarter, drawn by a SQUARE_PAGE_CONTENT_BYTES stream. */
export function squarePage(): Uint8Array {
  const draw = '0 0 0 rg 0 0 50 50 re f'
  return buildPdf([
    { width: 100, height: 100, content: `${draw}${' '.repeat(SQUARE_PAGE_CONTENT_BYTES - draw.length)}` },
  ])
}
