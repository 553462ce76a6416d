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
  if (response.ok && response.body) return response.body
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
