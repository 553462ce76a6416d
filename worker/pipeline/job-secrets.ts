// Secrets among a job's options (a document's `password`, the `userPassword` and `ownerPassword` a PDF is encrypted with): sealed with AES-GCM before they reach D1, under a key
// derived (HKDF) from JWT_SECRET for this one purpose and bound to the job's owner; opened only for the converter;
// never shown in a job view, event or webhook; wiped from the row when the job ends (done or failed).
import type { Config } from '../config'

export type JobOptions = Record<string, string | number | boolean>

/** Option names whose values are secrets. */
export const SECRET_OPTIONS = ['password', 'userPassword', 'ownerPassword'] as const

const SEALED = 'sealed:v1:'
const encoder = new TextEncoder()
const keys = new Map<string, Promise<CryptoKey>>()

function sealingKey(config: Config): Promise<CryptoKey> {
  let key = keys.get(config.JWT_SECRET)
  if (!key) {
    key = crypto.subtle
      .importKey('raw', encoder.encode(config.JWT_SECRET), 'HKDF', false, ['deriveKey'])
      .then((secret) =>
        crypto.subtle.deriveKey(
          { name: 'HKDF', hash: 'SHA-256', salt: encoder.encode('edgefloor'), info: encoder.encode('job option secrets') },
          secret,
          { name: 'AES-GCM', length: 256 },
          false,
          ['encrypt', 'decrypt'],
        ),
      )
    keys.set(config.JWT_SECRET, key)
  }
  return key
}

const toBase64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes))
const fromBase64 = (text: string) => Uint8Array.from(atob(text), (char) => char.charCodeAt(0))

/** The options as stored: every secret sealed (the owner's id is the additional data, so a row copied to another
 * user's job does not open). */
export async function sealOptions(config: Config, ownerId: string, options: JobOptions = {}): Promise<JobOptions> {
  const sealed: JobOptions = { ...options }
  for (const name of SECRET_OPTIONS) {
    const value = options[name]
    if (typeof value !== 'string') continue
    const iv = crypto.getRandomValues(new Uint8Array(12))
    const cipher = await crypto.subtle.encrypt({ name: 'AES-GCM', iv, additionalData: encoder.encode(ownerId) }, await sealingKey(config), encoder.encode(value))
    sealed[name] = `${SEALED}${toBase64(iv)}.${toBase64(new Uint8Array(cipher))}`
  }
  return sealed
}

/** The options for the converter, secrets opened; a secret that does not open (or was wiped) is left out. */
export async function openOptions(config: Config, ownerId: string, options: JobOptions): Promise<JobOptions> {
  const opened: JobOptions = { ...options }
  for (const name of SECRET_OPTIONS) {
    const value = options[name]
    if (typeof value !== 'string' || !value.startsWith(SEALED)) continue
    delete opened[name]
    const [iv, cipher] = value.slice(SEALED.length).split('.')
    try {
      const plain = await crypto.subtle.decrypt({ name: 'AES-GCM', iv: fromBase64(iv ?? ''), additionalData: encoder.encode(ownerId) }, await sealingKey(config), fromBase64(cipher ?? ''))
      opened[name] = new TextDecoder().decode(plain)
    } catch {}
  }
  return opened
}

/** The options as a client may see them: no secret, sealed or not. */
export function publicOptions(options: JobOptions): JobOptions {
  const shown: JobOptions = { ...options }
  for (const name of SECRET_OPTIONS) delete shown[name]
  return shown
}
