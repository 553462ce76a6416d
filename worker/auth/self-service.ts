// Self-service: how the caller proves, for a change that could lock the owner out (their email, their password,
// deleting the account), that they are the account holder now and not someone holding a stolen token.
import { ApiError } from '../errors'
import { verifyPassword } from './passwords'
import { hasPassword, type UserRecord } from './users'

/**
 * How recent a sign-in confirms an account that has no password (one made through a sign-in provider): the time
 * to sign in again and send the change. A refresh keeps its session's start, so only a new sign-in counts.
 */
export const RECENT_SIGN_IN_MS = 5 * 60 * 1000

/**
 * Throws unless the caller confirmed: the account's current password, or, for an account without one, a session
 * that began (a provider's or a passkey's sign-in) within RECENT_SIGN_IN_MS. `sessionStartedAt` is undefined for
 * an ended session.
 */
export async function confirmAccountHolder(
  user: UserRecord,
  sessionStartedAt: number | undefined,
  currentPassword: string | undefined,
  now = Date.now(),
): Promise<void> {
  if (hasPassword(user)) {
    if (currentPassword === undefined)
      throw new ApiError('CONFIRMATION_REQUIRED', { message: "confirm with current_password: the account's password" })
    if (!(await verifyPassword(user.passwordHash, currentPassword)).matches)
      throw new ApiError('CURRENT_PASSWORD_INCORRECT')
    return
  }
  if (sessionStartedAt === undefined || now - sessionStartedAt > RECENT_SIGN_IN_MS) {
    throw new ApiError('CONFIRMATION_REQUIRED', {
      message: `this account has no password: sign in again (with its provider or a passkey) and send this within ${RECENT_SIGN_IN_MS / 60_000} minutes`,
    })
  }
}
