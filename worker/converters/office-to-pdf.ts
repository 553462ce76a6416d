// Office documents → PDF through a Gotenberg 8 endpoint (GOTENBERG_URL: the official container, or the
// sidecar in sidecar/). The PDF then continues the chain to PNG pages.
import { convertOfficeToPdf } from '../engines/gotenberg'
import { defineConverter } from './converter'

const asString = (value: unknown) => (typeof value === 'string' && value ? value : undefined)
const asFlag = (value: unknown) => value === true || value === 'true'

export const officeToPdf = defineConverter({
  name: 'office-to-pdf',
  settings: ['GOTENBERG_URL', 'GOTENBERG_USERNAME', 'GOTENBERG_PASSWORD', 'GOTENBERG_TIMEOUT_MS', 'OFFICE_MAX_BYTES'],
  from: ['.doc', '.docx', '.docm', '.dotx', '.odt', '.ott', '.rtf', '.xls', '.xlsx', '.xlsm', '.ods', '.csv', '.ppt', '.pptx', '.pps', '.ppsx', '.odp', '.odg'],
  to: '.pdf',
  async *convert(input, ctx) {
    const { GOTENBERG_URL, GOTENBERG_USERNAME, GOTENBERG_PASSWORD, GOTENBERG_TIMEOUT_MS, OFFICE_MAX_BYTES } = ctx.settings
    // FormData needs the bytes: OFFICE_MAX_BYTES bounds them.
    const bytes = await input.bytes(OFFICE_MAX_BYTES)
    const { options } = ctx
    const pdf = await convertOfficeToPdf(
      { url: GOTENBERG_URL, username: GOTENBERG_USERNAME, password: GOTENBERG_PASSWORD, timeoutMs: GOTENBERG_TIMEOUT_MS },
      { filename: `document${input.extension}`, bytes, contentType: input.contentType },
      {
        landscape: asFlag(options.landscape),
        nativePageRanges: asString(options.nativePageRanges),
        pdfa: asString(options.pdfa),
        pdfua: asFlag(options.pdfua),
        password: asString(options.password),
      },
      ctx.jobId,
    )
    yield { index: 0, total: 1, extension: '.pdf', contentType: 'application/pdf', body: pdf }
  },
})
