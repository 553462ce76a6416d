// The one error model: a table of codes (status and public message), ApiError on Hono's HTTPException built from
// a code, and the JSON answer `{ message, code }`. The private cause travels with the error and goes to the log.
import { HTTPException } from 'hono/http-exception'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
// A type only, erased before the Worker runs: the details are declared with the OpenAPI document's Error schema,
// and this module stays free of zod (the API Worker's cold path loads it).
import type { ErrorDetails } from './api'

export type { ErrorDetails }

interface ErrorEntry {
  readonly status: ContentfulStatusCode
  readonly message: string
}

/**
 * Every code the API answers with.
 * The error table of docs/api-and-client.md and the OpenAPI `Error.code` enum are this table.
 */
export const ERRORS = {
  VALIDATION_FAILED: { status: 400, message: 'invalid request' },
  MALFORMED_REQUEST: { status: 400, message: 'the request body cannot be read' },
  BAD_MULTIPART: { status: 400, message: 'the multipart body is malformed' },
  FILE_MISSING: { status: 400, message: 'the request has no file' },
  SIZE_MISMATCH: { status: 400, message: "the file's size does not match the declared size" },
  UPLOAD_INCOMPLETE: { status: 400, message: 'the upload is incomplete' },
  PART_SIZE_MISMATCH: {
    status: 400,
    message: 'every part but the last must have part_bytes bytes, and the last no more',
  },
  CHECKSUM_UNSUPPORTED: { status: 400, message: 'the checksum algorithm is not supported' },
  NAME_FORMAT_CHARACTER: { status: 400, message: 'the name contains an invisible format character' },
  CALLBACK_URL_REFUSED: { status: 400, message: 'callback_url is not an allowed https URL' },
  OAUTH_REDIRECT_REFUSED: { status: 400, message: 'redirect_url is not one of AUTH_OAUTH_REDIRECT_URLS' },
  OAUTH_STATE_INVALID: { status: 400, message: 'the sign-in state is unknown, used or expired; start again' },
  TOKEN_MISSING: { status: 401, message: 'missing bearer token' },
  TOKEN_INVALID: { status: 401, message: 'invalid or expired token' },
  TOKEN_REVOKED: { status: 401, message: 'token was revoked' },
  INVALID_CREDENTIALS: { status: 401, message: 'invalid email or password' },
  INVALID_REFRESH_TOKEN: { status: 401, message: 'invalid or expired refresh token' },
  REFRESH_TOKEN_REUSED: { status: 401, message: 'refresh token reuse detected: the session was revoked' },
  FILE_LINK_INVALID: { status: 401, message: 'the file link is invalid or has expired' },
  EVENTS_LINK_INVALID: { status: 401, message: 'the job events link is invalid or has expired' },
  SECOND_FACTOR_REQUIRED: {
    status: 401,
    message: 'a second factor is required: send a code with second_factor_token to POST /auth/login/totp',
  },
  SECOND_FACTOR_INVALID: { status: 401, message: 'the code is wrong, expired or already used' },
  OAUTH_FAILED: { status: 401, message: "the provider's answer could not be verified" },
  PASSKEY_INVALID: { status: 401, message: 'the passkey could not be verified' },
  REGISTRATION_DISABLED: { status: 403, message: 'registration is disabled' },
  EMAIL_NOT_VERIFIED: { status: 403, message: 'email address not verified' },
  FORBIDDEN: { status: 403, message: 'not allowed' },
  INSUFFICIENT_SCOPE: { status: 403, message: "the API key's scopes do not allow this request" },
  CONFIRMATION_REQUIRED: {
    status: 403,
    message: 'confirm with current_password (an account without a password: sign in again first)',
  },
  CURRENT_PASSWORD_INCORRECT: { status: 403, message: 'the current password is wrong' },
  NOT_FOUND: { status: 404, message: 'not found' },
  USER_NOT_FOUND: { status: 404, message: 'user not found' },
  RECORD_NOT_FOUND: { status: 404, message: 'record not found' },
  FILE_NOT_FOUND: { status: 404, message: 'file not found' },
  UPLOAD_NOT_FOUND: { status: 404, message: 'upload not found' },
  JOB_NOT_FOUND: { status: 404, message: 'job not found' },
  SESSION_NOT_FOUND: { status: 404, message: 'session not found' },
  API_KEY_NOT_FOUND: { status: 404, message: 'no API key with this id' },
  OAUTH_PROVIDER_NOT_FOUND: { status: 404, message: 'no sign-in provider with this id' },
  IDENTITY_NOT_FOUND: { status: 404, message: 'no linked provider with this id' },
  PASSKEY_NOT_FOUND: { status: 404, message: 'no passkey with this id' },
  METHOD_NOT_ALLOWED: { status: 405, message: 'the method is not allowed here' },
  EMAIL_TAKEN: { status: 409, message: 'an account with this email already exists' },
  ALREADY_VERIFIED: { status: 409, message: 'email address already verified' },
  TOTP_ALREADY_ENABLED: { status: 409, message: 'a TOTP second factor is already enabled; remove it first' },
  TOTP_NOT_ENABLED: { status: 409, message: 'no TOTP second factor is enabled' },
  OAUTH_ACCOUNT_EXISTS: {
    status: 409,
    message: 'an account with this email exists; sign in to it and link the provider there',
  },
  OAUTH_IDENTITY_TAKEN: { status: 409, message: 'this provider account is linked to another account' },
  PASSKEY_LIMIT_REACHED: { status: 409, message: 'too many passkeys; remove one first' },
  API_KEY_LIMIT_REACHED: { status: 409, message: 'too many API keys; revoke one first' },
  JOB_NOT_FAILED: { status: 409, message: 'only a failed job can be retried' },
  JOB_ALREADY_RUNNING: { status: 409, message: 'an equal conversion of this file is queued or running' },
  FILE_REPLACED_MEANWHILE: {
    status: 409,
    message: 'the file was replaced meanwhile by another request; read it again',
  },
  UPLOAD_OFFSET_MISMATCH: { status: 409, message: "the request's Upload-Offset is not the upload's offset" },
  UPLOAD_COMPLETED: { status: 409, message: 'the upload was completed by another request' },
  PRECONDITION_FAILED: {
    status: 412,
    message: "the file does not match the request's If-Match or If-Unmodified-Since",
  },
  TUS_VERSION_UNSUPPORTED: { status: 412, message: 'this server speaks tus 1.0.0' },
  BODY_TOO_LARGE: { status: 413, message: 'the request body is too large' },
  FILE_TOO_LARGE: { status: 413, message: 'the file is too large' },
  QUOTA_EXCEEDED: { status: 413, message: 'storage quota exceeded' },
  UNSUPPORTED_FORMAT: { status: 415, message: 'no converter accepts this file' },
  CONTENT_TYPE_UNSUPPORTED: { status: 415, message: 'the content type is not accepted here' },
  RANGE_NOT_SATISFIABLE: { status: 416, message: 'the requested range is not satisfiable' },
  NOT_CONVERTIBLE: { status: 422, message: 'the file cannot be converted' },
  CONVERSION_FAILED: { status: 422, message: 'the conversion failed' },
  OAUTH_EMAIL_REQUIRED: { status: 422, message: 'the provider gave no email address' },
  RATE_LIMITED: { status: 429, message: 'too many attempts, try again later' },
  // tus's own status (checksum extension): "460 Checksum Mismatch".
  CHECKSUM_MISMATCH: { status: 460 as ContentfulStatusCode, message: 'the bytes do not match their checksum' },
  INTERNAL_ERROR: { status: 500, message: 'internal error' },
  CONVERTER_MISCONFIGURED: { status: 502, message: 'the conversion service is misconfigured' },
  OAUTH_PROVIDER_UNAVAILABLE: { status: 502, message: 'the sign-in provider could not be reached' },
  CONVERTER_UNAVAILABLE: { status: 503, message: 'the conversion service is unavailable; try again later' },
  CONVERTER_NOT_CONFIGURED: { status: 503, message: 'this conversion needs a provider that is not configured here' },
  CONVERTER_TIMEOUT: { status: 504, message: 'the conversion service did not answer in time' },
} as const satisfies Record<string, ErrorEntry>

export type ErrorCode = keyof typeof ERRORS
export const ERROR_CODES = Object.keys(ERRORS) as [ErrorCode, ...ErrorCode[]]

export type ErrorBody = { message: string; code: ErrorCode } & ErrorDetails

export interface ApiErrorOptions {
  /** A more precise public message than the table's (numbers the client needs); never internal detail. */
  message?: string
  /** Extra public fields of the answer (`issues`, `max_bytes`, `rule`, `job`), each declared in ERROR_DETAILS. */
  details?: ErrorDetails
  headers?: Record<string, string>
  /** Private: logged under the request id, never answered. */
  cause?: unknown
}

/** `throw new ApiError('FILE_NOT_FOUND')`: the status and public message come from the table. */
export class ApiError extends HTTPException {
  override readonly name = 'ApiError'
  readonly code: ErrorCode
  readonly details: ErrorDetails
  readonly headers: Record<string, string>

  constructor(code: ErrorCode, options: ApiErrorOptions = {}) {
    super(ERRORS[code].status, { message: options.message ?? ERRORS[code].message, cause: options.cause })
    this.code = code
    this.details = options.details ?? {}
    this.headers = options.headers ?? {}
  }

  toBody(): ErrorBody {
    return { message: this.message, code: this.code, ...this.details }
  }
}

function logError(requestId: string, error: unknown): void {
  console.error(JSON.stringify({ level: 'error', requestId, error: describeError(error) }))
}

/** Turns any thrown value into the public JSON error; unknown errors never show their internals. */
export function toErrorResponse(error: unknown, requestId: string): Response {
  if (error instanceof ApiError) {
    if (error.cause !== undefined || error.status >= 500) logError(requestId, error)
    return Response.json(error.toBody(), { status: error.status, headers: error.headers })
  }
  if (error instanceof HTTPException && error.status < 500) {
    // Hono's own 4xx: a body of a type the route does not read (415), or malformed JSON from the validator.
    const code = error.status === 415 ? 'CONTENT_TYPE_UNSUPPORTED' : 'MALFORMED_REQUEST'
    return Response.json({ message: ERRORS[code].message, code }, { status: error.status })
  }
  logError(requestId, error)
  return Response.json(
    { message: ERRORS.INTERNAL_ERROR.message, code: 'INTERNAL_ERROR', request_id: requestId },
    { status: 500 },
  )
}

export function describeError(error: unknown): string {
  if (error instanceof Error)
    return `${error.name}: ${error.message}${error.cause ? ` (cause: ${describeError(error.cause)})` : ''}`
  return String(error)
}
