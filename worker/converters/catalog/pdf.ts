// PDF → PNG pages and PDF → text (worker/converters/pdf-to-png.ts, pdf-to-text.ts): what they read and the
// settings both take.
import { describeConverter } from '../converter'

export const PDF_SETTINGS = [
  'PDF_MAX_BYTES',
  'PDF_MAX_IMAGE_PIXELS',
  'PDF_MAX_PAGES',
  'CONVERT_PAGES_PER_STEP',
  'PDF_DPI',
  'PDF_MAX_PAGE_PIXELS',
  'IMAGE_MAX_SIDE',
] as const

export const pdfToPngInfo = describeConverter({
  name: 'pdf-to-png',
  settings: PDF_SETTINGS,
  from: ['.pdf'],
  to: '.png',
})

export const pdfToTextInfo = describeConverter({
  name: 'pdf-to-text',
  settings: PDF_SETTINGS,
  from: ['.pdf'],
  to: '.txt',
  onRequest: true,
})
