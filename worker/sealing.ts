// Sealing small secrets at rest: AES-GCM under a key derived (HKDF-SHA-256) from JWT_SECRET for one purpose, with
// the owner's id as associated data, so a sealed value copied to another owner's row does not open. Keys are
// derived once per isolate and purpose.
import type { Config } from './config'

const encoder = new TextEncoder()
const keys = new Map<string, Promise<CryptoKey>>()

function sealingKey(config: Config, purpose: string): Promise<CryptoKey> {
  const cacheKey = `${purpose}\u0000${config.JWT_SECRET}`
  let key = keys.get(cacheKey)
  if (!key) {
    key = crypto.subtle
      .importKey('raw', encoder.encode(config.JWT_SECRET), 'HKDF', false, ['deriveKey'])
      .then((secret) =>
        crypto.subtle.deriveKey(
          { name: 'HKDF', hash: 'SHA-256', salt: encoder.encode('edgefloor'), info: encoder.encode(purpose) },
          secret,
          { name: 'AES-GCM', length: 256 },
          false,
          ['encrypt', 'decrypt'],
        ),
      )
    keys.set(cacheKey, key)
  }
  return key
}

/** `iv.ciphertext`, both base64. */
export async function sealBytes(config: Config, purpose: string, ownerId: string, plain: Uint8Array): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12))
  const cipher = await crypto.subtle.encrypt(
    { name: 'AES-GCM', iv, additionalData: encoder.encode(ownerId) },
    await sealingKey(config, purpose),
    plain,
  )
  return `${iv.toBase64()}.${new Uint8Array(cipher).toBase64()}`
}

/** The bytes sealed by sealBytes for this purpose and owner; throws when they do not open. */
export async function openSealed(
  config: Config,
  purpose: string,
  ownerId: string,
  sealed: string,
): Promise<Uint8Array> {
  const [iv, cipher] = sealed.split('.')
  const plain = await crypto.subtle.decrypt(
    { name: 'AES-GCM', iv: Uint8Array.fromBase64(iv ?? ''), additionalData: encoder.encode(ownerId) },
    await sealingKey(config, purpose),
    Uint8Array.fromBase64(cipher ?? ''),
  )
  return new Uint8Array(plain)
}
