// What every screen of the console shares: the session (the access token in sessionStorage, gone when the tab
// closes; the refresh token only in memory), calls to the API with it, and small DOM helpers.

const TOKEN_KEY = 'edgefloor.token'

export const $ = (selector, root = document) => root.querySelector(selector)
export const $$ = (selector, root = document) => [...root.querySelectorAll(selector)]

let refreshToken
/** Called when a request finds the session ended (set by console.js). */
let onSessionEnded = () => {}

export function token() {
  return sessionStorage.getItem(TOKEN_KEY)
}

/** Keeps a session the API answered (login, its second step, a passkey, a provider's code). */
export function keepSession(session) {
  sessionStorage.setItem(TOKEN_KEY, session.token)
  refreshToken = session.refresh_token
}

/** Forgets the session, telling the API to end it when its refresh token is known. */
export function dropSession() {
  if (refreshToken) api('POST', '/auth/logout', { json: { refresh_token: refreshToken } }).catch(() => {})
  sessionStorage.removeItem(TOKEN_KEY)
  refreshToken = undefined
}

export function whenSessionEnds(callback) {
  onSessionEnded = callback
}

/**
 * For a screen's loader: each call takes a turn, and `isCurrent()` says whether a later call has started since. A
 * slower, older answer (the screen's first load) must not overwrite a newer one (the list after a create).
 */
export function turns() {
  let last = 0
  return () => {
    const mine = ++last
    return () => mine === last
  }
}

/** An error answer of the API: its message, code, status and whole body. */
export class ApiFailure extends Error {
  constructor(status, body) {
    super(body?.message ?? `HTTP ${status}`)
    this.status = status
    this.code = body?.code
    this.body = body
  }
}

export async function api(method, path, { json, headers = {}, raw = false } = {}) {
  const init = { method, headers: { ...headers } }
  if (token()) init.headers.authorization = `Bearer ${token()}`
  if (json !== undefined) {
    init.headers['content-type'] = 'application/json'
    init.body = JSON.stringify(json)
  }
  const response = await fetch(path, init)
  if (response.status === 401 && token()) onSessionEnded('Your session ended: sign in again.')
  if (raw) {
    if (!response.ok) throw new ApiFailure(response.status, await errorBody(response))
    return response
  }
  const text = await response.text()
  const body = text ? JSON.parse(text) : undefined
  if (!response.ok) throw new ApiFailure(response.status, body)
  return { body, response }
}

async function errorBody(response) {
  try {
    return await response.json()
  } catch {
    return undefined
  }
}

export function formatBytes(bytes) {
  if (bytes < 1024) return `${bytes} B`
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`
}

export const formatTime = (iso) => (iso ? new Date(iso).toLocaleString() : '—')

export function say(element, text, isError = false) {
  element.textContent = text
  element.classList.toggle('error', isError)
}

/** An element with a class and text; `fields` sets properties (dataset entries go through `data`). */
export function element(tag, { className, text, data, ...fields } = {}, ...children) {
  const node = document.createElement(tag)
  if (className) node.className = className
  if (text !== undefined) node.textContent = text
  for (const [name, value] of Object.entries(data ?? {})) node.dataset[name] = value
  Object.assign(node, fields)
  node.append(...children)
  return node
}

/** A button that runs `action`, showing a failure in `message`. */
export function button(text, action, { className = '', name, message } = {}) {
  const node = element('button', { type: 'button', className, text })
  if (name) node.dataset.action = name
  node.addEventListener('click', async () => {
    node.disabled = true
    try {
      await action()
    } catch (error) {
      if (message) say(message, error.message, true)
    } finally {
      node.disabled = false
    }
  })
  return node
}
