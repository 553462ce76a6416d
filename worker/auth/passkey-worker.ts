// The passkey Worker (wrangler.passkeys.toml): the WebAuthn ceremonies (webauthn.ts) for the API Worker, which calls
// them through its PASSKEYS service binding (Workers RPC). @simplewebauthn/server and its ASN.1 and X.509 parsers
// were a third of the API Worker's bundle, compiled at each of its cold starts; here only a passkey request pays them.
// It has no binding and no setting: the API Worker passes the relying party and the challenge it took.
import { WorkerEntrypoint } from 'cloudflare:workers'
import type { WebAuthnCeremonies } from './passkeys'
import { webAuthnCeremonies } from './webauthn'

type Argument<K extends keyof WebAuthnCeremonies> = Parameters<WebAuthnCeremonies[K]>[0]

export default class PasskeyWorker extends WorkerEntrypoint implements WebAuthnCeremonies {
  registrationOptions(options: Argument<'registrationOptions'>) {
    return webAuthnCeremonies.registrationOptions(options)
  }

  verifyRegistration(request: Argument<'verifyRegistration'>) {
    return webAuthnCeremonies.verifyRegistration(request)
  }

  authenticationOptions(options: Argument<'authenticationOptions'>) {
    return webAuthnCeremonies.authenticationOptions(options)
  }

  verifyAuthentication(request: Argument<'verifyAuthentication'>) {
    return webAuthnCeremonies.verifyAuthentication(request)
  }
}
