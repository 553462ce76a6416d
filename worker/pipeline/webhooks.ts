// The optional callback of a job: when it finishes, a POST to its callback_url with the job's outcome, signed
// with HMAC-SHA256 over "<timestamp>.<body>" under the job's own secret (shown to its owner in GET /jobs/:id),
// retried a few times with backoff on network errors and 5xx.
import { eq } from 'drizzle-orm'
import type { Config } from '../config'
import type { Database } from '../db/client'
import { jobs } from '../db/schema'
import { ApiError } from '../errors'

const encoder = new TextEncoder()
const hex = (buffer: ArrayBuffer) => [...new Uint8Array(buffer)].map((byte) => byte.toString(16).padStart(2, '0')).join('')

async function hmac(key: string, message: string): Promise<string> {
  const cryptoKey = await crypto.subtle.importKey('raw', encoder.encode(key), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
  return hex(await crypto.subtle.sign('HMAC', cryptoKey, encoder.encode(message)))
}

/** The per-job signing secret: derived, never stored, so it cannot leak from the database. */
export function webhookSecret(config: Config, jobId: string): Promise<string> {
  return hmac(`edgefloor webhooks\u0000${config.JWT_SECRET}`, jobId)
}

/**
 * Whether a URL host names this machine or a private network by itself: localhost names, and IPv4/IPv6 literals
 * that are loopback, private (RFC 1918, fc00::/7), link-local (169.254/16 with the cloud metadata address,
 * fe80::/10), carrier-grade NAT, unspecified or IPv4-mapped ones of those. DNS names that resolve to such
 * addresses are Cloudflare's to refuse: a Worker's fetch cannot reach private networks.
 */
export function isPrivateHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '')
  if (host === 'localhost' || host.endsWith('.localhost') || host === 'localhost.localdomain') return true
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(host)?.[1]
  const v4 = mapped ?? (/^\d+\.\d+\.\d+\.\d+$/.test(host) ? host : undefined)
  if (v4) {
    const [a = 0, b = 0] = v4.split('.').map(Number)
    return a === 0 || a === 10 || a === 127 || (a === 169 && b === 254) || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 100 && b >= 64 && b <= 127)
  }
  if (host.includes(':')) {
    if (host === '::' || host === '::1' || /^0*:(0*:)*0*1?$/.test(host)) return true
    return /^f[cd][0-9a-f]{0,2}:/.test(host) || /^fe[89ab][0-9a-f]?:/.test(host) || host.startsWith('::ffff:')
  }
  return false
}

/**
 * A callback URL must be https (http only with WEBHOOK_ALLOW_HTTP, for local receivers) and may not name a
 * loopback, private or link-local address, or localhost (hosts in WEBHOOK_ALLOWED_HOSTS excepted, for tests).
 */
export function checkCallbackUrl(config: Config, raw: string): string {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new ApiError('CALLBACK_URL_REFUSED', { message: 'callback_url is not a URL' })
  }
  const allowed = url.protocol === 'https:' || (url.protocol === 'http:' && config.WEBHOOK_ALLOW_HTTP)
  if (!allowed) throw new ApiError('CALLBACK_URL_REFUSED', { message: 'callback_url must be https' })
  if (url.username || url.password) throw new ApiError('CALLBACK_URL_REFUSED', { message: 'callback_url may not carry credentials' })
  if (isPrivateHost(url.hostname) && !config.WEBHOOK_ALLOWED_HOSTS.includes(url.hostname.toLowerCase().replace(/^\[|\]$/g, ''))) {
    throw new ApiError('CALLBACK_URL_REFUSED', { message: 'callback_url may not name a loopback, private or link-local address' })
  }
  return url.toString()
}

const ATTEMPTS = 4

export async function notifyJobFinished(deps: { db: Database; config: Config }, jobId: string): Promise<void> {
  const job = await deps.db.query.jobs.findFirst({ where: eq(jobs.id, jobId) })
  if (!job?.callbackUrl) return
  const body = JSON.stringify({ event: `job.${job.status}`, job: { _id: job.id, file_id: job.fileId, status: job.status, error: job.error } })
  const timestamp = String(Math.floor(Date.now() / 1000))
  const signature = await hmac(await webhookSecret(deps.config, job.id), `${timestamp}.${body}`)
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    try {
      const response = await fetch(job.callbackUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-edgefloor-timestamp': timestamp, 'x-edgefloor-signature': `sha256=${signature}` },
        body,
        redirect: 'manual',
      })
      await response.body?.cancel()
      if (response.status < 500) return
    } catch {}
    if (attempt < ATTEMPTS) await new Promise((resolve) => setTimeout(resolve, 1000 * 2 ** (attempt - 1)))
  }
  console.warn(JSON.stringify({ level: 'warn', job: job.id, message: 'webhook delivery failed' }))
}
