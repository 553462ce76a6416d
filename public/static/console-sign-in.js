// The sign-in screen: email and password (or a new account), the second step when the account has a second factor
// (a code from the authenticator app, or a recovery code), a passkey, or a sign-in provider (its one-time code comes
// back in the URL and is exchanged for the session: never a token in a URL).

import { $, ApiFailure, api, element, keepSession, say, token } from './console-api.js'

/** Set by console.js: what follows a session kept. */
let onSignedIn = async () => {}
export const whenSignedIn = (callback) => (onSignedIn = callback)

const message = () => $('#auth-message')

/** The page's address without query or fragment: where a provider sends the browser back (AUTH_OAUTH_REDIRECT_URLS). */
export const consoleUrl = () => `${location.origin}${location.pathname}`

/** A session answer kept, or the second step shown when the account asks for one. */
async function settle(request) {
  try {
    const { body } = await request()
    keepSession(body)
    say(message(), '')
    showStep('password')
    await onSignedIn()
  } catch (error) {
    if (error instanceof ApiFailure && error.code === 'SECOND_FACTOR_REQUIRED') return askSecondStep(error.body.second_factor_token)
    say(message(), error.message, true)
  }
}

function showStep(step) {
  $('#auth-form').hidden = step !== 'password'
  $('#second-step-form').hidden = step !== 'second'
  $('#other-sign-in').hidden = step !== 'password'
}

// --- password and the second step ----------------------------------------------------------------------

$('#auth-form').addEventListener('submit', async (event) => {
  event.preventDefault()
  const form = event.currentTarget
  const mode = event.submitter?.value ?? 'login'
  const fields = Object.fromEntries(new FormData(form))
  if (mode === 'register') {
    try {
      await api('POST', '/auth/register', { json: { email: fields.email, password: fields.password, name: fields.name || undefined } })
    } catch (error) {
      return say(message(), error.message, true)
    }
  }
  await settle(() => api('POST', '/auth/login', { json: { email: fields.email, password: fields.password } }))
  if (token() || $('#auth-form').hidden) form.reset()
})

function askSecondStep(secondFactorToken) {
  const form = $('#second-step-form')
  form.dataset.token = secondFactorToken
  form.reset()
  showStep('second')
  say(message(), 'This account has a second factor: enter the code your authenticator app shows, or a recovery code.')
  $('input[name=code]', form).focus()
}

$('#second-step-form').addEventListener('submit', async (event) => {
  event.preventDefault()
  const form = event.currentTarget
  const entered = new FormData(form).get('code').trim()
  // Six digits are the app's code; anything longer is a recovery code (xxxx-xxxx-xxxx-xxxx).
  const proof = /^\d{6}$/.test(entered) ? { code: entered } : { recovery_code: entered.toLowerCase() }
  await settle(() => api('POST', '/auth/login/totp', { json: { second_factor_token: form.dataset.token, ...proof } }))
})

$('#second-step-cancel').addEventListener('click', () => {
  showStep('password')
  say(message(), '')
})

// --- passkeys --------------------------------------------------------------------------------------------

const fromBase64Url = (text) => Uint8Array.from(atob(text.replaceAll('-', '+').replaceAll('_', '/')), (c) => c.charCodeAt(0)).buffer
const toBase64Url = (buffer) => btoa(String.fromCharCode(...new Uint8Array(buffer))).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '')
const withIds = (list) => list?.map((credential) => ({ ...credential, id: fromBase64Url(credential.id) }))

/** WebAuthn Level 3's JSON forms (PublicKeyCredential.parse…FromJSON, toJSON), by hand where a browser lacks them. */
export function creationOptions(json) {
  if (PublicKeyCredential.parseCreationOptionsFromJSON) return PublicKeyCredential.parseCreationOptionsFromJSON(json)
  return { ...json, challenge: fromBase64Url(json.challenge), user: { ...json.user, id: fromBase64Url(json.user.id) }, excludeCredentials: withIds(json.excludeCredentials) }
}

function requestOptions(json) {
  if (PublicKeyCredential.parseRequestOptionsFromJSON) return PublicKeyCredential.parseRequestOptionsFromJSON(json)
  return { ...json, challenge: fromBase64Url(json.challenge), allowCredentials: withIds(json.allowCredentials) }
}

export function credentialJson(credential) {
  if (typeof credential.toJSON === 'function') return credential.toJSON()
  const { response } = credential
  const encoded = {}
  for (const name of ['clientDataJSON', 'attestationObject', 'authenticatorData', 'signature', 'userHandle']) if (response[name]) encoded[name] = toBase64Url(response[name])
  if (response.getTransports) encoded.transports = response.getTransports()
  return { id: credential.id, rawId: toBase64Url(credential.rawId), type: credential.type, response: encoded, clientExtensionResults: credential.getClientExtensionResults(), authenticatorAttachment: credential.authenticatorAttachment ?? undefined }
}

$('#passkey-sign-in').addEventListener('click', () =>
  settle(async () => {
    const { body: options } = await api('POST', '/auth/passkeys/login/options')
    const credential = await navigator.credentials.get({ publicKey: requestOptions(options) })
    return api('POST', '/auth/passkeys/login', { json: { credential: credentialJson(credential) } })
  }),
)

// --- sign-in providers -----------------------------------------------------------------------------------

/** The providers' buttons: each goes to GET /auth/oauth/:provider, which sends the browser to the provider. */
export async function showProviders() {
  const box = $('#providers')
  try {
    const { body: providers } = await api('GET', '/auth/oauth')
    box.replaceChildren(
      ...providers.map((provider) => element('a', { className: 'provider button secondary', text: `Sign in with ${provider.name}`, href: `/auth/oauth/${encodeURIComponent(provider.id)}?redirect_url=${encodeURIComponent(consoleUrl())}`, data: { provider: provider.id } })),
    )
  } catch {
    box.replaceChildren()
  }
}

/**
 * A provider's way back: ?code= (a sign-in: exchanged for the session), ?linked= (a link, shown on the account
 * screen) or ?error=. Answers what it found, and takes it out of the address either way.
 */
export async function takeProviderReturn() {
  const params = new URLSearchParams(location.search)
  const code = params.get('code')
  const linked = params.get('linked')
  const error = params.get('error')
  if (!code && !linked && !error) return {}
  history.replaceState(null, '', consoleUrl() + location.hash)
  if (error) return { error: `${params.get('error_description') ?? 'The provider did not sign you in'} (${error})` }
  if (!code) return { linked }
  await settle(() => api('POST', '/auth/oauth/exchange', { json: { code } }))
  return { exchanged: true }
}
