// Passkeys in headless Chromium with its virtual authenticator (Chrome DevTools Protocol, WebAuthn domain: a CTAP2
// authenticator with resident keys and user verification) against the real Worker under wrangler dev: register two
// passkeys for one account, sign in with each (discoverable credentials: no email typed), refuse a replayed answer,
// and refuse a removed passkey. The page is at PASSKEY_ORIGIN, routed to the Worker, since WebAuthn refuses an IP
// address as relying party id (WebAuthn Level 3 §5.1.3).
import type { CDPSession, Page } from 'playwright-core'
import { describe, expect, inject, it } from 'vitest'
import { browserForFile } from './chromium.ts'
import { PASSKEY_ORIGIN, uniqueEmail } from './dev-worker.ts'

const worker = { url: inject('devWorkerUrl') }
const browser = browserForFile(worker.url)

async function signUp(): Promise<{ token: string; id: string; email: string }> {
  const email = uniqueEmail('passkey')
  const post = (path: string, body: unknown) =>
    fetch(`${worker.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
  const registered = (await (
    await post('/auth/register', { email, password: 'a long enough password', name: 'Passkey User' })
  ).json()) as { user: { _id: string } }
  const login = (await (await post('/auth/login', { email, password: 'a long enough password' })).json()) as {
    token: string
  }
  return { token: login.token, id: registered.user._id, email }
}

/** A page at PASSKEY_ORIGIN whose requests the Worker answers. */
async function passkeyPage(): Promise<{ page: Page; cdp: CDPSession }> {
  const page = await browser().newPage()
  await page.route(`${PASSKEY_ORIGIN}/**`, async (route) => {
    const response = await route.fetch({ url: route.request().url().replace(PASSKEY_ORIGIN, worker.url) })
    await route.fulfill({ response })
  })
  await page.goto(`${PASSKEY_ORIGIN}/`)
  const cdp = await page.context().newCDPSession(page)
  await cdp.send('WebAuthn.enable')
  return { page, cdp }
}

async function addAuthenticator(cdp: CDPSession): Promise<string> {
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  })
  return authenticatorId
}

interface Answer {
  status: number
  body: any
  credential?: unknown
}

// The page code is a string: the Node project has no DOM types. It uses WebAuthn Level 3's JSON helpers
// (parseCreationOptionsFromJSON, parseRequestOptionsFromJSON, toJSON), as @simplewebauthn/browser would.
const registerInPage = (page: Page, token: string, name: string): Promise<Answer> =>
  page.evaluate(`(async () => {
    const auth = { authorization: 'Bearer ' + ${JSON.stringify(token)} }
    const options = await (await fetch('/auth/passkeys/register/options', { method: 'POST', headers: auth })).json()
    const credential = await navigator.credentials.create({ publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(options) })
    const res = await fetch('/auth/passkeys/register', { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ credential: credential.toJSON(), name: ${JSON.stringify(name)} }) })
    return { status: res.status, body: await res.json() }
  })()`)

const signInInPage = (page: Page): Promise<Answer> =>
  page.evaluate(`(async () => {
    const options = await (await fetch('/auth/passkeys/login/options', { method: 'POST' })).json()
    const credential = (await navigator.credentials.get({ publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(options) })).toJSON()
    const res = await fetch('/auth/passkeys/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ credential }) })
    return { status: res.status, body: await res.json(), credential }
  })()`)

const sendAgain = (page: Page, credential: unknown): Promise<Answer> =>
  page.evaluate(`(async () => {
    const res = await fetch('/auth/passkeys/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ credential: ${JSON.stringify(credential)} }) })
    return { status: res.status, body: await res.json() }
  })()`)

describe('passkeys in Chromium with a virtual authenticator', () => {
  it('registers two passkeys for one account, signs in with each, refuses a replay and a removed passkey', async () => {
    const user = await signUp()
    const { page, cdp } = await passkeyPage()

    const laptop = await addAuthenticator(cdp)
    const first = await registerInPage(page, user.token, 'laptop')
    expect(first).toMatchObject({
      status: 201,
      body: { _id: expect.any(String), name: 'laptop', device_type: 'singleDevice', last_used_at: null },
    })
    const signedIn = await signInInPage(page)
    expect(signedIn).toMatchObject({
      status: 200,
      body: { token: expect.any(String), refresh_token: expect.any(String), user: { _id: user.id, email: user.email } },
    })
    // The same answer again: its challenge was spent.
    expect(await sendAgain(page, signedIn.credential)).toMatchObject({ status: 401, body: { code: 'PASSKEY_INVALID' } })

    // A second device: the first authenticator's credential is kept to come back later.
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId: laptop })
    expect(credentials).toHaveLength(1)
    await cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId: laptop })
    const phone = await addAuthenticator(cdp)
    const second = await registerInPage(page, user.token, 'phone')
    expect(second).toMatchObject({ status: 201, body: { name: 'phone' } })
    const listed = (await (
      await fetch(`${worker.url}/auth/passkeys`, { headers: { authorization: `Bearer ${user.token}` } })
    ).json()) as Array<{ _id: string; name: string; last_used_at: string | null }>
    expect(listed.map((passkey) => passkey.name)).toEqual(['laptop', 'phone'])
    expect(listed[0]!.last_used_at).toEqual(expect.any(String))
    expect((await signInInPage(page)).body.user._id).toBe(user.id)

    const removed = await fetch(`${worker.url}/auth/passkeys/${second.body._id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${user.token}` },
    })
    expect(removed.status).toBe(200)
    expect(await signInInPage(page)).toMatchObject({ status: 401, body: { code: 'PASSKEY_INVALID' } })

    // The laptop comes back with its credential: it still signs in, the counter it reports moving on.
    await cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId: phone })
    const back = await addAuthenticator(cdp)
    await cdp.send('WebAuthn.addCredential', { authenticatorId: back, credential: credentials[0]! })
    expect(await signInInPage(page)).toMatchObject({ status: 200, body: { user: { _id: user.id } } })
    await page.close()
  })
})
