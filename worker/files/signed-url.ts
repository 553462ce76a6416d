// File URLs that work without an Authorization header: `?token=<expiry>.<HMAC(file id, owner, stamp, expiry)>`,
// like PocketBase's file tokens. The key is derived from JWT_SECRET for this one purpose; a URL ends at its expiry,
// when its file is deleted, or when the owner's security stamp changes (password reset, logout everywhere).
import type { Config } from '../config'

const encoder = new TextEncoder()
const keys = new WeakMap<Config, Promise<CryptoKey>>()

function signingKey(config: Config): Promise<CryptoKey> {
  let key = keys.get(config)
  if (!key) {
    key = crypto.subtle.importKey('raw', encoder.encode(`edgefloor file urls\u0000${config.JWT_SECRET}`), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify'])
    keys.set(config, key)
  }
  return key
}

const base64url = (bytes: ArrayBuffer) => btoa(String.fromCharCode(...new Uint8Array(bytes))).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')

function fromBase64url(text: string): Uint8Array | undefined {
  try {
    return Uint8Array.from(atob(text.replace(/-/g, '+').replace(/_/g, '/')), (char) => char.charCodeAt(0))
  } catch {
    return undefined
  }
}

const message = (fileId: string, userId: string, stamp: string, expires: number) => encoder.encode(`${fileId}\u0000${userId}\u0000${stamp}\u0000${expires}`)

export async function signFileToken(config: Config, fileId: string, owner: { id: string; securityStamp: string }, now = Date.now()): Promise<string> {
  const expires = Math.floor(now / 1000) + config.FILES_URL_TTL
  const signature = await crypto.subtle.sign('HMAC', await signingKey(config), message(fileId, owner.id, owner.securityStamp, expires))
  return `${expires}.${base64url(signature)}`
}

/** Whether the token was signed for this file and owner (with the owner's current stamp) and has not expired. */
export async function verifyFileToken(config: Config, token: string, fileId: string, owner: { id: string; securityStamp: string }, now = Date.now()): Promise<boolean> {
  const match = /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(token)
  if (!match) return false
  const expires = Number(match[1])
  if (expires * 1000 <= now) return false
  const signature = fromBase64url(match[2]!)
  if (!signature) return false
  return crypto.subtle.verify('HMAC', await signingKey(config), signature, message(fileId, owner.id, owner.securityStamp, expires))
}
