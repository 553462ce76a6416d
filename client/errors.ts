// The errors the client throws. Every API error is JSON { message, code }; `code` is one of ERROR_CODES (the table
// of worker/errors.ts and docs/api-and-client.md, which test/client/types.test.ts holds equal to this list), and
// some errors carry details (ErrorDetails: the Error schema of the API's OpenAPI document, which the same test holds
// equal to this type).

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

/** A refused input of a validation error: the field's path, what is wrong with it, and the validator's code. */
export interface ValidationIssue {
  path: string
  message: string
  code: string
}

/**
 * The fields an error may carry beside `message` and `code`, each named by the codes that carry it. Sizes are in
 * bytes and waits in seconds.
 */
export interface ErrorDetails {
  /** VALIDATION_FAILED (and NAME_FORMAT_CHARACTER from a request schema): each input that was refused. */
  issues?: ValidationIssue[]
  /** BODY_TOO_LARGE: the most bytes a JSON body or form may have; FILE_TOO_LARGE: the most the file may have. */
  max_bytes?: number
  /** FILE_TOO_LARGE of an upload part, VALIDATION_FAILED of a part_bytes out of range: the most bytes of a part. */
  max_part_bytes?: number
  /** VALIDATION_FAILED of a part_bytes out of range: the fewest bytes of a part. */
  min_part_bytes?: number
  /** PART_SIZE_MISMATCH: the upload's part size; VALIDATION_FAILED of a part_bytes needing too many parts: the one asked. */
  part_bytes?: number
  /** VALIDATION_FAILED of a part_bytes needing too many parts: the most parts an upload may have. */
  max_parts?: number
  /** UPLOAD_OFFSET_MISMATCH: the bytes the server holds, where the next bytes must start. */
  offset?: number
  /** CONTENT_TYPE_UNSUPPORTED of an upload: the ways a file may be sent. */
  accepted?: string[]
  /** QUOTA_EXCEEDED: the bytes the account's files use. */
  used?: number
  /** QUOTA_EXCEEDED: the account's storage quota in bytes. */
  quota?: number
  /** RATE_LIMITED: seconds to wait before asking again (also `retryAfterSeconds`). */
  retry_after?: number
  /** METHOD_NOT_ALLOWED: the methods the path answers. */
  allow?: string[]
  /** FORBIDDEN: the access rule the caller did not pass. */
  rule?: string
  /** INSUFFICIENT_SCOPE: the scope the route needs, which the API key lacks. */
  scope?: string
  /** API_KEY_LIMIT_REACHED: the most API keys an account may hold. */
  max_keys?: number
  /** PASSKEY_LIMIT_REACHED: the most passkeys an account may hold. */
  max_passkeys?: number
  /** SECOND_FACTOR_REQUIRED: the token to send with the code to POST /auth/login/totp. */
  second_factor_token?: string
  /** SECOND_FACTOR_REQUIRED: seconds until `second_factor_token` expires. */
  expires_in?: number
  /** SECOND_FACTOR_REQUIRED: the second factors the account may answer with (`totp`, `recovery_code`). */
  methods?: string[]
  /** NAME_FORMAT_CHARACTER: the format character the name may not hold, as `U+XXXX`. */
  character?: string
  /** A failed conversion (CONVERSION_FAILED, FILE_TOO_LARGE, CONVERTER_TIMEOUT, …): the job's id. */
  job?: string
  /** CONVERTER_NOT_CONFIGURED: the converter the conversion needs, whose provider is not configured. */
  converter?: string
  /** INTERNAL_ERROR: the id the error was logged under (also `requestId`). */
  request_id?: string
}

/** A non-2xx answer: its status, the API's message, code and details, and the whole body. */
export class EdgefloorError extends Error {
  override readonly name = 'EdgefloorError'
  readonly status: number
  /** The API's code; undefined for an answer that is not the API's JSON (a proxy's error page). */
  readonly code: ErrorCode | undefined
  /** The answer's fields beside `message` and `code` (validation issues, limits, the failed job's id). */
  readonly details: ErrorDetails
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
    const { message: _message, code: _code, ...details } = fields
    this.details = details as ErrorDetails
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
