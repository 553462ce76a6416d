// HTML and Markdown → PDF through Gotenberg's Chromium routes (worker/converters/html-to-pdf.ts): what it reads.
import { describeConverter } from '../converter'
import { GOTENBERG_SETTINGS } from './office-to-pdf'

export const htmlToPdfInfo = describeConverter({
  name: 'html-to-pdf',
  // The same bound as an Office document: both travel whole in one form part.
  settings: GOTENBERG_SETTINGS,
  from: ['.html', '.htm', '.md'],
  to: '.pdf',
  // A preview draws from this PDF and a conversion continues from it: one Chromium run per content.
  reusable: true,
})
