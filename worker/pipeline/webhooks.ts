// The optional callback of a job: when it finishes, a POST to its callback_url with the job's outcome, signed
// with HMAC-SHA256 over "<timestamp>.<body>" under the job's own secret (shown to its owner in GET /jobs/:id),
// retried a few times with backoff on network errors and 5xx.
import type { Config } from '../config'
import type { Database } from '../db/client'
import { ApiError } from '../errors'
import { findJob } from './jobs'
import { addressLiteral, isLocalName, specialUseRange } from '../../shared/addresses.ts'

const encoder = new TextEncoder()

async function hmac(key: string, message: string): Promise<string> {
  const cryptoKey = await crypto.subtle.importKey(
    'raw',
    encoder.encode(key),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  )
  return new Uint8Array(await crypto.subtle.sign('HMAC', cryptoKey, encoder.encode(message))).toHex()
}

/** The per-job signing secret: derived, never stored, so it cannot leak from the database. */
export function webhookSecret(config: Config, jobId: string): Promise<string> {
  return hmac(`edgefloor webhooks\u0000${config.JWT_SECRET}`, jobId)
}

const refused = (message: string) => new ApiError('CALLBACK_URL_REFUSED', { message })
/** DNS record types (RFC 1035 §3.2.2, RFC 3596 §2.1). */
const A = 1
const AAAA = 28
const DNS_TIMEOUT_MS = 3000

/**
 * The A and AAAA addresses a name has, from the DNS-over-HTTPS JSON API at WEBHOOK_DNS_URL (Cloudflare's 1.1.1.1
 * by default: a Worker has no resolver of its own). Undefined when they cannot be known (the resolver is off,
 * unreachable, or fails): the caller then relies on the platform (see checkCallbackUrl).
 */
export async function resolveHost(config: Config, name: string): Promise<string[] | undefined> {
  if (!config.WEBHOOK_DNS_URL) return undefined
  try {
    const answers = await Promise.all(
      [A, AAAA].map(async (type) => {
        const url = new URL(config.WEBHOOK_DNS_URL!)
        url.searchParams.set('name', name)
        url.searchParams.set('type', String(type))
        const response = await fetch(url, {
          headers: { accept: 'application/dns-json' },
          signal: AbortSignal.timeout(DNS_TIMEOUT_MS),
        })
        if (!response.ok) throw new Error(`DNS-over-HTTPS answered ${response.status}`)
        const body = (await response.json()) as { Status?: number; Answer?: { type: number; data: string }[] }
        // NXDOMAIN (3): no addresses; any other failure leaves the name unchecked.
        if (body.Status !== 0 && body.Status !== 3) throw new Error(`DNS-over-HTTPS status ${body.Status}`)
        return (body.Answer ?? []).filter((answer) => answer.type === type).map((answer) => answer.data)
      }),
    )
    return answers.flat()
  } catch {
    return undefined
  }
}

/**
 * A callback URL must be https (http only with WEBHOOK_ALLOW_HTTP, for local receivers) and may reach only global
 * unicast addresses (shared/addresses.ts, the sidecar's classifier too). An address literal is checked as it is;
 * a localhost name is refused; any other name is resolved and refused when one of its addresses is special-use.
 * A name that cannot be resolved here (no resolver offline) is taken: on Cloudflare a Worker's fetch goes out through
 * Cloudflare's network, which does not connect to private addresses. Hosts in WEBHOOK_ALLOWED_HOSTS are taken as
 * they are (tests). Checked when the job is asked for and again before each delivery (a name can change meanwhile).
 */
export async function checkCallbackUrl(config: Config, raw: string): Promise<string> {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw refused('callback_url is not a URL')
  }
  const allowed = url.protocol === 'https:' || (url.protocol === 'http:' && config.WEBHOOK_ALLOW_HTTP)
  if (!allowed) throw refused('callback_url must be https')
  if (url.username || url.password) throw refused('callback_url may not carry credentials')
  await checkCallbackHost(config, url)
  return url.toString()
}

/** The address part of checkCallbackUrl, for the request and again before each delivery. */
async function checkCallbackHost(config: Config, url: URL): Promise<void> {
  const host = url.hostname.toLowerCase().replace(/^\[|\]$/g, '')
  if (config.WEBHOOK_ALLOWED_HOSTS.includes(host)) return
  if (isLocalName(host)) throw refused('callback_url may not name localhost')
  const literal = addressLiteral(host)
  const addresses = literal ? [literal] : ((await resolveHost(config, host.replace(/\.$/, ''))) ?? [])
  for (const address of addresses) {
    const range = specialUseRange(address)
    if (range)
      throw refused(
        `callback_url ${literal ? 'names' : `resolves to ${address}, which is`} a special-use address (${range}): only global unicast addresses are reached`,
      )
  }
}

const ATTEMPTS = 4

export async function notifyJobFinished(deps: { db: Database; config: Config }, jobId: string): Promise<void> {
  const job = await findJob(deps.db, jobId)
  if (!job?.callbackUrl) return
  // The name may point elsewhere since the last check (DNS rebinding): its addresses are checked again.
  const checked = await checkCallbackHost(deps.config, new URL(job.callbackUrl)).catch((error: unknown) => error)
  if (checked instanceof ApiError) {
    console.warn(JSON.stringify({ level: 'warn', job: job.id, message: `webhook not delivered: ${checked.message}` }))
    return
  }
  const body = JSON.stringify({
    event: `job.${job.status}`,
    job: { _id: job.id, file_id: job.fileId, status: job.status, error: job.error },
  })
  const timestamp = String(Math.floor(Date.now() / 1000))
  const signature = await hmac(await webhookSecret(deps.config, job.id), `${timestamp}.${body}`)
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    try {
      const response = await fetch(job.callbackUrl, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-edgefloor-timestamp': timestamp,
          'x-edgefloor-signature': `sha256=${signature}`,
        },
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
