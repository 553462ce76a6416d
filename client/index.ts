// A small typed client for Edgefloor. `api` is `hono/client` typed from the Worker's own routes (`App`); the
// methods cover what raw fetch makes awkward: sign-in that keeps the token, multipart upload with the
// X-Edgefloor-* headers, converting and following a job to its end, downloading, previews (asked again while drawn). Runs in browsers, Node ≥ 22 and
// Workers (erasable TypeScript only: Node runs it by stripping types).
import { hc } from 'hono/client'
import type { App } from '../worker/app'
import type { FileResponse } from '../worker/files/records'
import type { JobView } from '../worker/pipeline/jobs'

/** A file record as the API returns it: the Worker's own response schema (worker/files/records.ts). */
export type FileRecord = FileResponse & { files?: FileRecord[] }

/**
 * The name to save a file under: converted files are named "<name> (<n> of <m>)" (the uploaded file's name, no
 * extension; the extension is in `extension`), so this adds the extension when the name lacks it, as the
 * download's Content-Disposition does.
 */
export function downloadName(file: Pick<FileRecord, 'name' | 'extension'>): string {
  return file.name.toLowerCase().endsWith(file.extension.toLowerCase()) ? file.name : `${file.name}${file.extension}`
}

/** A conversion job (`GET /jobs/:id`): status, steps, the files created so far (worker/pipeline/jobs.ts). */
export type Job = JobView
export type JobStatus = Job['status']

export interface UploadOptions {
  /** Original file name (X-Edgefloor-Name); the extension is taken from it. */
  name: string
  /** MIME type (X-Edgefloor-Type); the server corrects it from the bytes when it lies. */
  type?: string
  /** Last modification (X-Edgefloor-Modified), a Date or epoch milliseconds. */
  modified?: Date | number
  /** Storage-path prefix (X-Edgefloor-Prefix), e.g. `invoices/2026`. */
  prefix?: string
}

/** A preview's parameters (GET /files/:id/preview): sides 64, 128, 256, 512, 1024 or 2048. */
export interface PreviewOptions {
  w?: number
  h?: number
  fit?: 'contain' | 'cover'
  format?: 'webp' | 'png' | 'avif'
  /** PDF and Office documents: the page, 1 = first. */
  page?: number
}

export interface FollowOptions {
  /** Give up after this long (the job keeps running on the server). */
  deadlineMs?: number
  intervalMs?: number
  /** Called with every state read while following. */
  onProgress?: (job: Job) => void
  signal?: AbortSignal
}

/** A non-2xx answer: the API's `{ message }` with its status. */
export class EdgefloorError extends Error {
  override readonly name = 'EdgefloorError'
  readonly status: number
  readonly body: unknown

  constructor(status: number, body: unknown) {
    const message = typeof body === 'object' && body && 'message' in body ? String(body.message) : `HTTP ${status}`
    super(message)
    this.status = status
    this.body = body
  }
}

export interface ClientOptions {
  token?: string
  /** Defaults to the global fetch; pass a Worker binding's fetch or a test double at an HTTP boundary. */
  fetch?: typeof fetch
}

export class EdgefloorClient {
  readonly baseUrl: string
  /**
   * `hono/client` over the app's route types: every account, file, job and conversion route, typed from its zod
   * schemas (e.g. `api.files[':id'].$get({ param: { id } })`). Not in the type: the resource routes generated
   * from runtime configuration (/users, /users/posts) and the Layout B aliases; call those with fetch.
   */
  readonly api: ReturnType<typeof hc<App>>
  token: string | undefined
  /**
   * The newest D1 bookmark the API answered (X-D1-Bookmark), sent with every call: a read then sees what this client
   * wrote, though it is answered from a replica. Bookmarks sort oldest to newest as text.
   */
  bookmark: string | undefined
  readonly #fetch: typeof fetch

  constructor(baseUrl: string, options: ClientOptions = {}) {
    this.baseUrl = baseUrl.replace(/\/+$/, '')
    this.token = options.token
    const send = options.fetch ?? ((input, init) => fetch(input, init))
    this.#fetch = async (input, init) => {
      const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined))
      if (this.bookmark && !headers.has('x-d1-bookmark')) headers.set('x-d1-bookmark', this.bookmark)
      const response = await send(input, { ...init, headers })
      const answered = response.headers.get('x-d1-bookmark')
      if (answered && (!this.bookmark || answered > this.bookmark)) this.bookmark = answered
      return response
    }
    this.api = hc<App>(this.baseUrl, {
      fetch: this.#fetch,
      headers: (): Record<string, string> => (this.token ? { authorization: `Bearer ${this.token}` } : {}),
    })
  }

  async register(account: { email: string; password: string; name?: string }) {
    return this.#json<{ user: { _id: string; email: string } }>('POST', '/auth/register', { json: account })
  }

  /** Logs in and keeps the access token for the next calls. */
  async login(credentials: { email: string; password: string }) {
    const session = await this.#json<{ token: string; refresh_token: string; user: { _id: string; email: string; name: string; role: string } }>('POST', '/auth/login', { json: credentials })
    this.token = session.token
    return session
  }

  async currentUser() {
    return this.#json<{ _id: string; email: string; name: string; role: string; email_verified: boolean }>('GET', '/auth/user')
  }

  /** POST /files: the bytes in the multipart field `file`, the metadata in X-Edgefloor-* headers. */
  async upload(content: Blob | ArrayBuffer | Uint8Array, options: UploadOptions): Promise<FileRecord> {
    const blob = content instanceof Blob ? content : new Blob([content], { type: options.type ?? 'application/octet-stream' })
    const form = new FormData()
    form.append('file', blob, options.name)
    const headers: Record<string, string> = {
      'x-edgefloor-name': encodeURIComponent(options.name),
      'x-edgefloor-size': String(blob.size),
      'x-edgefloor-type': options.type ?? (blob.type || 'application/octet-stream'),
    }
    if (options.modified !== undefined) headers['x-edgefloor-modified'] = String(options.modified instanceof Date ? options.modified.getTime() : options.modified)
    if (options.prefix) headers['x-edgefloor-prefix'] = options.prefix
    return this.#json<FileRecord>('POST', '/files', { body: form, headers })
  }

  async file(id: string): Promise<FileRecord> {
    return this.#json<FileRecord>('GET', `/files/${encodeURIComponent(id)}`)
  }

  async files(query: Record<string, string> = {}): Promise<FileRecord[]> {
    const search = new URLSearchParams(query).toString()
    return this.#json<FileRecord[]>('GET', `/files${search ? `?${search}` : ''}`)
  }

  async deleteFile(id: string): Promise<{ deleted: string[] }> {
    return this.#json<{ deleted: string[] }>('DELETE', `/files/${encodeURIComponent(id)}`)
  }

  /** Starts a conversion without waiting (`Prefer: respond-async`) and returns the job. */
  async startConversion(fileId: string): Promise<Job> {
    const response = await this.#request('POST', `/files/${encodeURIComponent(fileId)}/convert`, { headers: { prefer: 'respond-async' } })
    const body = await readBody(response)
    if (!response.ok) throw new EdgefloorError(response.status, body)
    if (!Array.isArray(body)) return body as Job
    // The server finished within the request and answered the records (the spec's contract): read the job.
    const location = response.headers.get('location')
    if (location) return this.#json<Job>('GET', new URL(location, this.baseUrl).pathname)
    throw new Error('the convert answer has neither a job nor a Location')
  }

  /** Polls GET /jobs/:id until it is done (returns it) or failed (throws its message). */
  async followJob(jobId: string, options: FollowOptions = {}): Promise<Job> {
    const deadline = Date.now() + (options.deadlineMs ?? 120_000)
    for (;;) {
      const job = await this.#json<Job>('GET', `/jobs/${encodeURIComponent(jobId)}`)
      options.onProgress?.(job)
      if (job.status === 'done') return job
      if (job.status === 'failed') throw new EdgefloorError(422, { message: job.error ?? 'conversion failed', job })
      if (Date.now() > deadline) throw new Error(`job ${jobId} still ${job.status} after ${options.deadlineMs ?? 120_000} ms`)
      if (options.signal?.aborted) throw options.signal.reason
      await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 500))
    }
  }

  /** Converts a file through its whole chain and answers every created record, in chain order. */
  async convert(fileId: string, options: FollowOptions = {}): Promise<FileRecord[]> {
    const started = await this.startConversion(fileId)
    const job = started.status === 'done' ? started : await this.followJob(started._id, options)
    return job.files ?? []
  }

  /** GET /files/:id/download as a streaming Response (`range` like `bytes=0-1023`). */
  async download(fileId: string, options: { range?: string; attachment?: boolean } = {}): Promise<Response> {
    const headers: Record<string, string> = options.range ? { range: options.range } : {}
    const response = await this.#request('GET', `/files/${encodeURIComponent(fileId)}/download${options.attachment ? '?download=1' : ''}`, { headers })
    if (!response.ok) throw new EdgefloorError(response.status, await readBody(response))
    return response
  }

  async downloadBytes(fileId: string): Promise<Uint8Array> {
    return new Uint8Array(await (await this.download(fileId)).arrayBuffer())
  }

  /**
   * GET /files/:id/preview as a Response (the image: WebP unless `format` says otherwise). A new preview is drawn
   * by the consumer Worker: while the server answers 202 (still drawing, or an Office document's PDF being made)
   * this asks again after its Retry-After, until `deadlineMs` (the drawing goes on on the server).
   */
  async preview(fileId: string, params: PreviewOptions = {}, options: Pick<FollowOptions, 'deadlineMs' | 'signal'> = {}): Promise<Response> {
    const query = new URLSearchParams(Object.entries(params).map(([name, value]) => [name, String(value)]))
    const path = `/files/${encodeURIComponent(fileId)}/preview${query.size > 0 ? `?${query}` : ''}`
    const deadline = Date.now() + (options.deadlineMs ?? 120_000)
    for (;;) {
      const response = await this.#request('GET', path)
      if (response.status !== 202) {
        if (!response.ok) throw new EdgefloorError(response.status, await readBody(response))
        return response
      }
      await response.body?.cancel()
      if (Date.now() > deadline) throw new Error(`the preview of ${fileId} was still being made after ${options.deadlineMs ?? 120_000} ms`)
      if (options.signal?.aborted) throw options.signal.reason
      const seconds = Number(response.headers.get('retry-after') ?? 3)
      await new Promise((resolve) => setTimeout(resolve, Math.min(Math.max(0, deadline - Date.now()), (Number.isFinite(seconds) ? seconds : 3) * 1000)))
    }
  }

  async #request(method: string, path: string, init: { json?: unknown; body?: BodyInit; headers?: Record<string, string> } = {}): Promise<Response> {
    const headers = new Headers(init.headers)
    if (this.token) headers.set('authorization', `Bearer ${this.token}`)
    let body = init.body
    if (init.json !== undefined) {
      headers.set('content-type', 'application/json')
      body = JSON.stringify(init.json)
    }
    return this.#fetch(`${this.baseUrl}${path}`, { method, headers, body })
  }

  async #json<T>(method: string, path: string, init: { json?: unknown; body?: BodyInit; headers?: Record<string, string> } = {}): Promise<T> {
    const response = await this.#request(method, path, init)
    const body = await readBody(response)
    if (!response.ok) throw new EdgefloorError(response.status, body)
    return body as T
  }
}

async function readBody(response: Response): Promise<unknown> {
  const text = await response.text()
  if (!text) return undefined
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}
