// A software WebAuthn authenticator: one ES256 passkey, answering the Worker's creation and request options as a
// browser's toJSON() gives them. It follows WebAuthn Level 3 §6.1 (authenticator data: rpIdHash, flags UP|UV|AT,
// signCount, attested credential data), §6.5.4 ("none" attestation: fmt "none", an empty attStmt) and RFC 9053 §7.1.1
// (the EC2 COSE key: kty 2, alg -7, crv 1, x, y); the signature is ECDSA P-256 over authenticatorData ‖
// SHA-256(clientDataJSON), DER-encoded as §6.5.6 asks. Chromium's virtual authenticator does the same in the e2e test.
import { isoCBOR } from '@simplewebauthn/server/helpers'
import { concatBytes as concat } from './bytes'

export const PASSKEY_ORIGIN = 'http://127.0.0.1:8787'

const b64url = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes))
    .replaceAll('+', '-')
    .replaceAll('/', '_')
    .replace(/=+$/, '')
const fromB64url = (text: string) =>
  Uint8Array.from(atob(text.replaceAll('-', '+').replaceAll('_', '/')), (char) => char.charCodeAt(0))
const sha256 = async (bytes: Uint8Array) => new Uint8Array(await crypto.subtle.digest('SHA-256', bytes))
const uint32 = (value: number) => new Uint8Array([value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255])

/** An ECDSA signature from WebCrypto (r ‖ s, 32 bytes each) as the ASN.1 DER sequence WebAuthn carries. */
function derSignature(raw: Uint8Array): Uint8Array {
  const integer = (bytes: Uint8Array) => {
    let start = 0
    while (start < bytes.length - 1 && bytes[start] === 0) start++
    const trimmed = bytes.slice(start)
    const body = trimmed[0]! & 0x80 ? concat(new Uint8Array([0]), trimmed) : trimmed
    return concat(new Uint8Array([0x02, body.length]), body)
  }
  const sequence = concat(integer(raw.slice(0, 32)), integer(raw.slice(32)))
  return concat(new Uint8Array([0x30, sequence.length]), sequence)
}

const UP = 0x01
const UV = 0x04
const AT = 0x40

/** What the authenticator reads of POST /auth/passkeys/register/options (the API declares the options as any JSON). */
export interface RegistrationOptions {
  challenge: string
  rp: { id: string }
  user: { id: string }
}

/** What the authenticator reads of POST /auth/passkeys/login/options. */
export interface SignInOptions {
  challenge: string
  rpId: string
}

export class SoftwareAuthenticator {
  private counter = 0
  private constructor(
    private readonly keys: CryptoKeyPair,
    readonly credentialId: Uint8Array,
  ) {}

  static async create(): Promise<SoftwareAuthenticator> {
    const keys = (await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, [
      'sign',
      'verify',
    ])) as CryptoKeyPair
    return new SoftwareAuthenticator(keys, crypto.getRandomValues(new Uint8Array(16)))
  }

  private clientData(type: string, challenge: string): Uint8Array {
    return new TextEncoder().encode(JSON.stringify({ type, challenge, origin: PASSKEY_ORIGIN, crossOrigin: false }))
  }

  /** The answer to navigator.credentials.create() with these options, as RegistrationResponseJSON. */
  async register(options: RegistrationOptions) {
    const jwk = (await crypto.subtle.exportKey('jwk', this.keys.publicKey)) as JsonWebKey
    const coseKey = new Map<number, number | Uint8Array>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, fromB64url(jwk.x!)],
      [-3, fromB64url(jwk.y!)],
    ])
    const attested = concat(
      new Uint8Array(16),
      new Uint8Array([this.credentialId.length >> 8, this.credentialId.length & 255]),
      this.credentialId,
      isoCBOR.encode(coseKey),
    )
    const authData = concat(
      await sha256(new TextEncoder().encode(options.rp.id)),
      new Uint8Array([UP | UV | AT]),
      uint32(this.counter),
      attested,
    )
    const attestationObject = isoCBOR.encode(
      new Map<string, unknown>([
        ['fmt', 'none'],
        ['attStmt', new Map()],
        ['authData', authData],
      ]) as never,
    )
    const id = b64url(this.credentialId)
    return {
      id,
      rawId: id,
      type: 'public-key',
      response: {
        clientDataJSON: b64url(this.clientData('webauthn.create', options.challenge)),
        attestationObject: b64url(attestationObject),
        transports: ['internal'],
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    }
  }

  /** The answer to navigator.credentials.get() with these options, as AuthenticationResponseJSON. */
  async signIn(options: SignInOptions, userHandle: string) {
    this.counter += 1
    const authData = concat(
      await sha256(new TextEncoder().encode(options.rpId)),
      new Uint8Array([UP | UV]),
      uint32(this.counter),
    )
    const clientData = this.clientData('webauthn.get', options.challenge)
    const signed = new Uint8Array(
      await crypto.subtle.sign(
        { name: 'ECDSA', hash: 'SHA-256' },
        this.keys.privateKey,
        concat(authData, await sha256(clientData)),
      ),
    )
    const id = b64url(this.credentialId)
    return {
      id,
      rawId: id,
      type: 'public-key',
      response: {
        clientDataJSON: b64url(clientData),
        authenticatorData: b64url(authData),
        signature: b64url(derSignature(signed)),
        userHandle,
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    }
  }
}
