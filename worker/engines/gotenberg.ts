// A client for Gotenberg 8's routes (the official container, or our sidecar that speaks the same API): fetch +
// FormData, Gotenberg-Trace, optional basic auth or a Cloudflare Access service token, a timeout; through a
// Container binding's stub when one is given, over the network otherwise. Gotenberg's statuses become
// GotenbergErrors whose `kind` says whose fault: 'document' (400/413/415, permanent), 'credentials' (401/403),
// 'unreachable', 'timeout' and 'server' (429/5xx, transient), and whose `code` is the error table's. Their messages
// name the URL: for the log only.
import { Buffer } from 'node:buffer'
import type { ConversionErrorCode } from '../conversion-error'

export type GotenbergFailure = 'document' | 'credentials' | 'unreachable' | 'timeout' | 'server'

export class GotenbergError extends Error {
  override readonly name = 'GotenbergError'
  readonly kind: GotenbergFailure
  /** The error table's code for this failure: the one place Gotenberg's HTTP status is read. */
  readonly code: ConversionErrorCode
  /** Gotenberg's HTTP status, when it answered. */
  readonly status: number | undefined
  /** Gotenberg's own reason for refusing a document (its form-field or document complaint), meant for its client. */
  readonly reason: string | undefined

  constructor(
    kind: GotenbergFailure,
    message: string,
    options: { status?: number; reason?: string; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause })
    this.kind = kind
    this.code = failureCode(kind, options.status)
    this.status = options.status
    this.reason = options.reason
  }
}

/** Gotenberg 8's refusals of a document: 413 "Request Entity Too Large" (its body limit), 415 for a file of a kind
 * its route does not convert, 400 for the rest (a form field, a corrupt document). */
function failureCode(kind: GotenbergFailure, status: number | undefined): ConversionErrorCode {
  switch (kind) {
    case 'document':
      return status === 413 ? 'FILE_TOO_LARGE' : status === 415 ? 'UNSUPPORTED_FORMAT' : 'CONVERSION_FAILED'
    case 'credentials':
      return 'CONVERTER_MISCONFIGURED'
    case 'timeout':
      return 'CONVERTER_TIMEOUT'
    default:
      return 'CONVERTER_UNAVAILABLE'
  }
}

export interface GotenbergSettings {
  readonly url: string
  readonly username?: string
  readonly password?: string
  /** A Cloudflare Access service token (CF-Access-Client-Id / -Secret), for a sidecar behind Cloudflare Tunnel. */
  readonly accessClientId?: string
  readonly accessClientSecret?: string
  readonly timeoutMs: number
  /** Where requests go instead of the network: a Container's Durable Object stub (its fetch reaches the sidecar). */
  readonly fetcher?: { fetch(request: Request): Promise<Response> }
}

/** The client's settings from a converter's own settings, through the Container's binding when the Worker has one. */
export function gotenbergSettings(ctx: {
  readonly settings: {
    GOTENBERG_URL: string
    GOTENBERG_USERNAME?: string
    GOTENBERG_PASSWORD?: string
    GOTENBERG_ACCESS_CLIENT_ID?: string
    GOTENBERG_ACCESS_CLIENT_SECRET?: string
    GOTENBERG_TIMEOUT_MS: number
  }
  readonly gotenberg?: GotenbergSettings['fetcher']
}): GotenbergSettings {
  const { settings } = ctx
  return {
    url: settings.GOTENBERG_URL,
    username: settings.GOTENBERG_USERNAME,
    password: settings.GOTENBERG_PASSWORD,
    accessClientId: settings.GOTENBERG_ACCESS_CLIENT_ID,
    accessClientSecret: settings.GOTENBERG_ACCESS_CLIENT_SECRET,
    timeoutMs: settings.GOTENBERG_TIMEOUT_MS,
    fetcher: ctx.gotenberg,
  }
}

/** The headers every request carries: the trace, basic auth, the Access service token. */
function requestHeaders(settings: GotenbergSettings, trace: string): Record<string, string> {
  const headers: Record<string, string> = { 'gotenberg-trace': trace }
  if (settings.username) headers.authorization = basicAuthorization(settings.username, settings.password ?? '')
  if (settings.accessClientId && settings.accessClientSecret) {
    headers['cf-access-client-id'] = settings.accessClientId
    headers['cf-access-client-secret'] = settings.accessClientSecret
  }
  return headers
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

/** RFC 7617 with charset UTF-8: btoa alone throws on characters outside Latin-1. node:buffer, not
 * Uint8Array.prototype.toBase64: the sidecar's tests run this client on Node 22, which lacks it. */
function basicAuthorization(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`
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
  if (options.facturxXml)
    form.append('facturxXml', new File([options.facturxXml], 'factur-x.xml', { type: 'text/xml' }))
  for (const [name, value] of Object.entries(options.extra ?? {})) form.append(name, value)
  return postForm(settings, '/forms/libreoffice/convert', form, trace)
}

/** Posts a form to one of Gotenberg's routes: the answer's body, or a GotenbergError saying whose fault. */
export async function postForm(
  settings: GotenbergSettings,
  path: string,
  form: FormData,
  trace: string,
): Promise<ReadableStream<Uint8Array>> {
  const headers = requestHeaders(settings, trace)
  const endpoint = new URL(path, settings.url).toString()
  let response: Response
  try {
    const init = { method: 'POST', body: form, headers, signal: AbortSignal.timeout(settings.timeoutMs) }
    response = settings.fetcher
      ? await settings.fetcher.fetch(new Request(endpoint, init))
      : await fetch(endpoint, init)
  } catch (error) {
    const timedOut = (error as Error)?.name === 'TimeoutError'
    if (timedOut)
      throw new GotenbergError(
        'timeout',
        `Gotenberg at ${settings.url} did not answer within ${settings.timeoutMs} ms`,
        { cause: error },
      )
    throw new GotenbergError(
      'unreachable',
      `Gotenberg at ${settings.url} cannot be reached: ${(error as Error)?.message ?? error}`,
      { cause: error },
    )
  }
  if (response.ok && response.body) return response.body
  const reason = (await response.text()).trim().slice(0, 500) || response.statusText
  const status = response.status
  if (status === 400 || status === 413 || status === 415) {
    throw new GotenbergError('document', `Gotenberg at ${settings.url} refused the document (${status}): ${reason}`, {
      status,
      reason,
    })
  }
  if (status === 401 || status === 403) {
    throw new GotenbergError(
      'credentials',
      `Gotenberg at ${settings.url} refused our credentials (${status}): check GOTENBERG_USERNAME and GOTENBERG_PASSWORD, or GOTENBERG_ACCESS_CLIENT_ID and GOTENBERG_ACCESS_CLIENT_SECRET`,
      { status },
    )
  }
  throw new GotenbergError('server', `Gotenberg at ${settings.url} answered ${status}: ${reason}`, { status, reason })
}
