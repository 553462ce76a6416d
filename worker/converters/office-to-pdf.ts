// Office documents → PDF through a Gotenberg 8 endpoint (GOTENBERG_URL: the official container, or the
// sidecar in sidecar/). The PDF then continues the chain to PNG pages. Only what LibreOffice should open as an
// office document reaches it (OOXML and ODF zips, OLE2 compound files, RTF, CSV): a JPEG, PNG, PDF, HTML or SVG
// named .docx would be opened by LibreOffice's other import filters, a far larger parser surface.
import { OFFICE_OPTIONS, officeToPdfInfo } from './catalog/office-to-pdf'
import { convertOfficeToPdf, GotenbergError, gotenbergSettings } from '../engines/gotenberg'
import { ConversionError, defineConverter } from './converter'

const startsWith = (bytes: Uint8Array, signature: readonly number[]) => signature.every((byte, i) => bytes[i] === byte)

/**
 * Whether a zip ends with its end of central directory record (in its last 22 + 65,535 bytes, the comment's most).
 * A zip cut short has none: LibreOffice then cannot read it as a package, and its type detection goes on to other
 * import filters (LibreOffice 7.4 opens such a .docx as WordPerfect: a PDF of "PK…" garbage).
 */
function hasZipEnd(bytes: Uint8Array): boolean {
  for (let at = bytes.length - 22; at >= Math.max(0, bytes.length - 22 - 65_535); at--) {
    if (bytes[at] === 0x50 && bytes[at + 1] === 0x4b && bytes[at + 2] === 0x05 && bytes[at + 3] === 0x06) return true
  }
  return false
}

/**
 * What LibreOffice should open, checked again on the bytes (the registry checked the sniffed type): a zip, an OLE2
 * compound file, RTF, or for .csv text that is not markup. HTML, XML and SVG sniff as text, and LibreOffice would
 * parse them as markup.
 */
function officeContent(bytes: Uint8Array, extension: string): string | undefined {
  if (startsWith(bytes, [0x50, 0x4b, 0x03, 0x04]))
    return hasZipEnd(bytes) ? undefined : 'a truncated or damaged zip (its end of central directory record is missing)'
  if (
    startsWith(bytes, [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]) ||
    startsWith(bytes, [0x7b, 0x5c, 0x72, 0x74, 0x66])
  )
    return undefined
  const head = bytes.subarray(0, 512)
  if (extension !== '.csv' || head.includes(0)) return 'neither a zip (OOXML, ODF), an OLE2 compound file nor RTF'
  return /^\uFEFF?\s*</.test(new TextDecoder().decode(head)) ? 'markup (HTML, XML or SVG), not CSV' : undefined
}

const asString = (value: unknown) => (typeof value === 'string' && value ? value : undefined)
const asFlag = (value: unknown) => value === true || value === 'true'

/** How much of a PDF's end is kept to find its trailer's /Encrypt (the trailer, or an xref stream's dictionary). */
const TAIL_BYTES = 64 * 1024

/** Passes the PDF through and fails the stream at its end if it is not encrypted: a client that asked for
 * encryption never gets a plain PDF stored, whatever the Gotenberg behind GOTENBERG_URL did with userPassword. */
function requireEncryption(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  let tail = new Uint8Array(0)
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        const joined = new Uint8Array(tail.length + chunk.length)
        joined.set(tail)
        joined.set(chunk, tail.length)
        tail = joined.subarray(Math.max(0, joined.length - TAIL_BYTES))
        controller.enqueue(chunk)
      },
      flush(controller) {
        if (!new TextDecoder('latin1').decode(tail).includes('/Encrypt')) {
          controller.error(
            new ConversionError(
              'the document converter answered an unencrypted PDF although userPassword asked for encryption',
              { code: 'CONVERTER_MISCONFIGURED' },
            ),
          )
        }
      },
    }),
  )
}

/** Options sent as Gotenberg form fields beyond the five the client has named parameters for. */
const EXTRA_FIELDS = Object.keys(OFFICE_OPTIONS).filter(
  (name) => !['landscape', 'nativePageRanges', 'pdfa', 'pdfua', 'password', 'facturxXml'].includes(name),
)

export const officeToPdf = defineConverter({
  ...officeToPdfInfo,
  async *convert(input, ctx) {
    if (input.size === 0) throw new ConversionError(`"${input.name}" is empty: there is nothing to convert`)
    const { OFFICE_MAX_BYTES } = ctx.settings
    // FormData needs the bytes: OFFICE_MAX_BYTES bounds them.
    const bytes = await input.bytes(OFFICE_MAX_BYTES)
    const refusal = officeContent(bytes, input.extension)
    if (refusal)
      throw new ConversionError(
        `"${input.name}" is not an office document LibreOffice should open: its content is ${refusal}`,
      )
    const { options } = ctx
    const pdf = await convertOfficeToPdf(
      gotenbergSettings(ctx),
      { filename: `document${input.extension}`, bytes, contentType: input.contentType },
      {
        landscape: asFlag(options.landscape),
        nativePageRanges: asString(options.nativePageRanges),
        pdfa: asString(options.pdfa),
        pdfua: asFlag(options.pdfua),
        password: asString(options.password),
        facturxXml: asString(options.facturxXml),
        extra: Object.fromEntries(
          EXTRA_FIELDS.filter((name) => options[name] !== undefined && options[name] !== '').map((name) => [
            name,
            String(options[name]),
          ]),
        ),
      },
      ctx.jobId,
    ).catch((error: unknown) => {
      throw error instanceof GotenbergError ? toConversionError(error) : error
    })
    yield {
      index: 0,
      total: 1,
      extension: '.pdf',
      contentType: 'application/pdf',
      body: options.userPassword ? requireEncryption(pdf) : pdf,
    }
  },
})

/** Gotenberg's failure as the job tells it: the engine's code, the document's fault with Gotenberg's reason, else
 * which kind of trouble the converter had; the URL and settings stay in the cause, for the log. */
export function toConversionError(error: GotenbergError): ConversionError {
  return new ConversionError(failureMessage(error), {
    retryable: error.kind !== 'document',
    code: error.code,
    cause: error,
  })
}

function failureMessage(error: GotenbergError): string {
  switch (error.kind) {
    case 'document':
      return `the document was refused: ${error.reason}`
    case 'credentials':
      return 'the document converter is misconfigured'
    case 'timeout':
      return 'the document converter did not answer in time'
    case 'unreachable':
      return 'the document converter cannot be reached'
    default:
      return `the document converter failed (${error.status})`
  }
}
