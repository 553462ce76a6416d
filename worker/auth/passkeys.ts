// Passkeys (WebAuthn): registering one for a signed-in account (several per account), signing in with one
// (discoverable credentials: no email typed), listing and removing them. Every challenge is stored (as SHA-256) for
// one use and five minutes. Owns passkeys and passkey_challenges. The ceremonies themselves (@simplewebauthn/server
// and its ASN.1 and X.509 parsers) run in the passkey Worker (webauthn.ts), reached through the PASSKEYS binding.
import type {
  AuthenticationResponseJSON,
  CredentialDeviceType,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  WebAuthnCredential,
} from '@simplewebauthn/server'
import { and, asc, eq, lt, type SQL } from 'drizzle-orm'
import type { Config } from '../config'
import type { Database } from '../db/client'
import { newId } from '../db/ids'
import { passkeyChallenges, passkeys, users } from '../db/schema'
import { ApiError } from '../errors'
import { sha256Hex } from './sessions'

/** A verification's options as Workers RPC carries them: the challenge the API Worker took for the answer (null when
 * none was: the answer fails) in place of @simplewebauthn's callback. */
type OverRpc<F extends (options: never) => unknown> = Omit<Parameters<F>[0], 'expectedChallenge'> & {
  expectedChallenge: string | null
}

/** A verification that failed, and why (for the log: the client learns only PASSKEY_INVALID). */
interface Refused {
  verified: false
  reason: string
}

/** The WebAuthn ceremonies (webauthn.ts), which the passkey Worker runs. A verification that fails answers why. */
export interface WebAuthnCeremonies {
  registrationOptions(
    options: Parameters<typeof generateRegistrationOptions>[0],
  ): ReturnType<typeof generateRegistrationOptions>
  verifyRegistration(request: OverRpc<typeof verifyRegistrationResponse>): Promise<
    | Refused
    | {
        verified: true
        credential: WebAuthnCredential
        credentialDeviceType: CredentialDeviceType
        credentialBackedUp: boolean
      }
  >
  authenticationOptions(
    options: Parameters<typeof generateAuthenticationOptions>[0],
  ): ReturnType<typeof generateAuthenticationOptions>
  verifyAuthentication(
    request: OverRpc<typeof verifyAuthenticationResponse>,
  ): Promise<Refused | { verified: true; newCounter: number }>
}

/** The passkey Worker behind the API Worker's PASSKEYS service binding (wrangler.toml, wrangler.passkeys.toml). */
export const passkeyWorker = (env: Env): WebAuthnCeremonies => env.PASSKEYS as unknown as WebAuthnCeremonies

const CHALLENGE_TTL_MS = 5 * 60_000
/** Passkeys one account may hold; each is offered in excludeCredentials when registering another. */
export const MAX_PASSKEYS_PER_USER = 20

export type PasskeyRow = typeof passkeys.$inferSelect

/** The relying party: the origins passkeys are used on (AUTH_PASSKEY_ORIGINS, else APP_URL's) and the first one's
 * host name as its id (WebAuthn §5.1.3: a registrable domain suffix of the origin, never an IP address). */
export function relyingParty(config: Config): { id: string; name: string; origins: string[] } {
  const origins =
    config.AUTH_PASSKEY_ORIGINS.length > 0
      ? config.AUTH_PASSKEY_ORIGINS.map((url) => new URL(url).origin)
      : [new URL(config.APP_URL).origin]
  const id = new URL(origins[0]!).hostname
  return { id, name: id, origins }
}

async function storeChallenge(
  db: Database,
  challenge: string,
  purpose: 'register' | 'login',
  userId: string | null,
): Promise<void> {
  const now = Date.now()
  await db.batch([
    db.delete(passkeyChallenges).where(lt(passkeyChallenges.expiresAt, now)),
    db
      .insert(passkeyChallenges)
      .values({ challengeHash: await sha256Hex(challenge), purpose, userId, expiresAt: now + CHALLENGE_TTL_MS }),
  ])
}

/** Whether a taken challenge was given out for this purpose (and user) and has not expired. */
function isChallengeFor(
  taken: typeof passkeyChallenges.$inferSelect | undefined,
  purpose: 'register' | 'login',
  userId: string | null,
): boolean {
  return taken !== undefined && taken.purpose === purpose && taken.userId === userId && taken.expiresAt > Date.now()
}

export function listPasskeys(db: Database, userId: string) {
  return db.query.passkeys.findMany({
    where: eq(passkeys.userId, userId),
    orderBy: asc(passkeys.id),
    limit: MAX_PASSKEYS_PER_USER,
  })
}

/** The options for navigator.credentials.create(): a discoverable credential, the user's passkeys (`existing`, read
 * by the caller) excluded. */
export async function registrationOptions(
  db: Database,
  config: Config,
  ceremonies: WebAuthnCeremonies,
  user: { id: string; email: string; name: string },
  existing: PasskeyRow[],
) {
  if (existing.length >= MAX_PASSKEYS_PER_USER)
    throw new ApiError('PASSKEY_LIMIT_REACHED', { details: { max_passkeys: MAX_PASSKEYS_PER_USER } })
  const rp = relyingParty(config)
  const options = await ceremonies.registrationOptions({
    rpName: rp.name,
    rpID: rp.id,
    userName: user.email,
    userDisplayName: user.name || user.email,
    userID: new Uint8Array(new TextEncoder().encode(user.id)),
    attestationType: 'none',
    excludeCredentials: existing.map((passkey) => ({ id: passkey.credentialId, transports: passkey.transports })),
    authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
  })
  await storeChallenge(db, options.challenge, 'register', user.id)
  return options
}

/** The write that takes the stored challenge an answer names, once, for a batch (one row when it did); `condition`
 * guards it (the caller's session, in the check's own batch). */
export async function challengeTaking(
  db: Database,
  response: { response: { clientDataJSON: string } },
  condition?: SQL,
) {
  const challenge = challengeOf(response)
  return {
    challenge,
    write: db
      .delete(passkeyChallenges)
      .where(and(eq(passkeyChallenges.challengeHash, await sha256Hex(challenge)), condition))
      .returning(),
  }
}

/** Verifies the authenticator's answer to a registration challenge of this user and stores the passkey. `taken` is
 * the challenge the answer names, taken by the caller (challengeTaking). */
export async function registerPasskey(
  db: Database,
  config: Config,
  ceremonies: WebAuthnCeremonies,
  userId: string,
  response: RegistrationResponseJSON,
  name: string,
  taken: { challenge: string; row: typeof passkeyChallenges.$inferSelect | undefined },
): Promise<PasskeyRow> {
  const rp = relyingParty(config)
  const isTaken = isChallengeFor(taken.row, 'register', userId)
  const verification = await ceremonies.verifyRegistration({
    response,
    // The challenge was taken already: the one the answer names, which is the one checked here.
    expectedChallenge: isTaken ? taken.challenge : null,
    expectedOrigin: rp.origins,
    expectedRPID: rp.id,
    requireUserVerification: false,
  })
  if (!verification.verified) throw new ApiError('PASSKEY_INVALID', { cause: new Error(verification.reason) })
  const { credential, credentialDeviceType, credentialBackedUp } = verification
  const now = Date.now()
  const inserted = await db
    .insert(passkeys)
    .values({
      id: newId(now),
      userId,
      credentialId: credential.id,
      publicKey: credential.publicKey.toBase64({ alphabet: 'base64url', omitPadding: true }),
      counter: credential.counter,
      transports: credential.transports ?? [],
      deviceType: credentialDeviceType,
      backedUp: credentialBackedUp,
      name,
      createdAt: now,
    })
    .onConflictDoNothing()
    .returning()
  if (inserted.length === 0) throw new ApiError('PASSKEY_INVALID', { message: 'this passkey is already registered' })
  return inserted[0]!
}

/** The options for navigator.credentials.get(): any discoverable credential of this relying party. */
export async function authenticationOptions(db: Database, config: Config, ceremonies: WebAuthnCeremonies) {
  const options = await ceremonies.authenticationOptions({
    rpID: relyingParty(config).id,
    userVerification: 'preferred',
  })
  await storeChallenge(db, options.challenge, 'login', null)
  return options
}

/**
 * The account a passkey's answer to a sign-in challenge proves, and the write that moves the passkey's counter and
 * last use (for the batch that starts the session). 401 otherwise. The passkey is read and the challenge the answer
 * names is spent in one round trip: any answer spends it, an unknown credential's too, so a probe cannot reuse one.
 */
export async function authenticatePasskey(
  db: Database,
  config: Config,
  ceremonies: WebAuthnCeremonies,
  response: AuthenticationResponseJSON,
) {
  const taking = await challengeTaking(db, response)
  // Apart, not joined: in a batch D1 answers rows as objects, where the user's `id` would overwrite the passkey's.
  const [[passkey], [user], [taken]] = await db.batch([
    db.select().from(passkeys).where(eq(passkeys.credentialId, response.id)).limit(1),
    db
      .select()
      .from(users)
      .where(
        eq(
          users.id,
          db.select({ userId: passkeys.userId }).from(passkeys).where(eq(passkeys.credentialId, response.id)),
        ),
      )
      .limit(1),
    taking.write,
  ])
  if (!passkey || !user) throw new ApiError('PASSKEY_INVALID')
  const found = { passkey, user }
  const isChallengeTaken = isChallengeFor(taken, 'login', null)
  const rp = relyingParty(config)
  const verification = await ceremonies.verifyAuthentication({
    response,
    // The challenge was taken above: the one the answer names, which is the one checked here.
    expectedChallenge: isChallengeTaken ? taking.challenge : null,
    expectedOrigin: rp.origins,
    expectedRPID: rp.id,
    credential: {
      id: found.passkey.credentialId,
      publicKey: Uint8Array.fromBase64(found.passkey.publicKey, { alphabet: 'base64url' }),
      counter: found.passkey.counter,
      transports: found.passkey.transports,
    },
    requireUserVerification: false,
  })
  if (!verification.verified) throw new ApiError('PASSKEY_INVALID', { cause: new Error(verification.reason) })
  const used = db
    .update(passkeys)
    .set({ counter: verification.newCounter, lastUsedAt: Date.now() })
    .where(eq(passkeys.id, found.passkey.id))
  return { user: found.user, used }
}

/** The challenge an answer signed, read from its client data; '' when unreadable. */
function challengeOf(response: { response: { clientDataJSON: string } }): string {
  try {
    const clientData = JSON.parse(
      new TextDecoder().decode(Uint8Array.fromBase64(response.response.clientDataJSON, { alphabet: 'base64url' })),
    ) as { challenge?: unknown }
    return typeof clientData.challenge === 'string' ? clientData.challenge : ''
  } catch {
    return ''
  }
}

/** Removes one of the user's passkeys; false when it is not theirs. */
export async function removePasskey(db: Database, userId: string, id: string): Promise<boolean> {
  const deleted = await db
    .delete(passkeys)
    .where(and(eq(passkeys.id, id), eq(passkeys.userId, userId)))
    .returning({ id: passkeys.id })
  return deleted.length > 0
}
