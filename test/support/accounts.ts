// Accounts for tests: unique users signed up and logged in through the real endpoints, and the emails the
// Worker sent, read from the loopback mail catcher.
import { env } from 'cloudflare:test'
import { callJson } from './api'
import { until } from './until'

export function uniqueEmail(prefix = 'user'): string {
  return `${prefix}-${crypto.randomUUID().slice(0, 12)}@example.com`
}

export interface TestUser {
  id: string
  email: string
  password: string
  token: string
  refreshToken: string
}

export async function signUp(fields: Record<string, unknown> = {}): Promise<TestUser> {
  const email = (fields.email as string | undefined) ?? uniqueEmail()
  const password = (fields.password as string | undefined) ?? 'a long enough password'
  const registered = await callJson('POST', '/auth/register', {
    json: { name: 'Test User', ...fields, email, password },
  })
  if (registered.status !== 201)
    throw new Error(`register failed: ${registered.status} ${JSON.stringify(registered.body)}`)
  const login = await callJson('POST', '/auth/login', { json: { email, password } })
  if (login.status !== 200) throw new Error(`login failed: ${login.status} ${JSON.stringify(login.body)}`)
  return {
    id: registered.body.user._id,
    email,
    password,
    token: login.body.token,
    refreshToken: login.body.refresh_token,
  }
}

export interface CapturedEmail {
  headers: Record<string, string>
  body: {
    personalizations: Array<{ to: Array<{ email: string }> }>
    from: { email: string; name?: string }
    subject: string
    content: Array<{ type: string; value: string }>
  }
}

export async function emailsTo(address: string): Promise<CapturedEmail[]> {
  const response = await fetch(`${env.MAIL_CATCHER_URL}/messages?to=${encodeURIComponent(address)}`)
  return response.json()
}

/** Waits for the n-th email to an address (reset emails are sent after the response). */
export async function waitForEmail(address: string, count = 1): Promise<CapturedEmail> {
  const emails = await until(
    `email #${count} to ${address}`,
    () => emailsTo(address),
    (emails) => emails.length >= count,
    { intervalMs: 25 },
  )
  return emails[count - 1]!
}

export function tokenIn(email: CapturedEmail): string {
  const text = email.body.content.find((part) => part.type === 'text/plain')?.value ?? ''
  const match = /token=([^\s&]+)/.exec(text)
  if (!match) throw new Error('no token in email')
  return decodeURIComponent(match[1]!)
}
