// The one error model: ApiError carries a public message and status; the private cause stays in the log.
import { HTTPException } from 'hono/http-exception'
import type { ContentfulStatusCode } from 'hono/utils/http-status'

export interface ErrorBody {
  message: string
  code?: string
  issues?: unknown[]
  [extra: string]: unknown
}

export class ApiError extends Error {
  readonly status: ContentfulStatusCode
  readonly code: string | undefined
  readonly details: Record<string, unknown>
  readonly headers: Record<string, string>

  constructor(
    status: ContentfulStatusCode,
    message: string,
    options: { code?: string; details?: Record<string, unknown>; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause })
    this.status = status
    this.code = options.code
    this.details = options.details ?? {}
    this.headers = options.headers ?? {}
  }

  toBody(): ErrorBody {
    return { message: this.message, ...(this.code ? { code: this.code } : {}), ...this.details }
  }
}

/** Turns any thrown value into the public JSON error; unknown errors never show their internals. */
export function toErrorResponse(error: unknown, requestId: string): Response {
  if (error instanceof ApiError) {
    return Response.json(error.toBody(), { status: error.status, headers: error.headers })
  }
  if (error instanceof HTTPException && error.status < 500) {
    // Hono's own 4xx (e.g. malformed JSON from the validator): its message is meant for the client.
    return Response.json({ message: error.message || 'bad request', code: 'bad_request' }, { status: error.status })
  }
  console.error(JSON.stringify({ level: 'error', requestId, error: describeError(error) }))
  return Response.json({ message: 'internal error', request_id: requestId }, { status: 500 })
}

export function describeError(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}${error.cause ? ` (cause: ${describeError(error.cause)})` : ''}`
  return String(error)
}
