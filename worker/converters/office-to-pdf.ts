// Office documents → PDF through a Gotenberg 8 endpoint (GOTENBERG_URL: the official container, or the
// sidecar in sidecar/). The PDF then continues the chain to PNG pages.
import { convertOfficeToPdf, GotenbergError } from '../engines/gotenberg'
import { ConversionError, type Converter } from './converter'

const asString = (value: unknown) => (typeof value === 'string' && value ? value : undefined)
const asFlag = (value: unknown) => value === true || value === 'true'

export const officeToPdf: Converter = {
  name: 'office-to-pdf',
  from: ['.doc', '.docx', '.docm', '.dotx', '.odt', '.ott', '.rtf', '.xls', '.xlsx', '.xlsm', '.ods', '.csv', '.ppt', '.pptx', '.pps', '.ppsx', '.odp', '.odg'],
  to: '.pdf',
  async *convert(input, ctx) {
    const { GOTENBERG_URL, GOTENBERG_USERNAME, GOTENBERG_PASSWORD, GOTENBERG_TIMEOUT_MS, OFFICE_MAX_BYTES } = ctx.config
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
    ).catch((error: unknown) => {
      throw error instanceof GotenbergError ? toConversionError(error) : error
    })
    yield { index: 0, total: 1, extension: '.pdf', contentType: 'application/pdf', body: pdf }
  },
}

/** Gotenberg's failure as the job tells it: the document's fault with Gotenberg's reason, else which kind of
 * trouble the converter had; the URL and settings stay in the cause, for the log. */
function toConversionError(error: GotenbergError): ConversionError {
  switch (error.kind) {
    case 'document':
      return new ConversionError(`the document was refused: ${error.reason}`, { status: error.status === 400 ? 422 : (error.status as 413 | 415), cause: error })
    case 'credentials':
      return new ConversionError('the document converter is misconfigured', { retryable: true, status: 502, cause: error })
    case 'timeout':
      return new ConversionError('the document converter did not answer in time', { retryable: true, status: 504, cause: error })
    case 'unreachable':
      return new ConversionError('the document converter cannot be reached', { retryable: true, status: 503, cause: error })
    default:
      return new ConversionError(`the document converter failed (${error.status})`, { retryable: true, status: 503, cause: error })
  }
}
