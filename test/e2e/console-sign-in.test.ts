// The console's sign-in screens in headless Chromium against the real Worker (wrangler dev): TOTP enrolment from the
// otpauth:// URI it shows, recovery codes shown once, a login's second step with a code and with a recovery code,
// turning the factor off; and a passkey registered on the account screen with Chromium's virtual authenticator,
// then signing in with it and removing it. The page is at PASSKEY_ORIGIN, routed to the Worker, since WebAuthn
// refuses an IP address as relying party id (WebAuthn Level 3 §5.1.3). And a sign-in provider (a real OpenID
// Provider on loopback) linked through its sign-in, used to sign in, and unlinked.
import { createHmac } from 'node:crypto'
import type { Page } from 'playwright-core'
import { describe, expect, inject, it } from 'vitest'
import { browserForFile, CONSOLE_PASSWORD, openPage, registerInConsole } from './chromium.ts'
import { PASSKEY_ORIGIN, uniqueEmail } from './dev-worker.ts'

const WAIT_MS = 60_000
const SHOTS = '/tmp/console-shots'
const worker = { url: inject('devWorkerUrl') }
const browser = browserForFile(worker.url)

/** The console at PASSKEY_ORIGIN, every request answered by the Worker; `errors` collects script errors. */
async function consolePage(): Promise<{ page: Page; errors: string[] }> {
  const page = await browser().newPage({ viewport: { width: 1100, height: 900 } })
  const errors: string[] = []
  page.on('pageerror', (error) => errors.push(error.message))
  page.on('console', (message) => message.type() === 'error' && errors.push(message.text()))
  await page.route(`${PASSKEY_ORIGIN}/**`, async (route) => {
    const response = await route.fetch({ url: route.request().url().replace(PASSKEY_ORIGIN, worker.url) })
    await route.fulfill({ response })
  })
  await page.goto(`${PASSKEY_ORIGIN}/console`)
  return { page, errors }
}

const PASSWORD = CONSOLE_PASSWORD

/** Script errors, without Chromium's log line of each 4xx answer (a wrong code, a removed passkey: asked for here). */
const scriptErrors = (errors: string[]) =>
  errors.filter((error) => !/the server responded with a status of 4\d\d/.test(error))

async function signOut(page: Page) {
  await page.click('#sign-out')
  await page.waitForSelector('#auth-panel:not([hidden])', { timeout: WAIT_MS })
}

async function signInWithPassword(page: Page, email: string) {
  await page.fill('#auth-form input[name=email]', email)
  await page.fill('#auth-form input[name=password]', PASSWORD)
  await page.click('#auth-form button[value=login]')
}

async function openAccount(page: Page) {
  await page.click('#tabs a[data-screen=account]')
  await page.waitForSelector('#account-panel:not([hidden])', { timeout: WAIT_MS })
}

/**
 * The TOTP code of an otpauth:// URI (Key Uri Format: secret in RFC 4648 base32, algorithm, digits, period) for a
 * time step, computed here as RFC 6238 §4 and RFC 4226 §5.3 say, not by the Worker's code: HMAC of the 8-byte
 * big-endian step, dynamic truncation, modulo 10^digits.
 */
function totpOf(uri: string, step: number): string {
  const params = new URL(uri).searchParams
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'
  const bits = [...params.get('secret')!.replace(/=+$/, '').toUpperCase()]
    .map((char) => alphabet.indexOf(char).toString(2).padStart(5, '0'))
    .join('')
  const key = Buffer.from(bits.match(/.{8}/g)!.map((byte) => Number.parseInt(byte, 2)))
  const counter = Buffer.alloc(8)
  counter.writeBigUInt64BE(BigInt(step))
  const algorithm = (params.get('algorithm') ?? 'SHA1').toLowerCase().replace('-', '')
  const mac = createHmac(algorithm, key).update(counter).digest()
  const offset = mac[mac.length - 1]! & 0xf
  const digits = Number(params.get('digits') ?? 6)
  return String((mac.readUInt32BE(offset) & 0x7fffffff) % 10 ** digits).padStart(digits, '0')
}

const stepNow = (uri: string) => Math.floor(Date.now() / 1000 / Number(new URL(uri).searchParams.get('period') ?? 30))

describe('the console: a second factor (TOTP)', () => {
  it('enrols from the otpauth:// URI, shows the recovery codes once, asks for a code at login, takes a recovery code, and turns off', async () => {
    const { page, errors } = await consolePage()
    const email = uniqueEmail('console-totp')
    await registerInConsole(page, email)
    await openAccount(page)
    await expect.poll(() => page.getAttribute('#totp-state', 'data-enabled')).toBe('false')

    await page.click('#totp-start')
    await page.waitForSelector('#totp-enrolment:not([hidden])')
    const uri = (await page.getAttribute('#totp-uri', 'href'))!
    expect(uri).toMatch(/^otpauth:\/\/totp\/[^?]+\?/)
    expect(new URL(uri).searchParams.get('secret')).toBe(await page.textContent('#totp-secret'))
    await page.screenshot({ path: `${SHOTS}/totp-enrolment.png`, fullPage: true })

    await page.fill('#totp-confirm-form input[name=code]', totpOf(uri, stepNow(uri)))
    await page.click('#totp-confirm-form button[type=submit]')
    await page.waitForSelector('#recovery-codes:not([hidden])', { timeout: WAIT_MS })
    const codes = await page.locator('#recovery-codes-list code').allTextContents()
    expect(codes).toHaveLength(10)
    for (const code of codes) expect(code).toMatch(/^[a-z2-7]{4}(-[a-z2-7]{4}){3}$/)
    await expect.poll(() => page.getAttribute('#totp-state', 'data-enabled')).toBe('true')
    expect(await page.isHidden('#totp-enrolment')).toBe(true)
    await page.screenshot({ path: `${SHOTS}/totp-recovery-codes.png`, fullPage: true })

    // Shown once: the screen opened again shows how many are left, never the codes.
    await page.reload()
    await page.waitForSelector('#account-panel:not([hidden])', { timeout: WAIT_MS })
    await expect.poll(() => page.textContent('#totp-state')).toContain('10 recovery codes left')
    expect(await page.isHidden('#recovery-codes')).toBe(true)

    // The password alone no longer signs in: the second step asks for a code.
    await signOut(page)
    await signInWithPassword(page, email)
    await page.waitForSelector('#second-step-form:not([hidden])', { timeout: WAIT_MS })
    expect(await page.textContent('#who')).toBe('')
    await page.screenshot({ path: `${SHOTS}/login-second-step.png`, fullPage: true })
    await page.fill('#second-step-form input[name=code]', '000000')
    await page.click('#second-step-form button[type=submit]')
    await expect.poll(() => page.getAttribute('#auth-message', 'class')).toContain('error')
    // The confirming code's step is spent (RFC 6238 §5.2): the next step's code, which the window accepts.
    await page.fill('#second-step-form input[name=code]', totpOf(uri, stepNow(uri) + 1))
    await page.click('#second-step-form button[type=submit]')
    await expect.poll(() => page.textContent('#who'), { timeout: WAIT_MS }).toBe(email)

    // A recovery code instead of a code, once.
    await signOut(page)
    await signInWithPassword(page, email)
    await page.waitForSelector('#second-step-form:not([hidden])', { timeout: WAIT_MS })
    await page.fill('#second-step-form input[name=code]', codes[0]!.toUpperCase())
    await page.click('#second-step-form button[type=submit]')
    await expect.poll(() => page.textContent('#who'), { timeout: WAIT_MS }).toBe(email)
    await openAccount(page)
    await expect.poll(() => page.textContent('#totp-state')).toContain('9 recovery codes left')

    // Off, with another recovery code: the password alone signs in again.
    await page.fill('#totp-manage input[name=proof]', codes[1]!)
    await page.click('#totp-manage button[value=remove]')
    await expect.poll(() => page.getAttribute('#totp-state', 'data-enabled')).toBe('false')
    await signOut(page)
    await signInWithPassword(page, email)
    await expect.poll(() => page.textContent('#who'), { timeout: WAIT_MS }).toBe(email)
    expect(scriptErrors(errors)).toEqual([])
    await page.unrouteAll({ behavior: 'ignoreErrors' })
    await page.close()
  })
})

describe('the console: passkeys', () => {
  it('registers a passkey on the account screen, signs in with it (no email typed), and removes it', async () => {
    const { page, errors } = await consolePage()
    const cdp = await page.context().newCDPSession(page)
    await cdp.send('WebAuthn.enable')
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
    const email = uniqueEmail('console-passkey')
    await registerInConsole(page, email)
    await openAccount(page)

    await page.fill('#passkey-form input[name=name]', 'work laptop')
    await page.click('#passkey-form button[type=submit]')
    await expect.poll(() => page.locator('#passkeys li').count(), { timeout: WAIT_MS }).toBe(1)
    expect(await page.textContent('#passkeys li .passkey-label')).toMatch(
      /^work laptop · this device only · added .+ · never used$/,
    )
    expect(await page.textContent('#passkey-message')).toBe(
      'Added the passkey "work laptop": it signs in without a password.',
    )
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId })
    expect(credentials).toHaveLength(1)
    expect(credentials[0]!.isResidentCredential).toBe(true)
    await page.screenshot({ path: `${SHOTS}/passkeys.png`, fullPage: true })

    await signOut(page)
    await page.screenshot({ path: `${SHOTS}/sign-in.png`, fullPage: true })
    await page.click('#passkey-sign-in')
    await expect.poll(() => page.textContent('#who'), { timeout: WAIT_MS }).toBe(email)

    await openAccount(page)
    await expect.poll(() => page.textContent('#passkeys li .passkey-label')).toContain('last used')
    page.once('dialog', (dialog) => dialog.accept())
    await page.click('#passkeys li button[data-action=remove]')
    await expect.poll(() => page.locator('#passkeys li').count()).toBe(0)
    // Removed: the authenticator still holds the credential, and the API no longer takes it.
    await signOut(page)
    await page.click('#passkey-sign-in')
    await expect.poll(() => page.getAttribute('#auth-message', 'class'), { timeout: WAIT_MS }).toContain('error')
    expect(await page.textContent('#who')).toBe('')
    expect(scriptErrors(errors)).toEqual([])
    await page.unrouteAll({ behavior: 'ignoreErrors' })
    await page.close()
  })
})

describe('the console: sign-in providers', () => {
  // The run's Worker offers one provider, `loopback`: a real OpenID Provider (oidc-provider) on loopback whose login
  // signs in the account the test names for the request's state (test/setup/oauth-providers.ts).
  const oidcUrl = inject('devOidcProviderUrl')

  /** Answers the provider's login, for each authorization request the page makes, with `account`. */
  async function signInAtProvider(page: Page, account: { sub: string; email: string }) {
    await page.route(
      (url) => url.origin === oidcUrl && url.pathname === '/auth',
      async (route) => {
        const state = new URL(route.request().url()).searchParams.get('state')
        await fetch(`${oidcUrl}/test/login`, {
          method: 'POST',
          body: JSON.stringify({ state, account: { ...account, email_verified: true, name: 'Provider User' } }),
        })
        await route.continue()
      },
    )
  }

  it('links a provider through its sign-in, signs in with it (the one-time code exchanged), and unlinks it', async () => {
    const { page, errors } = await openPage(browser(), `${worker.url}/console`)
    const email = uniqueEmail('console-provider')
    await registerInConsole(page, email)
    const account = { sub: crypto.randomUUID(), email: uniqueEmail('elsewhere') }
    await signInAtProvider(page, account)

    await openAccount(page)
    await page.click('#link-providers button[data-action=link]')
    // Through the provider and back: /console?linked=loopback, which the page reads and takes out of the address.
    await expect
      .poll(() => page.textContent('#identity-message'), { timeout: WAIT_MS })
      .toBe('Linked loopback: it signs in to this account now.')
    expect(new URL(page.url()).search).toBe('')
    await expect.poll(() => page.locator('#identities li').count()).toBe(1)
    expect(await page.textContent('#identities li span')).toMatch(
      new RegExp(`^Loopback OP · ${account.email} · linked .+ · last used .+$`),
    )
    await page.screenshot({ path: `${SHOTS}/providers.png`, fullPage: true })

    await signOut(page)
    const button = page.locator('#providers a[data-provider=loopback]')
    expect(await button.textContent()).toBe('Sign in with Loopback OP')
    await button.click()
    // Back with ?code=, exchanged at POST /auth/oauth/exchange: the session of the linked account, no token in a URL.
    await expect.poll(() => page.textContent('#who'), { timeout: WAIT_MS }).toBe(email)
    expect(new URL(page.url()).search).toBe('')

    await openAccount(page)
    await page.click('#identities li button[data-action=unlink]')
    await expect.poll(() => page.locator('#identities li').count()).toBe(0)
    expect(await page.textContent('#identity-message')).toBe('Loopback OP no longer signs in to this account.')
    expect(scriptErrors(errors)).toEqual([])
    await page.unrouteAll({ behavior: 'ignoreErrors' })
    await page.close()
  })
})
