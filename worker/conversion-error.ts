// How a conversion fails, for converters and the engines' entry points alike: a code of the error table and a
// message for people. A leaf module, so that an engine may throw it without importing the converters above it.
import type { ErrorCode } from './errors'

/** The codes of worker/errors.ts a conversion fails with. */
export type ConversionErrorCode = Extract<
  ErrorCode,
  | 'CONVERSION_FAILED'
  | 'FILE_TOO_LARGE'
  | 'QUOTA_EXCEEDED'
  | 'UNSUPPORTED_FORMAT'
  | 'CONVERTER_MISCONFIGURED'
  | 'CONVERTER_UNAVAILABLE'
  | 'CONVERTER_TIMEOUT'
>

/**
 * A failed conversion. `retryable` alone decides what the queue does: true for transient causes (a sidecar
 * that is down, a 5xx, a rate limit), false for the input's own faults (corrupt, encrypted, too large).
 * `code` is the error table's (worker/errors.ts): the job stores it and the API answers it with `message`.
 */
export class ConversionError extends Error {
  override readonly name = 'ConversionError'
  readonly retryable: boolean
  readonly code: ConversionErrorCode

  constructor(message: string, options: { retryable?: boolean; code?: ConversionErrorCode; cause?: unknown } = {}) {
    super(message, { cause: options.cause })
    this.retryable = options.retryable ?? false
    this.code = options.code ?? (this.retryable ? 'CONVERTER_UNAVAILABLE' : 'CONVERSION_FAILED')
  }
}
