// Gotenberg's webhook: a request with Gotenberg-Webhook-Url is answered 204 as soon as its form is read, and the
// result is sent later to that URL (or, on failure, {"status","message"} as JSON to Gotenberg-Webhook-Error-Url),
// with Gotenberg's methods, extra headers and retries (network errors, 429 and 5xx, exponential waits).
import { checkUrl, sendRequest, UrlRefusedError, type UrlPolicy } from './outbound.ts'

export interface WebhookSettings {
  /** Refuses every webhook request with a 400 (Gotenberg's --webhook-disable, which drops the feature). */
  readonly disabled: boolean
  readonly policy: UrlPolicy
  readonly errorPolicy: UrlPolicy
  readonly maxRetry: number
  readonly retryMinWaitMs: number
  readonly retryMaxWaitMs: number
  readonly timeoutMs: number
}

export interface Webhook {
  readonly url: URL
  readonly method: string
  readonly errorUrl: URL
  readonly errorMethod: string
  readonly extraHeaders: Readonly<Record<string, string>>
}

/** A header problem, worded as Gotenberg words it; the server answers it with its status. */
export class WebhookHeaderError extends Error {
  readonly status: number
  constructor(status: number, message: string) {
    super(message)
    this.status = status
  }
}

const METHODS = ['POST', 'PATCH', 'PUT']
/** Headers the sidecar sets on a delivery; a client's extra header never replaces them. */
const OWN_HEADERS = ['content-type', 'content-length', 'gotenberg-trace', 'host', 'transfer-encoding', 'connection']

/** The webhook a request asks for, or undefined; refuses a bad or forbidden one before the body is read. */
export function readWebhook(
  headers: Readonly<Record<string, string | string[] | undefined>>,
  settings: WebhookSettings,
): Webhook | undefined {
  const header = (name: string) => {
    const value = headers[name.toLowerCase()]
    return (Array.isArray(value) ? value[0] : value) ?? ''
  }
  const url = header('gotenberg-webhook-url')
  if (!url) return undefined
  if (settings.disabled)
    throw new WebhookHeaderError(
      400,
      "Invalid 'Gotenberg-Webhook-Url' header: webhooks are disabled on this server (SIDECAR_WEBHOOK_DISABLE)",
    )
  const errorUrl = header('gotenberg-webhook-error-url')
  if (!errorUrl)
    throw new WebhookHeaderError(
      400,
      "Invalid 'Gotenberg-Webhook-Error-Url' header: empty value or header not provided",
    )
  const forbidden = (name: string, raw: string, policy: UrlPolicy) => {
    try {
      return checkUrl(raw, policy)
    } catch (error) {
      if (error instanceof UrlRefusedError)
        throw new WebhookHeaderError(403, `Forbidden: the '${name}' header: ${error.message}`)
      throw error
    }
  }
  const method = (name: string) => {
    const value = header(name).toUpperCase() || 'POST'
    if (!METHODS.includes(value))
      throw new WebhookHeaderError(
        400,
        `Invalid '${name}' header value: expected 'POST', 'PATCH' or 'PUT', but got '${value}'`,
      )
    return value
  }
  let extraHeaders: Record<string, string> = {}
  const extra = header('gotenberg-webhook-extra-http-headers')
  if (extra) {
    let parsed: unknown
    try {
      parsed = JSON.parse(extra)
    } catch (error) {
      throw new WebhookHeaderError(
        400,
        `Invalid 'Gotenberg-Webhook-Extra-Http-Headers' header value: ${(error as Error).message}`,
      )
    }
    const valid =
      typeof parsed === 'object' &&
      parsed !== null &&
      !Array.isArray(parsed) &&
      Object.entries(parsed).every(
        ([key, value]) =>
          /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(key) && typeof value === 'string' && !/[\r\n\0]/.test(value),
      )
    if (!valid)
      throw new WebhookHeaderError(
        400,
        "Invalid 'Gotenberg-Webhook-Extra-Http-Headers' header value: want a JSON object of header names to string values",
      )
    extraHeaders = Object.fromEntries(
      Object.entries(parsed as Record<string, string>).filter(([key]) => !OWN_HEADERS.includes(key.toLowerCase())),
    )
  }
  return {
    url: forbidden('Gotenberg-Webhook-Url', url, settings.policy),
    method: method('Gotenberg-Webhook-Method'),
    errorUrl: forbidden('Gotenberg-Webhook-Error-Url', errorUrl, settings.errorPolicy),
    errorMethod: method('Gotenberg-Webhook-Error-Method'),
    extraHeaders,
  }
}

export interface WebhookResult {
  readonly body: Uint8Array
  readonly type: string
  /** The value of Content-Disposition. */
  readonly disposition: string
}

/** One delivery with retries; resolves whether it was accepted (a 2xx or 3xx, as Gotenberg's client counts it). */
async function deliver(
  url: URL,
  method: string,
  policy: UrlPolicy,
  headers: Record<string, string>,
  body: Uint8Array,
  settings: WebhookSettings,
): Promise<boolean> {
  for (let attempt = 0; ; attempt++) {
    let retryable = true
    try {
      const answer = await sendRequest(url, policy, {
        method,
        headers,
        body,
        timeoutMs: settings.timeoutMs,
        maxBytes: 1024 * 1024,
      })
      if (answer.status < 400) return true
      retryable = answer.status === 429 || (answer.status >= 500 && answer.status !== 501)
    } catch (error) {
      retryable = !(error instanceof UrlRefusedError)
    }
    if (!retryable || attempt >= settings.maxRetry) return false
    const waitMs = Math.min(settings.retryMaxWaitMs, settings.retryMinWaitMs * 2 ** attempt)
    await new Promise((resolve) => setTimeout(resolve, waitMs))
  }
}

/**
 * Waits for the conversion and sends its result to the webhook, or its error to the error URL (also when the
 * result could not be delivered). `describe` words an error as the synchronous answer would have.
 */
export async function sendToWebhook(
  webhook: Webhook,
  result: Promise<WebhookResult>,
  describe: (error: unknown) => [number, string],
  trace: string,
  settings: WebhookSettings,
  log: (entry: Record<string, unknown>) => void,
): Promise<void> {
  let failure: unknown
  try {
    const { body, type, disposition } = await result
    const headers = { ...webhook.extraHeaders, 'content-type': type, 'gotenberg-trace': trace }
    if (!Object.keys(webhook.extraHeaders).some((key) => key.toLowerCase() === 'content-disposition'))
      Object.assign(headers, { 'content-disposition': disposition })
    if (await deliver(webhook.url, webhook.method, settings.policy, headers, body, settings)) {
      log({
        level: 'info',
        message: 'request to webhook handled',
        webhook_url: webhook.url.origin,
        method: webhook.method,
        trace,
        correlation_id: trace,
      })
      return
    }
    failure = new Error('the webhook did not accept the result')
  } catch (error) {
    failure = error
  }
  const [status, message] = describe(failure)
  const body = new TextEncoder().encode(JSON.stringify({ status, message }))
  const delivered = await deliver(
    webhook.errorUrl,
    webhook.errorMethod,
    settings.errorPolicy,
    { ...webhook.extraHeaders, 'content-type': 'application/json', 'gotenberg-trace': trace },
    body,
    settings,
  )
  log({
    level: delivered ? 'warn' : 'error',
    message: delivered ? 'request to webhook with error details handled' : 'send error response to webhook failed',
    webhook_url: webhook.errorUrl.origin,
    status,
    trace,
    correlation_id: trace,
  })
}
