// The console: sign in, upload through Uppy's Dashboard (tus, resumable; Uppy is bundled into /static/uppy.js at
// build time by .ci/build-console.ts), see each file's preview (GET /files/:id/preview), convert (or extract the
// text) and watch the job live, see PNG outputs (and a PDF's first page) as thumbnails and .txt outputs as text,
// download, delete. Same origin; the access token lives in sessionStorage (gone when the tab closes), the refresh
// token only in memory.

import { Dashboard, Tus, Uppy } from './uppy.js'

const TOKEN_KEY = 'edgefloor.token'
const POLL_INTERVAL_MS = 400
const THUMBNAIL_LIMIT = 24

const $ = (selector, root = document) => root.querySelector(selector)
let refreshToken
/** PNG file id → object URL of its bytes, so a page shown twice (itself, and as its PDF's cover) loads once. */
const objectUrls = new Map()

function token() {
  return sessionStorage.getItem(TOKEN_KEY)
}

async function api(method, path, { json, headers = {}, raw = false } = {}) {
  const init = { method, headers: { ...headers } }
  if (token()) init.headers.authorization = `Bearer ${token()}`
  if (json !== undefined) {
    init.headers['content-type'] = 'application/json'
    init.body = JSON.stringify(json)
  }
  const response = await fetch(path, init)
  if (response.status === 401 && token()) signOut('Your session ended: sign in again.')
  if (raw) {
    if (!response.ok) throw new Error(await errorMessage(response))
    return response
  }
  const text = await response.text()
  const body = text ? JSON.parse(text) : undefined
  if (!response.ok) throw new Error(body?.message ?? `HTTP ${response.status}`)
  return { body, response }
}

async function errorMessage(response) {
  try {
    return (await response.json()).message ?? `HTTP ${response.status}`
  } catch {
    return `HTTP ${response.status}`
  }
}

function formatBytes(bytes) {
  if (bytes < 1024) return `${bytes} B`
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`
}

function say(element, text, isError = false) {
  element.textContent = text
  element.classList.toggle('error', isError)
}

// --- session -------------------------------------------------------------------------------------------

async function showSession() {
  const signedIn = Boolean(token())
  $('#auth-panel').hidden = signedIn
  $('#files-panel').hidden = !signedIn
  $('#sign-out').hidden = !signedIn
  $('#who').textContent = ''
  if (!signedIn) return
  try {
    const { body: user } = await api('GET', '/auth/user')
    $('#who').textContent = user.email
    await Promise.all([loadFiles(), loadKeys()])
  } catch (error) {
    if (token()) say($('#upload-message'), error.message, true)
  }
}

function signOut(message) {
  discardUploads()
  if (refreshToken) api('POST', '/auth/logout', { json: { refresh_token: refreshToken } }).catch(() => {})
  sessionStorage.removeItem(TOKEN_KEY)
  refreshToken = undefined
  for (const url of objectUrls.values()) url.then((value) => URL.revokeObjectURL(value), () => {})
  objectUrls.clear()
  $('#files').replaceChildren()
  $('#keys').replaceChildren()
  $('#new-key').hidden = true
  showSession()
  if (message) say($('#auth-message'), message, true)
}

$('#auth-form').addEventListener('submit', async (event) => {
  event.preventDefault()
  const form = event.currentTarget
  const mode = event.submitter?.value ?? 'login'
  const fields = Object.fromEntries(new FormData(form))
  const message = $('#auth-message')
  try {
    if (mode === 'register') {
      await api('POST', '/auth/register', { json: { email: fields.email, password: fields.password, name: fields.name || undefined } })
    }
    const { body } = await api('POST', '/auth/login', { json: { email: fields.email, password: fields.password } })
    sessionStorage.setItem(TOKEN_KEY, body.token)
    refreshToken = body.refresh_token
    say(message, '')
    form.reset()
    await showSession()
  } catch (error) {
    say(message, error.message, true)
  }
})

$('#sign-out').addEventListener('click', () => signOut())

// --- API keys ------------------------------------------------------------------------------------------

async function loadKeys() {
  const { body: keys } = await api('GET', '/auth/api-keys')
  $('#keys').replaceChildren(...keys.map(keyItem))
}

function keyItem(key) {
  const item = document.createElement('li')
  const used = key.last_used_at ? `last used ${new Date(key.last_used_at).toLocaleString()}` : 'never used'
  const label = document.createElement('span')
  label.textContent = `${key.name} · ${key.prefix}… · ${key.scopes.join(', ')} · ${used}`
  const revoke = document.createElement('button')
  revoke.type = 'button'
  revoke.className = 'danger'
  revoke.textContent = 'Revoke'
  revoke.dataset.action = 'revoke'
  revoke.addEventListener('click', async () => {
    try {
      await api('DELETE', `/auth/api-keys/${key._id}`)
      item.remove()
    } catch (error) {
      say($('#key-message'), error.message, true)
    }
  })
  item.append(label, ' ', revoke)
  return item
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

// --- upload --------------------------------------------------------------------------------------------

/**
 * tus PATCHes of at most this many bytes: Cloudflare refuses request bodies over 100 MB (Free and Pro plans), so
 * a larger file goes in several requests. Any size works for the Worker, which cuts the bytes into R2 parts itself.
 */
const UPLOAD_CHUNK_BYTES = 50 * 1024 * 1024

// Uppy's Dashboard (drag and drop, per-file progress, pause and resume) over its tus uploader to /files/tus.
// tus-js-client keeps each unfinished upload's URL in localStorage (a "tus::" key, the URL only, no token), so
// the same file added again after a reload resumes from the server's offset; the key goes when the upload ends.
// The instance is `window.uppy` for scripts and tests (e.g. `uppy.getPlugin('Tus').setOptions({ chunkSize })`).
const uppy = new Uppy({ id: 'edgefloor', autoProceed: true })
  .use(Dashboard, {
    inline: true,
    target: '#uploader',
    width: '100%',
    height: 300,
    proudlyDisplayPoweredByUppy: false,
    note: 'Uploads resume where they stopped: after a reload or a lost connection, add the same file again.',
  })
  .use(Tus, {
    endpoint: new URL('/files/tus', location.href).href,
    chunkSize: UPLOAD_CHUNK_BYTES,
    limit: 3,
    removeFingerprintOnSuccess: true,
    // Exactly the Upload-Metadata keys the API reads (the X-Edgefloor-* meanings); set on file-added below.
    allowedMetaFields: ['filename', 'filetype', 'modified'],
    // The token is read at each request, not once, so a new sign-in applies to uploads already running.
    onBeforeRequest: (request) => token() && request.setHeader('authorization', `Bearer ${token()}`),
  })
window.uppy = uppy

uppy.on('file-added', (file) => {
  const modified = file.data?.lastModified
  uppy.setFileMeta(file.id, { filename: file.name, filetype: file.type || 'application/octet-stream', ...(modified ? { modified: String(modified) } : {}) })
})

uppy.on('upload-success', async (file, response) => {
  // The PATCH that completes the upload (or the HEAD that finds it complete) names the file record it became.
  const id = response?.body?.xhr?.getResponseHeader('x-edgefloor-file-id')
  try {
    if (!id) return await loadFiles()
    const { body: record } = await api('GET', `/files/${encodeURIComponent(id)}`)
    say($('#upload-message'), `Uploaded ${record.name} (${formatBytes(record.size)})`)
    $('#files').prepend(fileItem(record))
    $('#files-empty').hidden = true
  } catch (error) {
    say($('#upload-message'), error.message, true)
  }
})

uppy.on('upload-error', (file, error, response) => {
  const status = response?.status
  if (status === 401 && token()) return signOut('Your session ended: sign in again.')
  let message = error?.message ?? 'upload failed'
  try {
    message = JSON.parse(response.body.xhr.responseText).message ?? message
  } catch {}
  say($('#upload-message'), `${file?.name ?? 'upload'}: ${message}`, true)
})

/** Ends every upload of this session and forgets their URLs, so nothing of them outlives a sign-out. */
function discardUploads() {
  uppy.cancelAll()
  for (const key of Object.keys(localStorage)) if (key.startsWith('tus::')) localStorage.removeItem(key)
}

// --- files ---------------------------------------------------------------------------------------------

async function loadFiles() {
  const { body: files } = await api('GET', '/files?root=true')
  const roots = files.filter((file) => !file.parent_file)
  const items = roots.map(fileItem)
  $('#files').replaceChildren(...items)
  $('#files-empty').hidden = roots.length > 0
  // Outputs of earlier conversions: GET /files/:id carries the direct children.
  for (const [index, record] of roots.slice(0, THUMBNAIL_LIMIT).entries()) {
    const { body: detail } = await api('GET', `/files/${record._id}`)
    if (detail.files?.length) await showOutputs(items[index], detail.files)
  }
}

function fileItem(record) {
  const item = $('#file-template').content.firstElementChild.cloneNode(true)
  item.dataset.id = record._id
  $('.file-name', item).textContent = record.name
  $('.file-meta', item).textContent = `${record.extension} · ${record.content_type} · ${formatBytes(record.size)}`
  $('[data-action="convert"]', item).addEventListener('click', () => convert(record, item))
  $('[data-action="text"]', item).addEventListener('click', () => convert(record, item, { to: '.txt' }))
  if (record.preview_url) showPreview(record, item)
  $('[data-action="download"]', item).addEventListener('click', () => download(record))
  $('[data-action="delete"]', item).addEventListener('click', () => remove(record, item))
  return item
}

const PREVIEW_TRIES = 40

/**
 * The file's preview in its list item, from the record's signed preview_url (no bearer needed). An Office
 * document answers 202 while its PDF is made: asked again after Retry-After, a bounded number of times.
 */
async function showPreview(record, item) {
  const url = `${record.preview_url}&w=128&h=128`
  for (let tries = 0; tries < PREVIEW_TRIES; tries++) {
    const response = await fetch(url)
    if (response.status === 202) {
      await new Promise((resolve) => setTimeout(resolve, Number(response.headers.get('retry-after') ?? 3) * 1000))
      continue
    }
    if (!response.ok) return
    const image = document.createElement('img')
    image.className = 'thumbnail preview'
    image.alt = `preview of ${record.name}`
    image.src = URL.createObjectURL(await response.blob())
    $('.file-head', item).prepend(image)
    return
  }
}

/** A file's name with its extension, as downloads offer it: converted files are named "<name> (<n> of <m>)". */
const downloadName = (record) => (record.name.toLowerCase().endsWith(record.extension.toLowerCase()) ? record.name : `${record.name}${record.extension}`)

async function download(record) {
  const response = await api('GET', `/files/${record._id}/download`, { raw: true })
  const url = URL.createObjectURL(await response.blob())
  const link = document.createElement('a')
  link.href = url
  link.download = downloadName(record)
  link.click()
  setTimeout(() => URL.revokeObjectURL(url), 10_000)
}

async function remove(record, item) {
  if (!confirm(`Delete ${record.name} and the files converted from it?`)) return
  try {
    await api('DELETE', `/files/${record._id}`)
    item.remove()
    $('#files-empty').hidden = $('#files').children.length > 0
  } catch (error) {
    say($('#upload-message'), error.message, true)
  }
}

// --- conversion ----------------------------------------------------------------------------------------

/** Runs the default chain, or with `request.to` the chain to that target (".txt": the text view below). */
async function convert(record, item, request) {
  const jobBox = $('.job', item)
  const progress = $('.job-progress', item)
  const button = $(request?.to ? '[data-action="text"]' : '[data-action="convert"]', item)
  jobBox.hidden = false
  button.disabled = true
  $('.outputs', item).replaceChildren()
  // data-events counts the job events streamed for this conversion; data-followed-by says how its end was
  // learnt: "events" (the stream) or "polling" (the fallback).
  progress.dataset.events = '0'
  progress.dataset.followedBy = ''
  showJob(item, { status: 'queued' })
  try {
    const { body, response } = await api('POST', `/files/${record._id}/convert`, { headers: { prefer: 'respond-async' }, json: request })
    if (Array.isArray(body)) {
      showJob(item, { status: 'done', files: body })
      await showOutputs(item, body)
      return
    }
    const jobPath = response.headers.get('location') ?? `/jobs/${body._id ?? body.id}`
    const job = await watchJob(jobPath, {
      onState: (state) => showJob(item, state),
      onEvent: (count) => (progress.dataset.events = String(count)),
      onEnd: (how) => (progress.dataset.followedBy = how),
    })
    if (job.status === 'failed') return
    await showOutputs(item, job.files ?? (await api('GET', `/files/${record._id}`)).body.files ?? [])
  } catch (error) {
    showJob(item, { status: 'failed', error: error.message })
  } finally {
    button.disabled = false
  }
}

/**
 * Follows the job live through GET /jobs/:id/events (Server-Sent Events read with fetch, since an EventSource
 * cannot send the bearer header); if the stream breaks before the end, polls GET /jobs/:id instead.
 */
async function watchJob(jobPath, { onState, onEvent, onEnd }) {
  let last
  try {
    last = await streamJobEvents(`${jobPath}/events`, onState, onEvent)
  } catch {}
  if (isFinished(last)) {
    onEnd('events')
    return last
  }
  while (!isFinished(last)) {
    if (last) await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS))
    last = (await api('GET', jobPath)).body
    onState(last)
  }
  onEnd('polling')
  return last
}

const isFinished = (job) => job?.status === 'done' || job?.status === 'failed'

async function streamJobEvents(path, onState, onEvent) {
  const response = await api('GET', path, { headers: { accept: 'text/event-stream' }, raw: true })
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader()
  let buffer = ''
  let last
  let events = 0
  for (;;) {
    const { value, done } = await reader.read()
    if (done) return last
    buffer += value.replaceAll('\r\n', '\n')
    let end
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const event = buffer.slice(0, end)
      buffer = buffer.slice(end + 2)
      const data = event
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trimStart())
        .join('\n')
      if (!data) continue
      last = JSON.parse(data)
      onEvent(++events)
      onState(last)
      if (isFinished(last)) {
        reader.cancel().catch(() => {})
        return last
      }
    }
  }
}

function showJob(item, job) {
  const status = $('.job-status', item)
  status.textContent = job.status === 'failed' ? `failed: ${job.error ?? job.message ?? 'unknown error'}` : job.status
  status.className = `job-status ${job.status}`
  const steps = Array.isArray(job.steps) ? job.steps : []
  const progress = $('.job-progress', item)
  const finished = steps.filter((step) => step.status === 'done' || step.status === 'split').length
  progress.value = job.status === 'done' ? 1 : steps.length > 0 ? finished / steps.length : 0
  $('.job-steps', item).replaceChildren(
    ...steps.map((step) => {
      const li = document.createElement('li')
      const what = step.converter ?? step.name ?? `${step.from ?? ''} → ${step.to ?? ''}`
      li.textContent = `${what}: ${step.status}${step.error ? ` (${step.error})` : ''}`
      li.className = step.status
      return li
    }),
  )
}

async function showOutputs(item, files) {
  const outputs = $('.outputs', item)
  outputs.replaceChildren(...files.map(outputItem))
  let thumbnails = 0
  for (const file of files) {
    const figure = outputs.querySelector(`[data-id="${CSS.escape(file._id)}"]`)
    if (file.extension === '.png' && thumbnails++ < THUMBNAIL_LIMIT) {
      figure.prepend(await thumbnail(file, file.name))
    } else if (file.extension === '.pdf' && thumbnails++ < THUMBNAIL_LIMIT) {
      const cover = await firstPage(file, files)
      if (cover) figure.prepend(await thumbnail(cover, `${file.name}, page 1`))
    } else if (file.extension === '.txt') {
      const response = await api('GET', `/files/${file._id}/download`, { raw: true })
      const transcript = document.createElement('pre')
      transcript.className = 'transcript text-view'
      transcript.textContent = await response.text()
      figure.prepend(transcript)
    }
  }
}

/** An <img> of a PNG file; data-source names the file it shows. */
async function thumbnail(png, alt) {
  if (!objectUrls.has(png._id)) {
    objectUrls.set(
      png._id,
      api('GET', `/files/${png._id}/download`, { raw: true })
        .then(async (response) => URL.createObjectURL(await response.blob()))
        .catch((error) => {
          objectUrls.delete(png._id)
          throw error
        }),
    )
  }
  const image = document.createElement('img')
  image.className = 'thumbnail'
  image.alt = alt
  image.dataset.source = png._id
  image.src = await objectUrls.get(png._id)
  return image
}

/** The PNG of a PDF's first page: among the files at hand, or else among the PDF's own children. */
async function firstPage(pdf, files) {
  const isPageOf = (file) => file.parent_file === pdf._id && file.extension === '.png'
  let pages = files.filter(isPageOf)
  if (pages.length === 0) pages = (await api('GET', `/files/${pdf._id}/files`)).body.filter(isPageOf)
  return pages.sort((a, b) => (a.part_index ?? 0) - (b.part_index ?? 0))[0]
}

function outputItem(file) {
  const figure = document.createElement('figure')
  figure.className = 'output'
  figure.dataset.id = file._id
  figure.dataset.extension = file.extension
  const caption = document.createElement('figcaption')
  const link = document.createElement('button')
  link.type = 'button'
  link.className = 'link'
  link.textContent = downloadName(file)
  link.title = `Download ${downloadName(file)}`
  link.addEventListener('click', () => download(file))
  caption.append(link, ` ${formatBytes(file.size)}`)
  figure.append(caption)
  return figure
}

showSession()
