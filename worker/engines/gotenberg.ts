// A client for Gotenberg 8's LibreOffice route (the official container, or our sidecar that speaks the same
// API): fetch + FormData, Gotenberg-Trace, optional basic auth, a timeout. Gotenberg's statuses become
// GotenbergErrors whose `kind` says whose fault: 'document' (400/413/415, permanent), 'credentials' (401/403),
// 'unreachable', 'timeout' and 'server' (429/5xx, transient). Their messages name the URL: for the log only.
import { toBase64 } from './base64'

export type GotenbergFailure = 'document' | 'credentials' | 'unreachable' | 'timeout' | 'server'

export class GotenbergError extends Error {
  override readonly name = 'GotenbergError'
  readonly kind: GotenbergFailure
  /** Gotenberg's HTTP status, when it answered. */
  readonly status: number | undefined
  /** Gotenberg's own reason for refusing a document (its form-field or document complaint), meant for its client. */
  readonly reason: string | undefined

  constructor(kind: GotenbergFailure, message: string, options: { status?: number; reason?: string; cause?: unknown } = {}) {
    super(message, { cause: options.cause })
    this.kind = kind
    this.status = options.status
    this.reason = options.reason
  }
}

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
  /** Factur-X: the invoice XML, sent as Gotenberg's facturxXml file. */
  readonly facturxXml?: string
  /** Further Gotenberg form fields, by name (validated by the caller). */
  readonly extra?: Readonly<Record<string, string>>
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
  if (options.facturxXml) form.append('facturxXml', new File([options.facturxXml], 'factur-x.xml', { type: 'text/xml' }))
  for (const [name, value] of Object.entries(options.extra ?? {})) form.append(name, value)
  const headers: Record<string, string> = { 'gotenberg-trace': trace }
  if (settings.username) headers.authorization = basicAuthorization(settings.username, settings.password ?? '')
  const endpoint = new URL('/forms/libreoffice/convert', settings.url).toString()
  let response: Response
  try {
    response = await fetch(endpoint, { method: 'POST', body: form, headers, signal: AbortSignal.timeout(settings.timeoutMs) })
  } catch (error) {
    const timedOut = (error as Error)?.name === 'TimeoutError'
    if (timedOut) throw new GotenbergError('timeout', `Gotenberg at ${settings.url} did not answer within ${settings.timeoutMs} ms`, { cause: error })
    throw new GotenbergError('unreachable', `Gotenberg at ${settings.url} cannot be reached: ${(error as Error)?.message ?? error}`, { cause: error })
  }
  if (response.ok && response.body) return response.body
  const reason = (await response.text()).trim().slice(0, 500) || response.statusText
  const status = response.status
  if (status === 400 || status === 413 || status === 415) {
    throw new GotenbergError('document', `Gotenberg at ${settings.url} refused the document (${status}): ${reason}`, { status, reason })
  }
  if (status === 401 || status === 403) {
    throw new GotenbergError('credentials', `Gotenberg at ${settings.url} refused our credentials (${status}): check GOTENBERG_USERNAME and GOTENBERG_PASSWORD`, { status })
  }
  throw new GotenbergError('server', `Gotenberg at ${settings.url} answered ${status}: ${reason}`, { status, reason })
}
