// The console: a plain page of ES modules (no framework, no build step but Uppy's bundle), same origin as the API.
// This module signs in and out and switches the screens, whose names are the address's fragment so a reload stays
// on the same one: #files (uploads and their conversion trees: console-files.js), #account (second factor,
// passkeys, sign-in providers, API keys: console-account.js) and, for admins, #admin (console-admin.js). The
// sign-in screen is console-sign-in.js; the session and API calls are console-api.js.

import { $, $$, api, dropSession, say, token, whenSessionEnds } from './console-api.js'
import { clearAccount, loadAccount, showLinkResult } from './console-account.js'
import { clearAdmin, loadAdmin } from './console-admin.js'
import { discardFiles, loadFiles, whenUploadUnauthorized } from './console-files.js'
import { showProviders, takeProviderReturn, whenSignedIn } from './console-sign-in.js'

const SCREENS = ['files', 'account', 'admin']
let user

async function showSession() {
  const signedIn = Boolean(token())
  $('#auth-panel').hidden = signedIn
  $('#tabs').hidden = !signedIn
  $('#sign-out').hidden = !signedIn
  $('#who').textContent = ''
  if (!signedIn) {
    for (const screen of SCREENS) $(`#${screen}-panel`).hidden = true
    return showProviders()
  }
  try {
    ;({ body: user } = await api('GET', '/auth/user'))
    $('#who').textContent = user.email
    $('#tab-admin').hidden = user.role !== 'admin'
    await showScreen()
  } catch (error) {
    if (token()) say($('#upload-message'), error.message, true)
  }
}

/** The screen the fragment names (#admin/<user id> opens that user), or the files. */
async function showScreen() {
  if (!token() || !user) return
  const [name, detail] = location.hash.slice(1).split('/')
  const screen = SCREENS.includes(name) && (name !== 'admin' || user.role === 'admin') ? name : 'files'
  for (const other of SCREENS) $(`#${other}-panel`).hidden = other !== screen
  for (const tab of $$('#tabs a')) tab.setAttribute('aria-current', tab.dataset.screen === screen ? 'page' : 'false')
  try {
    if (screen === 'files') await loadFiles()
    if (screen === 'account') await loadAccount()
    if (screen === 'admin') await loadAdmin(detail)
  } catch (error) {
    say($(`#${screen === 'files' ? 'upload' : screen === 'account' ? 'account' : 'admin'}-message`), error.message, true)
  }
}

function signOut(message) {
  discardFiles()
  dropSession()
  user = undefined
  clearAccount()
  clearAdmin()
  $('#new-key').hidden = true
  showSession()
  if (message) say($('#auth-message'), message, true)
}

whenSessionEnds(signOut)
whenUploadUnauthorized(() => signOut('Your session ended: sign in again.'))
whenSignedIn(showSession)
$('#sign-out').addEventListener('click', () => signOut())
window.addEventListener('hashchange', showScreen)

const returned = await takeProviderReturn()
if (returned.linked || (returned.error && token())) {
  location.hash = '#account'
  showLinkResult(returned)
} else if (returned.error) {
  say($('#auth-message'), returned.error, true)
}
// A provider's code exchanged has shown the session already (or the second step it asks for).
if (!(returned.exchanged && token())) await showSession()
