// Text → PNG pages (worker/converters/text-to-png.ts): what it reads.
import { describeConverter } from '../converter'

export const textToPngInfo = describeConverter({
  name: 'text-to-png',
  settings: ['TEXT_MAX_BYTES', 'TEXT_MAX_PAGES', 'PDF_DPI', 'TEXT_FONTS_PREFIX', 'CONVERT_PAGES_PER_STEP'],
  from: ['.txt'],
  to: '.png',
})
