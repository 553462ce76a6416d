// URLs that work without an Authorization header: `?token=<expiry>.<HMAC(id, owner, stamp, expiry)>`, like
// PocketBase's file tokens: a file's download (`file`) and a job's event stream (`job events`). Each purpose has its
// own key derived from JWT_SECRET, so a token of one never opens the other; a URL ends at its expiry, when its
// resource is deleted, or when the owner's security stamp changes (password reset, logout everywhere).
import type { Config } from '../config'

/** What a signed URL opens; each has its own key. */
export type SignedPurpose = 'file' | 'job events'

const encoder = new TextEncoder()
const keys = new WeakMap<Config, Map<SignedPurpose, Promise<CryptoKey>>>()

function signingKey(config: Config, purpose: SignedPurpose): Promise<CryptoKey> {
  let byPurpose = keys.get(config)
  if (!byPurpose) keys.set(config, (byPurpose = new Map()))
  let key = byPurpose.get(purpose)
  if (!key) {
    key = crypto.subtle.importKey(
      'raw',
      encoder.encode(`edgefloor ${purpose} urls\u0000${config.JWT_SECRET}`),
      { name: 'HMAC', hash: 'SHA-256' },
      false,
      ['sign', 'verify'],
    )
    byPurpose.set(purpose, key)
  }
  return key
}

const base64url = (bytes: ArrayBuffer) => new Uint8Array(bytes).toBase64({ alphabet: 'base64url', omitPadding: true })

function fromBase64url(text: string): Uint8Array | undefined {
  try {
    return Uint8Array.fromBase64(text, { alphabet: 'base64url' })
  } catch {
    return undefined
  }
}

const message = (id: string, userId: string, stamp: string, expires: number) =>
  encoder.encode(`${id}\u0000${userId}\u0000${stamp}\u0000${expires}`)

export interface Owner {
  id: string
  securityStamp: string
}

/** A token for one resource of one owner, good for `ttlSeconds`. */
export async function signToken(
  config: Config,
  purpose: SignedPurpose,
  id: string,
  owner: Owner,
  ttlSeconds: number,
  now = Date.now(),
): Promise<string> {
  const expires = Math.floor(now / 1000) + ttlSeconds
  const signature = await crypto.subtle.sign(
    'HMAC',
    await signingKey(config, purpose),
    message(id, owner.id, owner.securityStamp, expires),
  )
  return `${expires}.${base64url(signature)}`
}

/**
 * Whether the token was signed for this purpose, resource and owner (with the owner's current stamp), and has not
 * expired yet.
 */
export async function verifyToken(
  config: Config,
  purpose: SignedPurpose,
  token: string,
  id: string,
  owner: Owner,
  now = Date.now(),
): Promise<boolean> {
  const match = /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(token)
  if (!match) return false
  const expires = Number(match[1])
  if (expires * 1000 <= now) return false
  const signature = fromBase64url(match[2]!)
  if (!signature) return false
  return crypto.subtle.verify(
    'HMAC',
    await signingKey(config, purpose),
    signature,
    message(id, owner.id, owner.securityStamp, expires),
  )
}

export const signFileToken = (config: Config, fileId: string, owner: Owner, now = Date.now()) =>
  signToken(config, 'file', fileId, owner, config.FILES_URL_TTL, now)

export const verifyFileToken = (config: Config, token: string, fileId: string, owner: Owner, now = Date.now()) =>
  verifyToken(config, 'file', token, fileId, owner, now)
