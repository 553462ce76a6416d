// PDFium compiled to WASM (@hyzyla/pdfium, MIT/Apache-2.0), instantiated from the statically imported module
// (workerd compiles no WebAssembly from bytes). One instance per isolate, reused: every document is freed in it
// when done, so its heap is reused. (A fresh instance per document was tried first: discarded instances live
// until the garbage collector runs, and three image-heavy pages in a row took wrangler dev's isolate down.)
// An engine error drops the instance, so a corrupted heap is never reused.
import { PDFiumLibrary } from '@hyzyla/pdfium'
import pdfiumWasm from '@hyzyla/pdfium/pdfium.wasm'
import type { RawImage } from './png/encode'

export class PdfOpenError extends Error {
  override readonly name = 'PdfOpenError'
  constructor(
    message: string,
    readonly needsPassword: boolean,
  ) {
    super(message)
  }
}

export interface PdfPageSize {
  /** Points (1/72 inch). */
  readonly width: number
  readonly height: number
}

export interface OpenPdf {
  readonly pageCount: number
  pageSize(index: number): PdfPageSize
  /** Renders a page at `scale` pixels per point, as RGB(A) pixels for the PNG encoder. */
  renderPage(index: number, scale: number): Promise<RawImage>
}

let shared: Promise<PDFiumLibrary> | undefined

function instantiate(): Promise<PDFiumLibrary> {
  shared ??= PDFiumLibrary.init({
    instantiateWasm: (imports, done) => {
      const instance = new WebAssembly.Instance(pdfiumWasm as WebAssembly.Module, imports)
      ;(done as unknown as (instance: WebAssembly.Instance) => void)(instance)
      return instance.exports
    },
  })
  return shared
}

/** Opens the document, hands it to `use`, and frees the document whatever happens. */
export async function withPdf<T>(bytes: Uint8Array, password: string | undefined, use: (pdf: OpenPdf) => Promise<T>): Promise<T> {
  const library = await instantiate()
  try {
    let document: Awaited<ReturnType<PDFiumLibrary['loadDocument']>>
    try {
      document = await library.loadDocument(bytes, password)
    } catch (error) {
      const message = (error as Error)?.message ?? String(error)
      throw new PdfOpenError(message, /password/i.test(message))
    }
    try {
      return await use({
        pageCount: document.getPageCount(),
        pageSize(index) {
          const { originalWidth, originalHeight } = document.getPage(index).getOriginalSize()
          return { width: originalWidth, height: originalHeight }
        },
        async renderPage(index, scale) {
          const rendered = await document.getPage(index).render({ scale, render: 'bitmap', colorSpace: 'BGRA' })
          // BGRA → RGBA in a copy that outlives the WASM heap.
          const data = new Uint8Array(rendered.data.length)
          for (let i = 0; i < data.length; i += 4) {
            data[i] = rendered.data[i + 2]!
            data[i + 1] = rendered.data[i + 1]!
            data[i + 2] = rendered.data[i]!
            data[i + 3] = rendered.data[i + 3]!
          }
          return { width: rendered.width, height: rendered.height, channels: 4, data }
        },
      })
    } finally {
      document.destroy()
    }
  } catch (error) {
    // A password or format problem is the document's; anything else may have left the engine broken.
    if (!(error instanceof PdfOpenError)) shared = undefined
    throw error
  }
}
