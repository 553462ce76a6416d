// Rate limits for the account endpoints: one Durable Object per key holds a fixed window (a minute unless said
// otherwise), so a count is shared by every isolate and survives eviction (unlike a Map in memory). The login
// lockout policy (docs/accounts.md) counts failures per (email, client address), with a per-email ceiling that
// slows an attacker rotating addresses without refusing the owner's correct password from an address of their own.
import { DurableObject } from 'cloudflare:workers'
import type { Config } from '../config'
import { ApiError } from '../errors'

export const MINUTE_MS = 60_000

export interface RateVerdict {
  allowed: boolean
  retryAfterSeconds: number
}

interface Window {
  windowStart: number
  count: number
}

export class RateLimiter extends DurableObject<Env> {
  private current(windowMs: number, now: number): Window {
    const windowStart = now - (now % windowMs)
    const stored = this.ctx.storage.kv.get<Window>('window')
    return { windowStart, count: stored?.windowStart === windowStart ? stored.count : 0 }
  }

  /** Counts one attempt in the current window; refuses once `limit` were already counted. */
  async hit(limit: number, windowMs = MINUTE_MS): Promise<RateVerdict> {
    const now = Date.now()
    const { windowStart, count } = this.current(windowMs, now)
    if (count >= limit)
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((windowStart + windowMs - now) / 1000)) }
    this.ctx.storage.kv.put('window', { windowStart, count: count + 1 })
    return { allowed: true, retryAfterSeconds: 0 }
  }

  /** How many were counted in the current window, and the seconds until it ends; counts nothing. */
  async peek(windowMs = MINUTE_MS): Promise<{ count: number; retryAfterSeconds: number }> {
    const now = Date.now()
    const { windowStart, count } = this.current(windowMs, now)
    return { count, retryAfterSeconds: Math.max(1, Math.ceil((windowStart + windowMs - now) / 1000)) }
  }

  /** Counts one event (a failure) in the current window. */
  async add(windowMs = MINUTE_MS): Promise<void> {
    const { windowStart, count } = this.current(windowMs, Date.now())
    this.ctx.storage.kv.put('window', { windowStart, count: count + 1 })
  }

  async clear(): Promise<void> {
    this.ctx.storage.kv.delete('window')
  }
}

type Limiters = DurableObjectNamespace<RateLimiter>

const limiter = (namespace: Limiters, key: string) => namespace.get(namespace.idFromName(key))

/**
 * The client's address: CF-Connecting-IP when Cloudflare is in front (AUTH_TRUST_CF_CONNECTING_IP), where only
 * Cloudflare can set it. Otherwise any client could send one, and a Worker has no other view of the connection
 * (workerd does not expose the peer), so every caller shares the address `direct`.
 */
export function clientAddress(config: Config, headers: Headers): string {
  if (!config.AUTH_TRUST_CF_CONNECTING_IP) return 'direct'
  return headers.get('cf-connecting-ip')?.trim().slice(0, 64) || 'direct'
}

export const rateLimited = (retryAfter: number) =>
  new ApiError('RATE_LIMITED', { headers: { 'retry-after': String(retryAfter) }, details: { retry_after: retryAfter } })

/** Counts the attempt under every key; 429 with Retry-After when any of them is over the limit. */
export async function enforceRateLimit(namespace: Limiters, config: Config, keys: string[]): Promise<void> {
  const limit = config.AUTH_RATE_LIMIT_PER_MINUTE
  if (limit === 0) return
  const verdicts = await Promise.all(keys.map((key) => limiter(namespace, key).hit(limit)))
  const refused = verdicts.filter((verdict) => !verdict.allowed)
  if (refused.length === 0) return
  throw rateLimited(Math.max(...refused.map((verdict) => verdict.retryAfterSeconds)))
}

/** Under attack (this many failures a minute for one email, from any addresses), each address gets one try. */
export const EMAIL_FAILURE_CEILING_FACTOR = 3
/** Failures an hour for one email, from any addresses, before every further try waits its turn: 6N (60 at N = 10). */
export const EMAIL_HOURLY_CEILING_FACTOR = 6
const HOUR_MS = 60 * MINUTE_MS
/** The longest wait between two tries of one account past its hourly ceiling. */
export const GUARDED_MAX_DELAY_MS = 5 * MINUTE_MS

/**
 * The wait between two tries of an account `excess` failures past its hourly ceiling: 1 s, doubling every N
 * failures, at most 5 minutes. A guesser from any number of addresses gets about 12 tries an hour once at the cap.
 */
export function guardedDelayMs(excess: number, limit: number): number {
  return Math.min(GUARDED_MAX_DELAY_MS, 1000 * 2 ** Math.floor(Math.max(0, excess) / Math.max(1, limit)))
}

export interface LockoutHooks {
  /**
   * Called once, when a failure brings the account to its hourly ceiling (the route emails the owner a sign-in link).
   */
  readonly onCeilingReached?: () => void
}

const guarded = (retryAfter: number) =>
  new ApiError('RATE_LIMITED', {
    message: `too many failed sign-ins for this account from many addresses: try again in ${retryAfter} s, or sign in with the link of a password reset (POST /auth/forgot), which its owner was emailed`,
    headers: { 'retry-after': String(retryAfter) },
    details: { retry_after: retryAfter },
  })

/**
 * Runs a login attempt under the lockout policy. It is refused (429) when this (email, address) already failed
 * AUTH_RATE_LIMIT_PER_MINUTE times this minute, or when the email failed more than the ceiling (3× that, from
 * any addresses) and this address failed it at least once. Past 6N failures in an hour, from any addresses, every
 * try of the account waits its turn, the turns growing apart (guardedDelayMs): fresh addresses do not buy fresh
 * guesses. That is a delay, not a lock. The owner is emailed a password-reset link when the ceiling is reached, and
 * that link lets them in whatever the guesser does. A failure (`attempt` throwing INVALID_CREDENTIALS) is counted;
 * a success counts nothing.
 */
export async function withLoginLockout<T>(
  namespace: Limiters,
  config: Config,
  email: string,
  address: string,
  attempt: () => Promise<T>,
  hooks: LockoutHooks = {},
): Promise<T> {
  const limit = config.AUTH_RATE_LIMIT_PER_MINUTE
  if (limit === 0) return attempt()
  const pairKey = `login-failures:${email}:${address}`
  const emailKey = `login-failures:${email}`
  const hourKey = `login-failures-hour:${email}`
  const hourlyCeiling = limit * EMAIL_HOURLY_CEILING_FACTOR
  const [pair, all, hour] = await Promise.all([
    limiter(namespace, pairKey).peek(),
    limiter(namespace, emailKey).peek(),
    limiter(namespace, hourKey).peek(HOUR_MS),
  ])
  if (pair.count >= limit || (all.count >= limit * EMAIL_FAILURE_CEILING_FACTOR && pair.count >= 1))
    throw rateLimited(pair.retryAfterSeconds)
  if (hour.count >= hourlyCeiling) {
    // One try per turn for the whole account, whichever address asks.
    const turn = await limiter(namespace, `login-turn:${email}`).hit(
      1,
      guardedDelayMs(hour.count - hourlyCeiling, limit),
    )
    if (!turn.allowed) throw guarded(turn.retryAfterSeconds)
  }
  try {
    return await attempt()
  } catch (error) {
    if (error instanceof ApiError && error.code === 'INVALID_CREDENTIALS') {
      await Promise.all([
        limiter(namespace, pairKey).add(),
        limiter(namespace, emailKey).add(),
        limiter(namespace, hourKey).add(HOUR_MS),
      ])
      if (hour.count + 1 === hourlyCeiling) hooks.onCeilingReached?.()
    }
    throw error
  }
}

/** After a password reset the guesses counted against the old password are spent: the owner signs in at once. */
export async function clearLoginGuard(namespace: Limiters, email: string): Promise<void> {
  await Promise.all([
    limiter(namespace, `login-failures-hour:${email}`).clear(),
    limiter(namespace, `login-turn:${email}`).clear(),
  ])
}

const RESET_EMAIL_GAP_MS = 5 * MINUTE_MS
const RESET_EMAILS_PER_DAY = 5
const DAY_MS = 24 * 60 * MINUTE_MS

/**
 * Whether another password-reset email may go to this address now: one per 5 minutes and 5 a day, whatever the
 * client address asking. When not, the request answers the same and nothing is sent. The cap protects the
 * mailbox's owner, not the service, so AUTH_RATE_LIMIT_PER_MINUTE=0 (request limits off) leaves it on.
 */
export async function mayMailReset(namespace: Limiters, email: string): Promise<boolean> {
  if (!(await limiter(namespace, `reset-mail:${email}`).hit(1, RESET_EMAIL_GAP_MS)).allowed) return false
  return (await limiter(namespace, `reset-mail-day:${email}`).hit(RESET_EMAILS_PER_DAY, DAY_MS)).allowed
}
