// The account screen: the second factor (TOTP: enrol with the otpauth:// URI, confirm with a first code, recovery
// codes shown once; new recovery codes; remove), passkeys (register, list, remove), linked sign-in providers (link
// through the provider, unlink) and API keys (create with scopes, shown once; revoke). Each section reads its state
// from the API when the screen opens.

import { $, api, button, element, formatTime, say, turns } from './console-api.js'
import { consoleUrl, creationOptions, credentialJson } from './console-sign-in.js'

export async function loadAccount() {
  await Promise.all([loadTotp(), loadPasskeys(), loadIdentities(), loadKeys()])
}

export function clearAccount() {
  for (const selector of ['#totp-state', '#recovery-codes-list', '#passkeys', '#identities', '#link-providers', '#keys']) $(selector).replaceChildren()
  for (const selector of ['#totp-enrolment', '#recovery-codes', '#new-key']) $(selector).hidden = true
}

// --- second factor -----------------------------------------------------------------------------------

const totpMessage = () => $('#totp-message')

const totpTurn = turns()

async function loadTotp() {
  const isCurrent = totpTurn()
  const { body: status } = await api('GET', '/auth/totp')
  if (!isCurrent()) return
  const state = $('#totp-state')
  state.dataset.enabled = String(status.enabled)
  $('#totp-start').hidden = status.enabled
  $('#totp-manage').hidden = !status.enabled
  if (status.enabled) state.textContent = `On since ${formatTime(status.confirmed_at)}: signing in asks for a code. ${status.recovery_codes_left} recovery codes left.`
  else state.textContent = 'Off: signing in needs only the password.'
}

$('#totp-start').addEventListener('click', async () => {
  try {
    const { body } = await api('POST', '/auth/totp')
    $('#totp-uri').textContent = body.otpauth_uri
    $('#totp-uri').href = body.otpauth_uri
    $('#totp-secret').textContent = body.secret
    $('#totp-enrolment').hidden = false
    $('#recovery-codes').hidden = true
    say(totpMessage(), '')
    $('#totp-confirm-form input[name=code]').focus()
  } catch (error) {
    say(totpMessage(), error.message, true)
  }
})

$('#totp-confirm-form').addEventListener('submit', async (event) => {
  event.preventDefault()
  const form = event.currentTarget
  try {
    const { body } = await api('POST', '/auth/totp/confirm', { json: { code: new FormData(form).get('code').trim() } })
    form.reset()
    $('#totp-enrolment').hidden = true
    showRecoveryCodes(body.recovery_codes)
    say(totpMessage(), 'The second factor is on.')
    await loadTotp()
  } catch (error) {
    say(totpMessage(), error.message, true)
  }
})

/** The proof a form holds: six digits are a code, anything else a recovery code. */
function proofOf(form) {
  const entered = new FormData(form).get('proof').trim()
  return /^\d{6}$/.test(entered) ? { code: entered } : { recovery_code: entered.toLowerCase() }
}

$('#totp-manage').addEventListener('submit', async (event) => {
  event.preventDefault()
  const form = event.currentTarget
  const isRemoval = event.submitter?.value === 'remove'
  try {
    if (isRemoval) {
      await api('DELETE', '/auth/totp', { json: proofOf(form) })
      $('#recovery-codes').hidden = true
      say(totpMessage(), 'The second factor was removed.')
    } else {
      const { body } = await api('POST', '/auth/totp/recovery-codes', { json: proofOf(form) })
      showRecoveryCodes(body.recovery_codes)
      say(totpMessage(), 'New recovery codes: the old ones no longer work.')
    }
    form.reset()
    await loadTotp()
  } catch (error) {
    say(totpMessage(), error.message, true)
  }
})

/** Shown once, as the API answers them once: each signs in one time in place of a code. */
function showRecoveryCodes(codes) {
  $('#recovery-codes-list').replaceChildren(...codes.map((code) => element('li', {}, element('code', { text: code }))))
  $('#recovery-codes').hidden = false
}

// --- passkeys ----------------------------------------------------------------------------------------

const passkeyMessage = () => $('#passkey-message')

const passkeysTurn = turns()

async function loadPasskeys() {
  const isCurrent = passkeysTurn()
  const { body: passkeys } = await api('GET', '/auth/passkeys')
  if (!isCurrent()) return
  $('#passkeys').replaceChildren(
    ...passkeys.map((passkey) => {
      const used = passkey.last_used_at ? `last used ${formatTime(passkey.last_used_at)}` : 'never used'
      const synced = passkey.backed_up ? 'synced' : passkey.device_type === 'singleDevice' ? 'this device only' : passkey.device_type
      const remove = button(
        'Remove',
        async () => {
          if (!confirm(`Remove the passkey "${passkey.name}"? It will no longer sign in.`)) return
          await api('DELETE', `/auth/passkeys/${passkey._id}`)
          await loadPasskeys()
        },
        { className: 'danger', name: 'remove', message: passkeyMessage() },
      )
      return element('li', { data: { id: passkey._id } }, element('span', { className: 'passkey-label', text: `${passkey.name} · ${synced} · added ${formatTime(passkey.created_at)} · ${used}` }), ' ', remove)
    }),
  )
}

$('#passkey-form').addEventListener('submit', async (event) => {
  event.preventDefault()
  const form = event.currentTarget
  try {
    const { body: options } = await api('POST', '/auth/passkeys/register/options')
    const credential = await navigator.credentials.create({ publicKey: creationOptions(options) })
    const name = new FormData(form).get('name').trim() || undefined
    const { body: passkey } = await api('POST', '/auth/passkeys/register', { json: { credential: credentialJson(credential), name } })
    form.reset()
    say(passkeyMessage(), `Added the passkey "${passkey.name}": it signs in without a password.`)
    await loadPasskeys()
  } catch (error) {
    say(passkeyMessage(), error.name === 'NotAllowedError' ? 'The passkey was not made (cancelled, or timed out).' : error.message, true)
  }
})

// --- sign-in providers -------------------------------------------------------------------------------

const identityMessage = () => $('#identity-message')

const identitiesTurn = turns()

async function loadIdentities() {
  const isCurrent = identitiesTurn()
  const [{ body: identities }, { body: providers }] = await Promise.all([api('GET', '/auth/identities'), api('GET', '/auth/oauth')])
  if (!isCurrent()) return
  const names = new Map(providers.map((provider) => [provider.id, provider.name]))
  $('#identities').replaceChildren(
    ...identities.map((identity) => {
      const unlink = button(
        'Unlink',
        async () => {
          await api('DELETE', `/auth/identities/${identity._id}`)
          say(identityMessage(), `${names.get(identity.provider) ?? identity.provider} no longer signs in to this account.`)
          await loadIdentities()
        },
        { className: 'danger', name: 'unlink', message: identityMessage() },
      )
      const label = `${names.get(identity.provider) ?? identity.provider} · ${identity.email} · linked ${formatTime(identity.created_at)} · last used ${formatTime(identity.last_used_at)}`
      return element('li', { data: { id: identity._id } }, element('span', { text: label }), ' ', unlink)
    }),
  )
  $('#identities-empty').hidden = identities.length > 0 || providers.length === 0
  $('#providers-none').hidden = providers.length > 0
  // Linking goes through the provider: the API answers its authorization URL, and the provider sends the browser
  // back here with ?linked= (console-sign-in.js takes it).
  $('#link-providers').replaceChildren(
    ...providers.map((provider) =>
      button(
        `Link ${provider.name}`,
        async () => {
          const { body } = await api('POST', `/auth/oauth/${encodeURIComponent(provider.id)}/link`, { json: { redirect_url: consoleUrl() } })
          location.assign(body.authorization_url)
        },
        { className: 'secondary', name: 'link', message: identityMessage() },
      ),
    ),
  )
}

/** What a provider's return said, on this screen. */
export function showLinkResult({ linked, error }) {
  if (linked) say(identityMessage(), `Linked ${linked}: it signs in to this account now.`)
  if (error) say(identityMessage(), error, true)
}

// --- API keys ----------------------------------------------------------------------------------------

const keysTurn = turns()

async function loadKeys() {
  const isCurrent = keysTurn()
  const { body: keys } = await api('GET', '/auth/api-keys')
  if (!isCurrent()) return
  $('#keys').replaceChildren(
    ...keys.map((key) => {
      const used = key.last_used_at ? `last used ${formatTime(key.last_used_at)}` : 'never used'
      const revoke = button(
        'Revoke',
        async () => {
          await api('DELETE', `/auth/api-keys/${key._id}`)
          await loadKeys()
        },
        { className: 'danger', name: 'revoke', message: $('#key-message') },
      )
      return element('li', {}, element('span', { text: `${key.name} · ${key.prefix}… · ${key.scopes.join(', ')} · ${used}` }), ' ', revoke)
    }),
  )
}

$('#key-form').addEventListener('submit', async (event) => {
  event.preventDefault()
  const form = event.currentTarget
  const data = new FormData(form)
  try {
    const { body } = await api('POST', '/auth/api-keys', { json: { name: data.get('name'), scopes: data.getAll('scope') } })
    $('#new-key-value').textContent = body.key
    $('#new-key').hidden = false
    say($('#key-message'), '')
    form.reset()
    await loadKeys()
  } catch (error) {
    say($('#key-message'), error.message, true)
  }
})
