// The files screen: upload through Uppy's Dashboard (tus, resumable; Uppy is bundled into /static/uppy.js at build
// time by .ci/build-console.ts), each upload with its preview (GET /files/:id/preview) and its whole conversion
// tree (GET /files/:id/tree: every file made from it at any depth, e.g. DOCX → PDF → PNG pages, and its jobs with
// their steps and errors), convert (or extract the text) and watch the job live, PNG outputs (and a PDF's first page)
// as thumbnails and .txt outputs as text, download, delete. What the tree shows is the API's answer, never the
// page's memory, so a reload shows the same.

import { $, api, element, formatBytes, formatTime, say, token, turns } from './console-api.js'
import { Dashboard, Tus, Uppy } from './uppy.js'

const POLL_INTERVAL_MS = 400
const THUMBNAIL_LIMIT = 24
/** Uploads whose trees are read when the list loads; the others load theirs when opened. */
const TREES_ON_LOAD = 24

/** PNG file id → object URL of its bytes, so a page shown twice (itself, and as its PDF's cover) loads once. */
const objectUrls = new Map()

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
    const item = fileItem(record)
    $('#files').prepend(item)
    $('#files-empty').hidden = true
    // A deployment that converts uploads by itself (autoConvert) has a job to show already.
    await showTree(record, item)
  } catch (error) {
    say($('#upload-message'), error.message, true)
  }
})

/** Set by console.js: what a 401 during an upload does (sign out). */
let signOutOnUnauthorized = () => {}
export const whenUploadUnauthorized = (callback) => (signOutOnUnauthorized = callback)

uppy.on('upload-error', (file, error, response) => {
  const status = response?.status
  if (status === 401 && token()) return signOutOnUnauthorized()
  let message = error?.message ?? 'upload failed'
  try {
    message = JSON.parse(response.body.xhr.responseText).message ?? message
  } catch {}
  say($('#upload-message'), `${file?.name ?? 'upload'}: ${message}`, true)
})

/** Ends every upload of this session and forgets their URLs and thumbnails, so nothing of them outlives a sign-out. */
export function discardFiles() {
  uppy.cancelAll()
  for (const key of Object.keys(localStorage)) if (key.startsWith('tus::')) localStorage.removeItem(key)
  for (const url of objectUrls.values()) url.then((value) => URL.revokeObjectURL(value), () => {})
  objectUrls.clear()
  $('#files').replaceChildren()
}

// --- files ---------------------------------------------------------------------------------------------

const filesTurn = turns()

export async function loadFiles() {
  const isCurrent = filesTurn()
  const { body: files } = await api('GET', '/files?root=true')
  if (!isCurrent()) return
  const roots = files.filter((file) => !file.parent_file)
  const items = roots.map(fileItem)
  $('#files').replaceChildren(...items)
  $('#files-empty').hidden = roots.length > 0
  for (const [index, record] of roots.slice(0, TREES_ON_LOAD).entries()) await showTree(record, items[index])
  for (const [index, record] of roots.entries()) if (index >= TREES_ON_LOAD) showTreeButton(record, items[index])
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

function showTreeButton(record, item) {
  const open = element('button', { type: 'button', className: 'link', text: 'Show its conversions' })
  open.addEventListener('click', () => {
    open.remove()
    showTree(record, item)
  })
  $('.outputs', item).replaceChildren(open)
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
    const image = element('img', { className: 'thumbnail preview', alt: `preview of ${record.name}` })
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
  const link = element('a', { href: url, download: downloadName(record) })
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
  // data-events counts the job events streamed for this conversion; data-followed-by says how its end was
  // learnt: "events" (the stream) or "polling" (the fallback).
  progress.dataset.events = '0'
  progress.dataset.followedBy = ''
  showJob(item, { status: 'queued' })
  try {
    const { body, response } = await api('POST', `/files/${record._id}/convert`, { headers: { prefer: 'respond-async' }, json: request })
    if (Array.isArray(body)) {
      showJob(item, { status: 'done', files: body })
    } else {
      const jobPath = response.headers.get('location') ?? `/jobs/${body._id ?? body.id}`
      await watchJob(jobPath, {
        onState: (state) => showJob(item, state),
        onEvent: (count) => (progress.dataset.events = String(count)),
        onEnd: (how) => (progress.dataset.followedBy = how),
      })
    }
  } catch (error) {
    showJob(item, { status: 'failed', error: error.message })
  } finally {
    button.disabled = false
  }
  // The tree as the API now has it: the new outputs in their place, and the job among the file's jobs.
  await showTree(record, item).catch((error) => say($('#upload-message'), error.message, true))
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

/** The live box of the conversion just started: status, progress bar, steps. */
function showJob(item, job) {
  const status = $('.job-status', item)
  status.textContent = job.status === 'failed' ? `failed: ${job.error ?? job.message ?? 'unknown error'}` : job.status
  status.className = `job-status ${job.status}`
  const steps = Array.isArray(job.steps) ? job.steps : []
  const progress = $('.job-progress', item)
  const finished = steps.filter((step) => step.status === 'done' || step.status === 'split').length
  progress.value = job.status === 'done' ? 1 : steps.length > 0 ? finished / steps.length : 0
  $('.job-steps', item).replaceChildren(...steps.map(stepItem))
}

function stepItem(step) {
  const what = step.converter ?? step.name ?? `${step.from ?? ''} → ${step.to ?? ''}`
  const part = step.part ? ` (part ${step.part.start + 1}–${step.part.end})` : ''
  return element('li', { className: step.status, text: `${what}${part}: ${step.status}${step.error ? ` (${step.error})` : ''}` })
}

// --- the conversion tree -------------------------------------------------------------------------------

/** Reads the upload's whole tree and its jobs from the API and shows them in its list item. */
export async function showTree(record, item) {
  // Per item, the latest read wins: the list's first read may answer after a conversion's.
  const turn = (item.treeTurn = (item.treeTurn ?? 0) + 1)
  const { body: tree } = await api('GET', `/files/${record._id}/tree`)
  if (item.treeTurn !== turn) return
  const byParent = new Map()
  for (const file of tree.files.slice(1)) {
    if (!byParent.has(file.parent_file)) byParent.set(file.parent_file, [])
    byParent.get(file.parent_file).push(file)
  }
  const outputs = $('.outputs', item)
  const levels = branch(record._id, byParent, 1)
  outputs.replaceChildren(...(levels ? [levels] : []))
  outputs.dataset.files = String(tree.files.length - 1)
  if (tree.truncated) outputs.append(element('p', { className: 'muted', text: `Only the first ${tree.files.length} files of this tree are shown.` }))
  showJobs(item, tree.jobs)
  await showThumbnails(outputs, tree.files, byParent)
}

/** The outputs made from `parentId`, each with the outputs made from it, as nested lists. */
function branch(parentId, byParent, depth) {
  const children = byParent.get(parentId)
  if (!children) return undefined
  const list = element('ul', { className: 'tree', data: { depth: String(depth) } })
  for (const file of children) {
    const node = element('li', {}, outputItem(file))
    const below = branch(file._id, byParent, depth + 1)
    if (below) node.append(below)
    list.append(node)
  }
  return list
}

function outputItem(file) {
  const figure = element('figure', { className: 'output', data: { id: file._id, extension: file.extension } })
  const link = element('button', { type: 'button', className: 'link', text: downloadName(file), title: `Download ${downloadName(file)}` })
  link.addEventListener('click', () => download(file))
  figure.append(element('figcaption', {}, link, ` ${formatBytes(file.size)}`))
  return figure
}

async function showThumbnails(outputs, files, byParent) {
  let thumbnails = 0
  for (const file of files.slice(1)) {
    const figure = outputs.querySelector(`figure[data-id="${CSS.escape(file._id)}"]`)
    if (file.extension === '.png' && thumbnails++ < THUMBNAIL_LIMIT) {
      figure.prepend(await thumbnail(file, file.name))
    } else if (file.extension === '.pdf' && thumbnails++ < THUMBNAIL_LIMIT) {
      const cover = firstPage(file, byParent)
      if (cover) figure.prepend(await thumbnail(cover, `${file.name}, page 1`))
    } else if (file.extension === '.txt') {
      const response = await api('GET', `/files/${file._id}/download`, { raw: true })
      figure.prepend(element('pre', { className: 'transcript text-view', text: await response.text() }))
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
  const image = element('img', { className: 'thumbnail', alt, data: { source: png._id } })
  image.src = await objectUrls.get(png._id)
  return image
}

/** The PNG of a PDF's first page, among the PDF's own outputs in the tree. */
function firstPage(pdf, byParent) {
  const pages = (byParent.get(pdf._id) ?? []).filter((file) => file.extension === '.png')
  return pages.sort((a, b) => (a.part_index ?? 0) - (b.part_index ?? 0))[0]
}

/** The jobs of the tree's files, newest first: state, target, steps, and a failure's code and message. */
function showJobs(item, jobs) {
  const box = $('.jobs', item)
  box.hidden = jobs.length === 0
  $('.jobs-count', item).textContent = `${jobs.length} ${jobs.length === 1 ? 'job' : 'jobs'}`
  $('.jobs-list', item).replaceChildren(
    ...jobs.map((job) => {
      const failure = job.status === 'failed' ? `: ${job.error_code ?? 'FAILED'} · ${job.error ?? 'unknown error'}` : ''
      const target = job.to ? ` to ${job.to}` : ''
      const head = element('span', { className: `job-state ${job.status}`, text: `${job.status}${failure}` })
      const when = element('span', { className: 'muted', text: ` · ${formatTime(job.created_at)}${target} · ${job.steps.length} ${job.steps.length === 1 ? 'step' : 'steps'}` })
      return element('li', { className: 'job-entry', data: { id: job._id, status: job.status } }, head, when, element('ol', { className: 'job-steps' }, ...job.steps.map(stepItem)))
    }),
  )
}
