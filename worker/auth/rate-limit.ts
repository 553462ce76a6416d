// Rate limits for the account endpoints, per IP and per email: one Durable Object per key holds a fixed
// one-minute window, so the count is shared by every isolate and survives eviction (unlike a Map in memory).
import { DurableObject } from 'cloudflare:workers'
import type { Config } from '../config'
import { ApiError } from '../errors'

const WINDOW_MS = 60_000

export interface RateVerdict {
  allowed: boolean
  retryAfterSeconds: number
}

export class RateLimiter extends DurableObject<Env> {
  /** Counts one attempt in the current window; refuses once `limit` were already counted. */
  async hit(limit: number): Promise<RateVerdict> {
    const now = Date.now()
    const windowStart = now - (now % WINDOW_MS)
    const stored = this.ctx.storage.kv.get<{ windowStart: number; count: number }>('window')
    const count = stored?.windowStart === windowStart ? stored.count : 0
    if (count >= limit) return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((windowStart + WINDOW_MS - now) / 1000)) }
    this.ctx.storage.kv.put('window', { windowStart, count: count + 1 })
    return { allowed: true, retryAfterSeconds: 0 }
  }
}

/** The client's address as Cloudflare reports it (absent locally, where every caller is "local"). */
export function clientAddress(headers: Headers): string {
  return headers.get('cf-connecting-ip') ?? 'local'
}

/** Counts the attempt under every key; 429 with Retry-After when any of them is over the limit. */
export async function enforceRateLimit(namespace: DurableObjectNamespace<RateLimiter>, config: Config, keys: string[]): Promise<void> {
  const limit = config.AUTH_RATE_LIMIT_PER_MINUTE
  if (limit === 0) return
  const verdicts = await Promise.all(keys.map((key) => namespace.get(namespace.idFromName(key)).hit(limit)))
  const refused = verdicts.filter((verdict) => !verdict.allowed)
  if (refused.length === 0) return
  const retryAfter = Math.max(...refused.map((verdict) => verdict.retryAfterSeconds))
  throw new ApiError('RATE_LIMITED', {
    headers: { 'retry-after': String(retryAfter) },
    details: { retry_after: retryAfter },
  })
}
