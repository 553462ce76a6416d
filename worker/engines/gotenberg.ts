// A client for Gotenberg 8's LibreOffice route (the official container, or our sidecar that speaks the same
// API): fetch + FormData, Gotenberg-Trace, optional basic auth, a timeout. Gotenberg's statuses become
// ConversionErrors: 400/413/415 are the document's fault (permanent), 429/503/5xx/network are transient.
import { ConversionError } from '../converters/converter'
import { toBase64 } from './base64'

export interface GotenbergSettings {
  readonly url: string
  readonly username?: string
  readonly password?: string
  readonly timeoutMs: number
}

export interface OfficeOptions {
  readonly landscape?: boolean
  readonly nativePageRanges?: string
  readonly pdfa?: string
  readonly pdfua?: boolean
  readonly password?: string
  /** Further Gotenberg form fields, by name (validated by the caller). */
  readonly extra?: Readonly<Record<string, string>>
}

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
          controller.error(new ConversionError('Gotenberg answered an unencrypted PDF although userPassword asked for encryption', { status: 502 }))
        }
      },
    }),
  )
}

/** RFC 7617 with charset UTF-8: btoa alone throws on characters outside Latin-1. */
function basicAuthorization(username: string, password: string): string {
  const bytes = new TextEncoder().encode(`${username}:${password}`)
  return `Basic ${toBase64(bytes)}`
}

export async function convertOfficeToPdf(
  settings: GotenbergSettings,
  document: { filename: string; bytes: Uint8Array; contentType: string },
  options: OfficeOptions,
  trace: string,
): Promise<ReadableStream<Uint8Array>> {
  const form = new FormData()
  form.append('files', new File([document.bytes], document.filename, { type: document.contentType }))
  if (options.landscape) form.append('landscape', 'true')
  if (options.nativePageRanges) form.append('nativePageRanges', options.nativePageRanges)
  if (options.pdfa) form.append('pdfa', options.pdfa)
  if (options.pdfua) form.append('pdfua', 'true')
  if (options.password) form.append('password', options.password)
  for (const [name, value] of Object.entries(options.extra ?? {})) form.append(name, value)
  const headers: Record<string, string> = { 'gotenberg-trace': trace }
  if (settings.username) headers.authorization = basicAuthorization(settings.username, settings.password ?? '')
  const endpoint = new URL('/forms/libreoffice/convert', settings.url).toString()
  let response: Response
  try {
    response = await fetch(endpoint, { method: 'POST', body: form, headers, signal: AbortSignal.timeout(settings.timeoutMs) })
  } catch (error) {
    const timedOut = (error as Error)?.name === 'TimeoutError'
    throw new ConversionError(
      timedOut ? `Gotenberg did not answer within ${settings.timeoutMs} ms` : `Gotenberg at ${settings.url} cannot be reached: ${(error as Error)?.message ?? error}`,
      { retryable: true, status: timedOut ? 504 : 503, cause: error },
    )
  }
  if (response.ok && response.body) return options.extra?.userPassword ? requireEncryption(response.body) : response.body
  const reason = (await response.text()).trim().slice(0, 500) || response.statusText
  if (response.status === 400 || response.status === 413 || response.status === 415) {
    throw new ConversionError(`Gotenberg refused the document: ${reason}`, { status: response.status === 400 ? 422 : response.status })
  }
  if (response.status === 401 || response.status === 403) {
    // Our credentials are wrong: a configuration fault, worth retrying once it is fixed.
    throw new ConversionError(`Gotenberg refused our credentials (${response.status}): check GOTENBERG_USERNAME and GOTENBERG_PASSWORD`, { retryable: true, status: 502 })
  }
  throw new ConversionError(`Gotenberg answered ${response.status}: ${reason}`, { retryable: true, status: 503 })
}
