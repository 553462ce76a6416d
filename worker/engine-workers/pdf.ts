// The PDF engine Worker (wrangler.engine-pdf.toml): PDFium's conversions and the previews of PDF pages (Office
// documents' previews are pages of their PDF).
import { pdfToPng } from '../converters/pdf-to-png'
import { pdfToText } from '../converters/pdf-to-text'
import { encodePreview } from '../previews/encode'
import { pdfPixels } from '../previews/render-pdf'
import { engineEntrypoint, type PreviewRenderer } from './host'

export const renderPdfPreview: PreviewRenderer = async (input, params, settings, avif) =>
  encodePreview(await pdfPixels(input, params, settings), params, avif)

export default engineEntrypoint([pdfToPng, pdfToText], { pdf: renderPdfPreview })
