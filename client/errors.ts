// The errors the client throws. Every API error is JSON { message, code }; `code` is one of ERROR_CODES (the table
// of worker/errors.ts and docs/api-and-client.md, which test/client/types.test.ts holds equal to this list).

/** Every code the API answers with. */
export const ERROR_CODES = [
  'VALIDATION_FAILED',
  'MALFORMED_REQUEST',
  'BAD_MULTIPART',
  'FILE_MISSING',
  'SIZE_MISMATCH',
  'UPLOAD_INCOMPLETE',
  'PART_SIZE_MISMATCH',
  'CHECKSUM_UNSUPPORTED',
  'NAME_FORMAT_CHARACTER',
  'CALLBACK_URL_REFUSED',
  'OAUTH_REDIRECT_REFUSED',
  'OAUTH_STATE_INVALID',
  'TOKEN_MISSING',
  'TOKEN_INVALID',
  'TOKEN_REVOKED',
  'INVALID_CREDENTIALS',
  'INVALID_REFRESH_TOKEN',
  'REFRESH_TOKEN_REUSED',
  'FILE_LINK_INVALID',
  'EVENTS_LINK_INVALID',
  'SECOND_FACTOR_REQUIRED',
  'SECOND_FACTOR_INVALID',
  'OAUTH_FAILED',
  'PASSKEY_INVALID',
  'REGISTRATION_DISABLED',
  'EMAIL_NOT_VERIFIED',
  'FORBIDDEN',
  'INSUFFICIENT_SCOPE',
  'CONFIRMATION_REQUIRED',
  'CURRENT_PASSWORD_INCORRECT',
  'NOT_FOUND',
  'USER_NOT_FOUND',
  'RECORD_NOT_FOUND',
  'FILE_NOT_FOUND',
  'UPLOAD_NOT_FOUND',
  'JOB_NOT_FOUND',
  'SESSION_NOT_FOUND',
  'API_KEY_NOT_FOUND',
  'OAUTH_PROVIDER_NOT_FOUND',
  'IDENTITY_NOT_FOUND',
  'PASSKEY_NOT_FOUND',
  'METHOD_NOT_ALLOWED',
  'EMAIL_TAKEN',
  'ALREADY_VERIFIED',
  'TOTP_ALREADY_ENABLED',
  'TOTP_NOT_ENABLED',
  'OAUTH_ACCOUNT_EXISTS',
  'OAUTH_IDENTITY_TAKEN',
  'PASSKEY_LIMIT_REACHED',
  'API_KEY_LIMIT_REACHED',
  'JOB_NOT_FAILED',
  'JOB_ALREADY_RUNNING',
  'FILE_REPLACED_MEANWHILE',
  'UPLOAD_OFFSET_MISMATCH',
  'UPLOAD_COMPLETED',
  'PRECONDITION_FAILED',
  'TUS_VERSION_UNSUPPORTED',
  'BODY_TOO_LARGE',
  'FILE_TOO_LARGE',
  'QUOTA_EXCEEDED',
  'UNSUPPORTED_FORMAT',
  'CONTENT_TYPE_UNSUPPORTED',
  'RANGE_NOT_SATISFIABLE',
  'NOT_CONVERTIBLE',
  'CONVERSION_FAILED',
  'OAUTH_EMAIL_REQUIRED',
  'RATE_LIMITED',
  'CHECKSUM_MISMATCH',
  'INTERNAL_ERROR',
  'CONVERTER_MISCONFIGURED',
  'OAUTH_PROVIDER_UNAVAILABLE',
  'CONVERTER_UNAVAILABLE',
  'CONVERTER_NOT_CONFIGURED',
  'CONVERTER_TIMEOUT',
] as const

export type ErrorCode = (typeof ERROR_CODES)[number]

const KNOWN_CODES: ReadonlySet<string> = new Set(ERROR_CODES)

/** A non-2xx answer: its status, the API's message and code, and the whole body (validation issues, limits). */
export class EdgefloorError extends Error {
  override readonly name = 'EdgefloorError'
  readonly status: number
  /** The API's code; undefined for an answer that is not the API's JSON (a proxy's error page). */
  readonly code: ErrorCode | undefined
  readonly body: unknown
  /** Seconds to wait before asking again (429, 503), from Retry-After. */
  readonly retryAfterSeconds: number | undefined
  /** The request id of a 500, to quote when reporting it. */
  readonly requestId: string | undefined

  constructor(status: number, body: unknown, headers?: { get(name: string): string | null }) {
    const fields = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {}
    super(
      typeof fields.message === 'string' ? fields.message : typeof body === 'string' && body ? body : `HTTP ${status}`,
    )
    this.status = status
    this.code = typeof fields.code === 'string' && KNOWN_CODES.has(fields.code) ? (fields.code as ErrorCode) : undefined
    this.body = body
    const retryAfter = Number(headers?.get('retry-after') ?? Number.NaN)
    this.retryAfterSeconds = Number.isFinite(retryAfter) ? retryAfter : undefined
    this.requestId =
      typeof fields.request_id === 'string' ? fields.request_id : (headers?.get('x-request-id') ?? undefined)
  }
}

/** True when `error` is an EdgefloorError (with that code, when one is given): narrows in a catch block. */
export function isEdgefloorError(error: unknown, code?: ErrorCode): error is EdgefloorError {
  return error instanceof EdgefloorError && (code === undefined || error.code === code)
}
