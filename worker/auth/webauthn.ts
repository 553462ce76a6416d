// The WebAuthn ceremonies through @simplewebauthn/server: options to create and to get a credential, and the
// verification of the authenticator's answers. The passkey Worker (passkey-worker.ts) runs them for the API Worker,
// whose bundle they would otherwise make a third larger (docs/platform-limits.md#startup); the tests' single Worker
// runs them in its own isolate. The API Worker's side, challenges and stored passkeys, is passkeys.ts.
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server'
import type { WebAuthnCeremonies } from './passkeys'

/** The challenge check @simplewebauthn asks for: the one challenge the API Worker took for this answer, or none. */
const challengeCheck = (expected: string | null) => async (answered: string) =>
  expected !== null && answered === expected

/** Why an answer failed, as a value: thrown, Workers RPC would log it as the passkey Worker's uncaught exception. */
const failure = (error: unknown) => ({ verified: false as const, reason: String(error) })

export const webAuthnCeremonies: WebAuthnCeremonies = {
  registrationOptions: (options) => generateRegistrationOptions(options),

  async verifyRegistration({ expectedChallenge, ...request }) {
    try {
      const verification = await verifyRegistrationResponse({
        ...request,
        expectedChallenge: challengeCheck(expectedChallenge),
      })
      if (!verification.verified) return { verified: false, reason: 'not verified' }
      const { credential, credentialDeviceType, credentialBackedUp } = verification.registrationInfo
      return { verified: true, credential, credentialDeviceType, credentialBackedUp }
    } catch (error) {
      return failure(error)
    }
  },

  authenticationOptions: (options) => generateAuthenticationOptions(options),

  async verifyAuthentication({ expectedChallenge, ...request }) {
    try {
      const verification = await verifyAuthenticationResponse({
        ...request,
        expectedChallenge: challengeCheck(expectedChallenge),
      })
      if (!verification.verified) return { verified: false, reason: 'not verified' }
      return { verified: true, newCounter: verification.authenticationInfo.newCounter }
    } catch (error) {
      return failure(error)
    }
  },
}
