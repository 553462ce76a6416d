// Office documents → PDF through a Gotenberg 8 endpoint (GOTENBERG_URL: the official container, or the
// sidecar in sidecar/). The PDF then continues the chain to PNG pages. Only what LibreOffice should open as an
// office document reaches it (OOXML and ODF zips, OLE2 compound files, RTF, CSV): a JPEG, PNG, PDF, HTML or SVG
// named .docx would be opened by LibreOffice's other import filters, a far larger parser surface.
import { convertOfficeToPdf } from '../engines/gotenberg'
import { ConversionError, type Converter } from './converter'

/**
 * The sniffed types (worker/files/sniff.ts) of office documents: a zip (typed by its office extension, or plain
 * application/zip for .docm, .xlsm, .ppsx …), an OLE2 compound file, RTF by its magic, CSV by its extension.
 */
const OFFICE_TYPES = [
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  'application/vnd.oasis.opendocument.text',
  'application/vnd.oasis.opendocument.spreadsheet',
  'application/vnd.oasis.opendocument.presentation',
  'application/zip',
  'application/msword',
  'application/vnd.ms-excel',
  'application/vnd.ms-powerpoint',
  'application/x-ole-storage',
  'application/rtf',
  'text/csv',
]

const startsWith = (bytes: Uint8Array, signature: readonly number[]) => signature.every((byte, i) => bytes[i] === byte)

/**
 * What LibreOffice should open, checked again on the bytes (the registry checked the sniffed type): a zip, an OLE2
 * compound file, RTF, or for .csv text that is not markup (HTML, XML and SVG sniff as text; LibreOffice would
 * parse them as markup).
 */
function officeContent(bytes: Uint8Array, extension: string): string | undefined {
  if (startsWith(bytes, [0x50, 0x4b, 0x03, 0x04]) || startsWith(bytes, [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]) || startsWith(bytes, [0x7b, 0x5c, 0x72, 0x74, 0x66])) return undefined
  const head = bytes.subarray(0, 512)
  if (extension !== '.csv' || head.includes(0)) return 'neither a zip (OOXML, ODF), an OLE2 compound file nor RTF'
  return /^\uFEFF?\s*</.test(new TextDecoder().decode(head)) ? 'markup (HTML, XML or SVG), not CSV' : undefined
}

const asString = (value: unknown) => (typeof value === 'string' && value ? value : undefined)
const asFlag = (value: unknown) => value === true || value === 'true'

export const officeToPdf: Converter = {
  name: 'office-to-pdf',
  from: ['.doc', '.docx', '.docm', '.dotx', '.odt', '.ott', '.rtf', '.xls', '.xlsx', '.xlsm', '.ods', '.csv', '.ppt', '.pptx', '.pps', '.ppsx', '.odp', '.odg'],
  accepts: OFFICE_TYPES,
  to: '.pdf',
  async *convert(input, ctx) {
    if (input.size === 0) throw new ConversionError(`"${input.name}" is empty: there is nothing to convert`)
    const { GOTENBERG_URL, GOTENBERG_USERNAME, GOTENBERG_PASSWORD, GOTENBERG_TIMEOUT_MS, OFFICE_MAX_BYTES } = ctx.config
    // FormData needs the bytes: OFFICE_MAX_BYTES bounds them.
    const bytes = await input.bytes(OFFICE_MAX_BYTES)
    const refusal = officeContent(bytes, input.extension)
    if (refusal) throw new ConversionError(`"${input.name}" is not an office document LibreOffice should open: its content is ${refusal}`)
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
}
