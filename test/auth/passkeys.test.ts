// Passkeys through the Worker without a browser: the options a browser is given, and the answers that must be
// refused (malformed, unknown credentials, forged attestations, spent challenges). Registering and signing in with
// a real authenticator is test/e2e/passkeys.test.ts (Chromium's virtual authenticator).
import { describe, expect, it } from 'vitest'
import { callJson } from '../support/api'
import { signUp } from '../support/accounts'
import type { RegistrationOptions, SignInOptions } from '../support/authenticator'

const b64url = (text: string) => btoa(text).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '')

function clientData(type: string, challenge: string) {
  return b64url(JSON.stringify({ type, challenge, origin: 'http://127.0.0.1:8787' }))
}

describe('passkeys', () => {
  it('gives registration options for a discoverable credential, excluding nothing yet, and sign-in options to anyone', async () => {
    const user = await signUp()
    const options = await callJson('POST', '/auth/passkeys/register/options', { token: user.token })
    expect(options.status).toBe(200)
    expect(options.body).toMatchObject({
      rp: { id: '127.0.0.1', name: '127.0.0.1' },
      user: { name: user.email, displayName: 'Test User', id: expect.any(String) },
      challenge: expect.stringMatching(/^[\w-]{40,}$/),
      excludeCredentials: [],
      authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
      attestation: 'none',
    })
    const login = await callJson('POST', '/auth/passkeys/login/options')
    expect(login).toMatchObject({
      status: 200,
      body: { rpId: '127.0.0.1', challenge: expect.any(String), userVerification: 'preferred' },
    })
    expect(await callJson('GET', '/auth/passkeys', { token: user.token })).toMatchObject({ status: 200, body: [] })
  })

  it('refuses malformed, unknown and forged answers', async () => {
    const user = await signUp()
    for (const credential of [
      {},
      { id: 'x', rawId: 'x', type: 'password', response: {}, clientExtensionResults: {} },
      {
        id: '<script>',
        rawId: 'x',
        type: 'public-key',
        response: { clientDataJSON: 'a', authenticatorData: 'a', signature: 'a' },
        clientExtensionResults: {},
      },
    ]) {
      const res = await callJson('POST', '/auth/passkeys/login', { json: { credential } })
      expect(res.status, JSON.stringify(credential)).toBe(400)
      expect(res.body.code).toBe('VALIDATION_FAILED')
    }
    const { body: options } = await callJson<SignInOptions>('POST', '/auth/passkeys/login/options')
    const unknown = {
      id: 'AAAA',
      rawId: 'AAAA',
      type: 'public-key',
      response: {
        clientDataJSON: clientData('webauthn.get', options.challenge),
        authenticatorData: 'AAAA',
        signature: 'AAAA',
      },
      clientExtensionResults: {},
    }
    expect(await callJson('POST', '/auth/passkeys/login', { json: { credential: unknown } })).toMatchObject({
      status: 401,
      body: { code: 'PASSKEY_INVALID' },
    })

    const { body: creation } = await callJson<RegistrationOptions>('POST', '/auth/passkeys/register/options', {
      token: user.token,
    })
    const forged = {
      id: 'AAAA',
      rawId: 'AAAA',
      type: 'public-key',
      response: {
        clientDataJSON: clientData('webauthn.create', creation.challenge),
        attestationObject: 'oWNmbXRkbm9uZQ',
      },
      clientExtensionResults: {},
    }
    expect(
      await callJson('POST', '/auth/passkeys/register', { token: user.token, json: { credential: forged } }),
    ).toMatchObject({ status: 401, body: { code: 'PASSKEY_INVALID' } })
    // Another user's challenge is not this user's.
    const other = await signUp()
    const { body: theirs } = await callJson<RegistrationOptions>('POST', '/auth/passkeys/register/options', {
      token: other.token,
    })
    const stolen = {
      ...forged,
      response: { ...forged.response, clientDataJSON: clientData('webauthn.create', theirs.challenge) },
    }
    expect(
      await callJson('POST', '/auth/passkeys/register', { token: user.token, json: { credential: stolen } }),
    ).toMatchObject({ status: 401, body: { code: 'PASSKEY_INVALID' } })
    expect(await callJson('GET', '/auth/passkeys', { token: user.token })).toMatchObject({ body: [] })
    expect(await callJson('DELETE', '/auth/passkeys/0123456789abcdef01234567', { token: user.token })).toMatchObject({
      status: 404,
      body: { code: 'PASSKEY_NOT_FOUND' },
    })
  })
})
