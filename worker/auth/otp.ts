// One-time passwords, the algorithms alone: HOTP (RFC 4226 §5), TOTP on top of it (RFC 6238 §4), base32 secrets
// (RFC 4648 §6) and the otpauth:// URI authenticator apps scan (Google Authenticator's Key Uri Format). Nothing
// here knows of users or storage.

export type OtpAlgorithm = 'SHA-1' | 'SHA-256' | 'SHA-512'

export interface TotpParameters {
  algorithm: OtpAlgorithm
  digits: number
  /** RFC 6238's X, the time step. */
  periodSeconds: number
}

/** What every authenticator app supports: RFC 6238's defaults (HMAC-SHA-1, 30 s), six digits. */
export const TOTP_DEFAULTS: TotpParameters = { algorithm: 'SHA-1', digits: 6, periodSeconds: 30 }

/** RFC 6238 §4: T = floor((now − T0) / X), with T0 = 0. */
export function timeStep(unixSeconds: number, periodSeconds = TOTP_DEFAULTS.periodSeconds): number {
  return Math.floor(unixSeconds / periodSeconds)
}

/** RFC 4226 §5.3: HMAC over the 8-byte big-endian counter, dynamic truncation, modulo 10^digits. */
export async function hotp(
  secret: Uint8Array,
  counter: number,
  algorithm: OtpAlgorithm = 'SHA-1',
  digits = 6,
): Promise<string> {
  const message = new Uint8Array(8)
  new DataView(message.buffer).setBigUint64(0, BigInt(counter))
  const key = await crypto.subtle.importKey('raw', secret, { name: 'HMAC', hash: algorithm }, false, ['sign'])
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, message))
  const offset = mac[mac.length - 1]! & 0x0f
  const binary =
    (((mac[offset]! & 0x7f) << 24) | (mac[offset + 1]! << 16) | (mac[offset + 2]! << 8) | mac[offset + 3]!) >>> 0
  return String(binary % 10 ** digits).padStart(digits, '0')
}

/** RFC 6238 §4.2: TOTP = HOTP(K, T). */
export function totp(
  secret: Uint8Array,
  unixSeconds: number,
  parameters: TotpParameters = TOTP_DEFAULTS,
): Promise<string> {
  return hotp(secret, timeStep(unixSeconds, parameters.periodSeconds), parameters.algorithm, parameters.digits)
}

/**
 * The time step whose code this is, looking one step either side of now (RFC 6238 §5.2 recommends at most one
 * step of network delay), or undefined. Every candidate is computed and compared in full, so the answer's timing
 * does not tell which step matched.
 */
export async function matchingStep(
  secret: Uint8Array,
  code: string,
  unixSeconds: number,
  parameters: TotpParameters = TOTP_DEFAULTS,
): Promise<number | undefined> {
  if (!/^\d+$/.test(code) || code.length !== parameters.digits) return undefined
  const now = timeStep(unixSeconds, parameters.periodSeconds)
  const steps = [now - 1, now, now + 1]
  const codes = await Promise.all(steps.map((step) => hotp(secret, step, parameters.algorithm, parameters.digits)))
  let found: number | undefined
  codes.forEach((candidate, index) => {
    if (sameDigits(candidate, code)) found = steps[index]
  })
  return found
}

function sameDigits(a: string, b: string): boolean {
  let difference = a.length ^ b.length
  for (let i = 0; i < Math.min(a.length, b.length); i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i)
  return difference === 0
}

const BASE32_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'

/** RFC 4648 §6 base32, without padding (authenticator apps take secrets unpadded). */
export function base32Encode(bytes: Uint8Array): string {
  let bits = 0
  let value = 0
  let out = ''
  for (const byte of bytes) {
    value = (value << 8) | byte
    bits += 8
    while (bits >= 5) {
      out += BASE32_ALPHABET[(value >>> (bits - 5)) & 31]
      bits -= 5
    }
  }
  if (bits > 0) out += BASE32_ALPHABET[(value << (5 - bits)) & 31]
  return out
}

/** RFC 4648 §6 base32, padding and case ignored; undefined for any other character. */
export function base32Decode(text: string): Uint8Array | undefined {
  const clean = text.replace(/=+$/, '').toUpperCase()
  const out: number[] = []
  let bits = 0
  let value = 0
  for (const char of clean) {
    const index = BASE32_ALPHABET.indexOf(char)
    if (index < 0) return undefined
    value = ((value << 5) | index) & 0xffff
    bits += 5
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff)
      bits -= 8
    }
  }
  return new Uint8Array(out)
}

/**
 * The otpauth:// URI of Google Authenticator's Key Uri Format: label `issuer:account`, issuer repeated as a parameter.
 */
export function otpauthUri(
  issuer: string,
  account: string,
  secret: Uint8Array,
  parameters: TotpParameters = TOTP_DEFAULTS,
): string {
  const label = `${encodeURIComponent(issuer)}:${encodeURIComponent(account)}`
  const query = new URLSearchParams({
    secret: base32Encode(secret),
    issuer,
    algorithm: parameters.algorithm.replace('-', ''),
    digits: String(parameters.digits),
    period: String(parameters.periodSeconds),
  })
  return `otpauth://totp/${label}?${query.toString().replaceAll('+', '%20')}`
}
