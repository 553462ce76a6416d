// Provider sign-in as a browser and an app do it: start at the Worker, follow the redirects through the provider
// (carrying its cookies) back to the Worker's callback, and exchange the one-time code the app receives.
import { env } from 'cloudflare:test'
import { BASE, call, callJson } from './api'

export const APP_URL = 'https://app.example.com/signed-in'

export interface ProviderAccount {
  sub: string
  email?: string
  email_verified?: boolean
  name?: string
}

export type IdTokenFlaw = 'none' | 'forged' | 'expired' | 'audience' | 'nonce'

/** Names the account the provider of this authorization URL signs in for it (by its state), and for the stand-in
 * the flaw of the ID token it answers with. */
export async function loginAt(
  authorizationUrl: string | URL,
  account: ProviderAccount,
  flaw: IdTokenFlaw = 'none',
): Promise<void> {
  const url = new URL(authorizationUrl)
  const base = url.origin === new URL(env.OIDC_PROVIDER_URL).origin ? env.OIDC_PROVIDER_URL : env.OAUTH_STAND_IN_URL
  const res = await fetch(`${base}/test/login`, {
    method: 'POST',
    body: JSON.stringify({ state: url.searchParams.get('state'), account, flaw }),
  })
  if (!res.ok) throw new Error(`login: ${res.status}`)
}

function setCookies(headers: Headers): string[] {
  return typeof headers.getSetCookie === 'function'
    ? headers.getSetCookie()
    : (headers.get('set-cookie') ?? '').split(/,(?=\s*[^;,=\s]+=)/)
}

/** Follows a browser's redirects from the provider's authorization URL until the provider sends it back to the
 * Worker; answers that callback's path and query. */
export async function throughProvider(authorizationUrl: string): Promise<string> {
  const cookies = new Map<string, string>()
  let location = authorizationUrl
  for (let hop = 0; hop < 12; hop++) {
    if (location.startsWith(BASE)) return location.slice(BASE.length)
    const res = await fetch(location, {
      redirect: 'manual',
      headers: { cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join('; ') },
    })
    for (const header of setCookies(res.headers)) {
      const pair = header.split(';')[0]!
      const equals = pair.indexOf('=')
      if (equals > 0) cookies.set(pair.slice(0, equals).trim(), pair.slice(equals + 1))
    }
    const next = res.headers.get('location')
    if (!next) throw new Error(`${location} answered ${res.status}: ${await res.text()}`)
    location = new URL(next, location).toString()
  }
  throw new Error('too many redirects')
}

/** GET /auth/oauth/:provider → the provider's authorization URL (asserting the redirect). */
export async function startSignIn(provider: string, redirectUrl = APP_URL): Promise<URL> {
  const res = await call('GET', `/auth/oauth/${provider}?redirect_url=${encodeURIComponent(redirectUrl)}`)
  if (res.status !== 302) throw new Error(`start answered ${res.status}: ${await res.text()}`)
  return new URL(res.headers.get('location')!)
}

/** The whole sign-in of this provider account up to the app: the URL the Worker finally sends the browser to
 * (with ?code= or ?error=). */
export async function signInThrough(
  provider: string,
  account: ProviderAccount,
  flaw: IdTokenFlaw = 'none',
): Promise<URL> {
  const authorization = await startSignIn(provider)
  await loginAt(authorization, account, flaw)
  return backToApp(await throughProvider(authorization.toString()))
}

/** The Worker's callback, answered with a redirect to the app. */
export async function backToApp(callbackPath: string): Promise<URL> {
  const res = await call('GET', callbackPath)
  if (res.status !== 302) throw new Error(`callback answered ${res.status}: ${await res.text()}`)
  return new URL(res.headers.get('location')!)
}

export function exchange(code: string) {
  return callJson('POST', '/auth/oauth/exchange', { json: { code } })
}
