// @edgefloor/client: a typed client for Edgefloor's API. Sign-in keeps its tokens in a store and refreshes the
// access token when it expires; uploads go in one request, or resumably over tus when large; conversions are
// followed to their end through the job's events; previews are asked again while they are drawn; every failed
// answer is an EdgefloorError with the API's code. Runs in browsers, Node ≥ 20, Deno, Bun and Workers: it uses only
// fetch, Blob and streams, and has no dependencies.
import { EdgefloorError, type ErrorCode } from './errors.ts'
import { readEvents } from './events.ts'
import { memoryTokenStore, type TokenStore, type Tokens } from './tokens.ts'
import { uploadWithTus, type Http, type ResumableOptions } from './tus.ts'
import type {
  AccountChanges,
  AccountUpdate,
  ConversionTargets,
  FileRecord,
  FileWithChildren,
  Job,
  LoginResult,
  RegisterResult,
  Session,
  SessionInfo,
  User,
} from './types.ts'

export {
  ERROR_CODES,
  EdgefloorError,
  isEdgefloorError,
  type ErrorCode,
  type ErrorDetails,
  type ValidationIssue,
} from './errors.ts'
export { memoryTokenStore, webStorageTokenStore, type KeyValueStorage, type TokenStore, type Tokens } from './tokens.ts'
export type { ResumableOptions } from './tus.ts'
export type * from './types.ts'

/**
 * The name to save a file under: converted files are named "<name> (<n> of <m>)" (the uploaded file's name, no
 * extension; the extension is in `extension`), so this adds the extension when the name lacks it, as the
 * download's Content-Disposition does.
 */
export function downloadName(file: Pick<FileRecord, 'name' | 'extension'>): string {
  return file.name.toLowerCase().endsWith(file.extension.toLowerCase()) ? file.name : `${file.name}${file.extension}`
}

export interface ClientOptions {
  /**
   * Where the tokens live; memory by default. `webStorageTokenStore(sessionStorage)` keeps a tab's session across
   * reloads.
   */
  tokenStore?: TokenStore
  /** An access token to start with (kept in the store). */
  token?: string
  /** Defaults to the global fetch; pass a Worker binding's fetch or a test double. */
  fetch?: typeof fetch
  /** Called when the session ended on the server (a refresh was refused): the store has been emptied. */
  onSignedOut?: () => void
}

export interface UploadOptions {
  /** Original file name (X-Edgefloor-Name); the extension is taken from it. */
  name: string
  /** MIME type (X-Edgefloor-Type): a hint, the server reads the type from the bytes. */
  type?: string
  /** Last modification (X-Edgefloor-Modified), a Date or epoch milliseconds. */
  modified?: Date | number
  /** Storage-path prefix (X-Edgefloor-Prefix), e.g. `invoices/@user._id`. */
  prefix?: string
  /** Upload resumably over tus: `true`, or when the content has at least this many bytes. Default: 50 MiB. */
  resumableFromBytes?: number | boolean
  /** Called as bytes reach the server (after each chunk when resumable; at the end otherwise). */
  onProgress?: (sentBytes: number, totalBytes: number) => void
  /** Options of a resumable upload (chunk size, resuming an earlier upload URL). */
  resumable?: Omit<ResumableOptions, 'onProgress' | 'signal'>
  signal?: AbortSignal
}

/** A preview's parameters (GET /files/:id/preview): sides 64, 128, 256, 512, 1024 or 2048. */
export interface PreviewOptions {
  w?: 64 | 128 | 256 | 512 | 1024 | 2048
  h?: 64 | 128 | 256 | 512 | 1024 | 2048
  fit?: 'contain' | 'cover'
  format?: 'webp' | 'png' | 'avif'
  /** PDF and Office documents: the page, 1 = first. */
  page?: number
}

export interface FollowOptions {
  /** Give up after this long (the job keeps running on the server). Default 10 minutes. */
  deadlineMs?: number
  /** Polling interval when the event stream is not available. Default 1 s. */
  intervalMs?: number
  /** Called with the job each time it changes. */
  onProgress?: (job: Job) => void
  signal?: AbortSignal
}

export interface ConvertOptions extends FollowOptions {
  /** The extension the chain should end at (one of `conversionTargets(ext).targets`); default: the default chain. */
  to?: string
  /** Converter options, e.g. Gotenberg's `landscape` or a PDF's `password`. */
  options?: Record<string, string | number | boolean>
  /** An https URL called when the job finishes (signed with the job's webhook_secret). */
  callbackUrl?: string
}

type Body = string | Blob | Uint8Array | FormData
/** A call of `request()`: a JSON body (sent as application/json) or a raw one, extra headers, an abort signal. */
export interface CallOptions {
  json?: unknown
  body?: Body
  headers?: Record<string, string>
  signal?: AbortSignal
}

const DEFAULT_RESUMABLE_FROM_BYTES = 50 * 1024 * 1024
/** An access token this close to its expiry is refreshed before it is sent. */
const REFRESH_EARLY_MS = 30_000
const TERMINAL: ReadonlySet<Job['status']> = new Set(['done', 'failed'])

export class EdgefloorClient {
  readonly baseUrl: string
  readonly tokens: TokenStore
  /**
   * The newest D1 bookmark the API answered (X-D1-Bookmark), sent with every call: a read then sees what this client
   * wrote, though it is answered from a replica. Bookmarks sort oldest to newest as text.
   */
  bookmark: string | undefined
  readonly #fetch: typeof fetch
  readonly #onSignedOut: (() => void) | undefined
  #refreshing: Promise<Tokens | undefined> | undefined

  constructor(baseUrl: string, options: ClientOptions = {}) {
    this.baseUrl = baseUrl.replace(/\/+$/, '')
    this.tokens = options.tokenStore ?? memoryTokenStore()
    if (options.token) this.tokens.set({ token: options.token })
    const send = options.fetch ?? ((input, init) => fetch(input, init))
    this.#fetch = async (input, init) => {
      const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined))
      if (this.bookmark && !headers.has('x-d1-bookmark')) headers.set('x-d1-bookmark', this.bookmark)
      const response = await send(input, { ...init, headers })
      const answered = response.headers.get('x-d1-bookmark')
      if (answered && (!this.bookmark || answered > this.bookmark)) this.bookmark = answered
      return response
    }
    this.#onSignedOut = options.onSignedOut
  }

  /** The current access token, if signed in. */
  get token(): string | undefined {
    return this.tokens.get()?.token
  }

  get isSignedIn(): boolean {
    return this.tokens.get() !== undefined
  }

  // Accounts

  async register(account: {
    email: string
    password: string
    name?: string
    [field: string]: unknown
  }): Promise<RegisterResult> {
    return this.#json('POST', '/auth/register', { json: account })
  }

  /** Signs in and keeps the session's tokens in the store. */
  async login(credentials: { email: string; password: string }): Promise<LoginResult> {
    const session = await this.#json<LoginResult>('POST', '/auth/login', { json: credentials })
    this.#keep(session)
    return session
  }

  /** Exchanges the refresh token for new tokens at once (the client also does it by itself when a token expires). */
  async refresh(): Promise<Session> {
    const refreshToken = this.tokens.get()?.refresh_token
    if (!refreshToken)
      throw new EdgefloorError(401, { message: 'no refresh token: sign in first', code: 'INVALID_REFRESH_TOKEN' })
    const response = await this.#fetch(`${this.baseUrl}/auth/refresh`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ refresh_token: refreshToken }),
    })
    if (!response.ok) {
      const error = await this.#errorOf(response)
      if (response.status === 401) this.#signedOut()
      throw error
    }
    const session = (await response.json()) as Session
    this.#keep(session)
    return session
  }

  /** Ends this session on the server (or every session with `all`) and empties the store. */
  async logout(options: { all?: boolean } = {}): Promise<void> {
    try {
      if (this.isSignedIn) await this.#json('POST', '/auth/logout', { json: options.all ? { all: true } : {} })
    } finally {
      this.tokens.set(undefined)
    }
  }

  async currentUser(): Promise<User> {
    return this.#json('GET', '/auth/user')
  }

  async sessions(): Promise<SessionInfo[]> {
    return this.#json('GET', '/auth/sessions')
  }

  /**
   * Changes the signed-in user's own fields (PUT /auth/user). An email or password change needs `current_password`
   * (an account without a password: a sign-in in the last 5 minutes). A new password ends every session: the
   * answer's new session for this device is kept in the store.
   */
  async updateAccount(changes: AccountChanges): Promise<AccountUpdate> {
    const update = await this.#json<AccountUpdate>('PUT', '/auth/user', { json: changes })
    if (update.session) this.#keep(update.session)
    return update
  }

  /**
   * Deletes the signed-in user's account with everything it owns (DELETE /auth/user), confirmed by the password
   * (an account without one: a sign-in in the last 5 minutes, and no password given); then empties the store.
   */
  async deleteAccount(confirmation: { current_password?: string } = {}): Promise<void> {
    await this.#json('DELETE', '/auth/user', { json: confirmation })
    this.tokens.set(undefined)
  }

  // Files

  /**
   * Uploads a file: in one request (the raw body, the fastest path), or resumably over tus when it is large or
   * `resumableFromBytes` says so, in chunks that each resume from the server's offset after a failure.
   */
  async upload(content: Blob | ArrayBuffer | Uint8Array | string, options: UploadOptions): Promise<FileRecord> {
    const blob =
      content instanceof Blob
        ? content
        : new Blob([content as ArrayBuffer], { type: options.type ?? 'application/octet-stream' })
    const threshold = options.resumableFromBytes ?? DEFAULT_RESUMABLE_FROM_BYTES
    const resumable = threshold === true || (typeof threshold === 'number' && blob.size >= threshold)
    if (resumable) return this.uploadResumable(blob, options)
    const headers: Record<string, string> = {
      'content-type': 'application/octet-stream',
      'x-edgefloor-name': encodeURIComponent(options.name),
      'x-edgefloor-size': String(blob.size),
      ...(options.type || blob.type ? { 'x-edgefloor-type': options.type ?? blob.type } : {}),
      ...(options.modified !== undefined ? { 'x-edgefloor-modified': String(epochMs(options.modified)) } : {}),
      ...(options.prefix ? { 'x-edgefloor-prefix': options.prefix } : {}),
    }
    const file = await this.#json<FileRecord>('POST', '/files', { body: blob, headers, signal: options.signal })
    options.onProgress?.(blob.size, blob.size)
    return file
  }

  /** Uploads over tus (`/files/tus`); `options.resumable.uploadUrl` resumes an upload an earlier run started. */
  async uploadResumable(content: Blob, options: UploadOptions): Promise<FileRecord> {
    const metadata: Record<string, string> = { filename: options.name }
    if (options.type || content.type) metadata.filetype = options.type ?? content.type
    if (options.prefix) metadata.prefix = options.prefix
    if (options.modified !== undefined) metadata.modified = String(epochMs(options.modified))
    const fileId = await uploadWithTus(
      this.#http,
      `${this.baseUrl}/files/tus`,
      { content, metadata },
      { ...options.resumable, onProgress: options.onProgress, signal: options.signal },
    )
    return this.file(fileId)
  }

  async file(id: string): Promise<FileWithChildren> {
    return this.#json('GET', `/files/${encodeURIComponent(id)}`)
  }

  /** One page of the caller's files, newest first (`limit`, `cursor`, `parent_file`, `extension`, `root`). */
  async files(query: Record<string, string | number | boolean> = {}): Promise<FileRecord[]> {
    const search = new URLSearchParams(Object.entries(query).map(([name, value]) => [name, String(value)])).toString()
    return this.#json('GET', `/files${search ? `?${search}` : ''}`)
  }

  async renameFile(id: string, name: string): Promise<FileRecord> {
    return this.#json('PUT', `/files/${encodeURIComponent(id)}`, { json: { name } })
  }

  /** Deletes the file and everything converted from it; answers every id deleted. */
  async deleteFile(id: string): Promise<{ deleted: string[] }> {
    return this.#json('DELETE', `/files/${encodeURIComponent(id)}`)
  }

  /** GET /files/:id/download as a streaming Response (`range` like `bytes=0-1023`). */
  async download(
    fileId: string,
    options: { range?: string; attachment?: boolean; signal?: AbortSignal } = {},
  ): Promise<Response> {
    const headers: Record<string, string> = options.range ? { range: options.range } : {}
    const response = await this.#send(
      'GET',
      `/files/${encodeURIComponent(fileId)}/download${options.attachment ? '?download=1' : ''}`,
      { headers, signal: options.signal },
    )
    if (!response.ok) throw await this.#errorOf(response)
    return response
  }

  async downloadBytes(fileId: string): Promise<Uint8Array> {
    return new Uint8Array(await (await this.download(fileId)).arrayBuffer())
  }

  /**
   * GET /files/:id/preview as a Response (WebP unless `format` says otherwise). A new preview is drawn by the
   * conversion Worker: while the server answers 202 (still drawing, or an Office document's PDF being made) this
   * asks again after its Retry-After, until `deadlineMs` (the drawing goes on on the server).
   */
  async preview(
    fileId: string,
    params: PreviewOptions = {},
    options: Pick<FollowOptions, 'deadlineMs' | 'signal'> = {},
  ): Promise<Response> {
    const query = new URLSearchParams(Object.entries(params).map(([name, value]) => [name, String(value)])).toString()
    const path = `/files/${encodeURIComponent(fileId)}/preview${query ? `?${query}` : ''}`
    const deadlineMs = options.deadlineMs ?? 120_000
    const deadline = Date.now() + deadlineMs
    for (;;) {
      const response = await this.#send('GET', path, { signal: options.signal })
      if (response.status !== 202) {
        if (!response.ok) throw await this.#errorOf(response)
        return response
      }
      await response.body?.cancel()
      if (Date.now() > deadline) throw new Error(`the preview of ${fileId} was still being made after ${deadlineMs} ms`)
      const seconds = Number(response.headers.get('retry-after') ?? 3)
      await sleep(
        Math.min(Math.max(0, deadline - Date.now()), (Number.isFinite(seconds) ? seconds : 3) * 1000),
        options.signal,
      )
    }
  }

  // Conversion

  /** What a file of this extension becomes (`docx` or `.docx`). */
  async conversionTargets(extension: string): Promise<ConversionTargets> {
    return this.#json('GET', `/convert/${encodeURIComponent(extension.replace(/^\./, ''))}`)
  }

  /** Starts a conversion without waiting (`Prefer: respond-async`) and answers its job. */
  async startConversion(
    fileId: string,
    options: Pick<ConvertOptions, 'to' | 'options' | 'callbackUrl' | 'signal'> = {},
  ): Promise<Job> {
    const body = {
      ...(options.to ? { to: options.to } : {}),
      ...(options.options ? { options: options.options } : {}),
      ...(options.callbackUrl ? { callback_url: options.callbackUrl } : {}),
    }
    const response = await this.#send('POST', `/files/${encodeURIComponent(fileId)}/convert`, {
      headers: { prefer: 'respond-async' },
      ...(Object.keys(body).length > 0 ? { json: body } : {}),
      signal: options.signal,
    })
    if (!response.ok) throw await this.#errorOf(response)
    const answer = (await response.json()) as Job | FileRecord[]
    if (!Array.isArray(answer)) return answer
    // Nothing to convert (a .txt asked for .txt) or done within the request: the records, and the job at Location.
    const location = response.headers.get('location')
    if (location) return this.#json('GET', new URL(location, this.baseUrl).pathname)
    return {
      _id: '',
      file_id: fileId,
      status: 'done',
      error: null,
      error_code: null,
      to: options.to ?? null,
      options: {},
      steps: [],
      files: answer,
      created_at: '',
      updated_at: '',
      finished_at: null,
      events_url: '',
    }
  }

  async job(jobId: string): Promise<Job> {
    return this.#json('GET', `/jobs/${encodeURIComponent(jobId)}`)
  }

  /** A file's conversion jobs, newest first. */
  async jobsOf(fileId: string): Promise<Job[]> {
    return this.#json('GET', `/files/${encodeURIComponent(fileId)}/jobs`)
  }

  /**
   * Follows a job until it is done (answers it) or failed (throws an EdgefloorError with the job's status code and
   * message). Reads the job's Server-Sent Events; polls GET /jobs/:id if the stream cannot be read or breaks.
   */
  async followJob(jobId: string, options: FollowOptions = {}): Promise<Job> {
    const deadlineMs = options.deadlineMs ?? 600_000
    const deadline = Date.now() + deadlineMs
    const timeout = AbortSignal.timeout(deadlineMs)
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout
    let last: Job | undefined
    const seen = (job: Job) => {
      if (last?.updated_at !== job.updated_at || last.status !== job.status) options.onProgress?.(job)
      last = job
      return TERMINAL.has(job.status)
    }
    try {
      const response = await this.#send('GET', `/jobs/${encodeURIComponent(jobId)}/events`, {
        headers: { accept: 'text/event-stream' },
        signal,
      })
      if (!response.ok) throw await this.#errorOf(response)
      if (response.body) {
        for await (const event of readEvents(response.body)) {
          if (event.event === 'job' && seen(JSON.parse(event.data) as Job)) return finished(last!)
        }
      }
    } catch (error) {
      if (error instanceof EdgefloorError || options.signal?.aborted) throw error
      // The stream broke (a proxy cut it, a network change): go on by polling.
    }
    for (;;) {
      if (Date.now() > deadline)
        throw new Error(`job ${jobId} still ${last?.status ?? 'unknown'} after ${deadlineMs} ms`)
      if (seen(await this.job(jobId))) return finished(last!)
      await sleep(options.intervalMs ?? 1000, options.signal)
    }
  }

  /** Converts a file through its whole chain and answers every record it created, in chain order. */
  async convert(fileId: string, options: ConvertOptions = {}): Promise<FileRecord[]> {
    const started = await this.startConversion(fileId, options)
    const job = started.status === 'done' ? started : await this.followJob(started._id, options)
    return job.files
  }

  // Any other route (the resource routes of your rules, …)

  /** An authenticated request to any route of the API: the token is added and refreshed like every call's. */
  async request(method: string, path: string, init: CallOptions = {}): Promise<Response> {
    return this.#send(method, path, init)
  }

  // Plumbing

  readonly #http: Http = {
    send: (method, url, init) => this.#send(method, url, init),
    errorOf: (response) => this.#errorOf(response),
  }

  #keep(session: Session): void {
    this.tokens.set({
      token: session.token,
      refresh_token: session.refresh_token,
      expires_at: Date.now() + session.expires_in * 1000,
    })
  }

  #signedOut(): void {
    this.tokens.set(undefined)
    this.#onSignedOut?.()
  }

  /** One refresh at a time: requests that find the token expired together wait for the same refresh. */
  async #refreshOnce(): Promise<Tokens | undefined> {
    this.#refreshing ??= this.refresh()
      .then(() => this.tokens.get())
      .catch((error: unknown) => {
        if (error instanceof EdgefloorError && error.status === 401) return undefined
        throw error
      })
      .finally(() => {
        this.#refreshing = undefined
      })
    return this.#refreshing
  }

  async #send(method: string, path: string, init: CallOptions = {}): Promise<Response> {
    const url = /^https?:/.test(path) ? path : `${this.baseUrl}${path}`
    let tokens = this.tokens.get()
    if (tokens?.refresh_token && tokens.expires_at !== undefined && tokens.expires_at - Date.now() < REFRESH_EARLY_MS)
      tokens = await this.#refreshOnce()
    const response = await this.#fetch(url, requestInit(method, init, tokens))
    if (response.status !== 401 || !tokens?.refresh_token) return response
    const code = (await this.#errorOf(response.clone())).code
    if (code !== 'TOKEN_INVALID' && code !== 'TOKEN_REVOKED') return response
    // An expired or ended access token: refresh once (unless another request already did) and send again.
    const current = this.tokens.get()
    const renewed = current && current.token !== tokens.token ? current : await this.#refreshOnce()
    if (!renewed) return response
    await response.body?.cancel()
    return this.#fetch(url, requestInit(method, init, renewed))
  }

  async #json<T>(method: string, path: string, init: CallOptions = {}): Promise<T> {
    const response = await this.#send(method, path, init)
    if (!response.ok) throw await this.#errorOf(response)
    const text = await response.text()
    return (text ? JSON.parse(text) : undefined) as T
  }

  async #errorOf(response: Response): Promise<EdgefloorError> {
    const text = await response.text().catch(() => '')
    let body: unknown = text
    try {
      body = text ? JSON.parse(text) : undefined
    } catch {
      // Not the API's JSON (a proxy's page): keep the text.
    }
    return new EdgefloorError(response.status, body, response.headers)
  }
}

function requestInit(method: string, init: CallOptions, tokens: Tokens | undefined): RequestInit {
  const headers = new Headers(init.headers)
  if (tokens) headers.set('authorization', `Bearer ${tokens.token}`)
  let body = init.body
  if (init.json !== undefined) {
    headers.set('content-type', 'application/json')
    body = JSON.stringify(init.json)
  }
  return { method, headers, body: body as BodyInit | undefined, signal: init.signal }
}

/** A failed job becomes the error its conversion answers: the job's message and code, and its id in `job`. */
function finished(job: Job): Job {
  if (job.status === 'done') return job
  throw new EdgefloorError(422, {
    message: job.error ?? 'the conversion failed',
    code: job.error_code ?? ('CONVERSION_FAILED' satisfies ErrorCode),
    job: job._id,
  })
}

const epochMs = (value: Date | number) => (value instanceof Date ? value.getTime() : value)

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const timer = setTimeout(resolve, ms)
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer)
        reject(signal.reason)
      },
      { once: true },
    )
  })
}
