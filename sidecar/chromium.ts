// Gotenberg 8's Chromium module over Debian's headless Chromium: HTML (with its assets), URL and Markdown to PDF
// and to screenshots. Chromium runs in the same bubblewrap sandbox as LibreOffice (its own empty network
// namespace, a cleared environment, /usr and the fonts read-only, a private tmpfs), driven over the DevTools
// protocol on a pipe (--remote-debugging-pipe: no port to reach). Every request a page makes is paused by the
// protocol's Fetch domain and answered by the sidecar: the form's own files at the page's origin, other http(s)
// URLs fetched by the sidecar under the download policy (loopback and private addresses refused unless listed),
// anything else failed. So a page reaches no network and no local file but what its request may fetch.
import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { STATUS_CODES } from 'node:http'
import { rm } from 'node:fs/promises'
import type { Readable, Writable } from 'node:stream'
import { goJsonError } from '../shared/form-rules.ts'
import { parseGoBool } from './gotenberg-form.ts'
import { checkUrl, sendRequest, UrlRefusedError, type UrlPolicy } from './outbound.ts'

export const CHROMIUM_ROUTES = [
  'convert/html',
  'convert/url',
  'convert/markdown',
  'screenshot/html',
  'screenshot/url',
  'screenshot/markdown',
] as const
export type ChromiumRoute = (typeof CHROMIUM_ROUTES)[number]

/** The page or its resources failed as the request asked to be told (Gotenberg's 409s), or the input is refused. */
export class ChromiumPageError extends Error {
  readonly status: number
  constructor(status: number, message: string) {
    super(message)
    this.status = status
  }
}
/** Chromium is not running, or stopped during the page: worth retrying. */
export class ChromiumUnavailableError extends Error {}

/** The origin the form's files are served at: a name that resolves nowhere, answered only by the sidecar. */
export const PAGE_ORIGIN = 'http://gotenberg.local'

export interface ChromiumOptions {
  readonly program: string
  /** bwrap (the default) or none (a machine without user namespaces). */
  readonly sandbox: 'bwrap' | 'none'
  readonly timeoutMs: number
  /** Pages rendered at once; more wait. */
  readonly concurrency: number
  readonly queueSize: number
  /** What the URL route and a page's outside resources may reach. */
  readonly policy: UrlPolicy
  readonly maxResourceBytes: number
  /** Where the warnings about refused resources go (the sidecar's JSON log). */
  readonly log?: (entry: Record<string, unknown>) => void
  /** Without the sandbox, where its profile goes (inside it, a tmpfs that disappears with it). */
  readonly profile: string
}

interface Pending {
  resolve: (value: Record<string, unknown>) => void
  reject: (error: Error) => void
}

/** The DevTools protocol's Network.ErrorReason values the sidecar answers with. */
type FetchErrorReason = 'Failed' | 'TimedOut' | 'AccessDenied' | 'ConnectionRefused' | 'NameNotResolved'

type Listener = (params: Record<string, unknown>, sessionId?: string) => void

/** One Chromium process and its DevTools pipe. */
class DevTools {
  private readonly child: ChildProcess
  private readonly pending = new Map<number, Pending>()
  private readonly listeners = new Set<{ method: string; sessionId?: string; listener: Listener }>()
  private nextId = 0
  private buffer = ''
  exited = false

  constructor(command: readonly string[], onExit: () => void) {
    this.child = spawn(command[0]!, command.slice(1), { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] })
    this.child.once('exit', onExit)
    this.child.stderr!.resume()
    const input = this.child.stdio[4] as Readable
    input.setEncoding('utf8')
    input.on('data', (chunk: string) => this.receive(chunk))
    this.child.on('exit', () => {
      this.exited = true
      for (const pending of this.pending.values()) pending.reject(new ChromiumUnavailableError('Chromium stopped'))
      this.pending.clear()
    })
    this.child.on('error', () => void (this.exited = true))
  }

  private receive(chunk: string): void {
    this.buffer += chunk
    for (let end = this.buffer.indexOf('\0'); end >= 0; end = this.buffer.indexOf('\0')) {
      const message = JSON.parse(this.buffer.slice(0, end)) as {
        id?: number
        method?: string
        params?: Record<string, unknown>
        sessionId?: string
        result?: Record<string, unknown>
        error?: { message: string }
      }
      this.buffer = this.buffer.slice(end + 1)
      if (message.id !== undefined) {
        const pending = this.pending.get(message.id)
        this.pending.delete(message.id)
        if (message.error) pending?.reject(new Error(message.error.message))
        else pending?.resolve(message.result ?? {})
      } else if (message.method) {
        for (const entry of this.listeners)
          if (entry.method === message.method && entry.sessionId === message.sessionId)
            entry.listener(message.params ?? {}, message.sessionId)
      }
    }
  }

  send(method: string, params: Record<string, unknown> = {}, sessionId?: string): Promise<Record<string, unknown>> {
    if (this.exited) return Promise.reject(new ChromiumUnavailableError('Chromium is not running'))
    const id = ++this.nextId
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject })
      ;(this.child.stdio[3] as Writable).write(`${JSON.stringify({ id, method, params, sessionId })}\0`)
    })
  }

  on(method: string, sessionId: string | undefined, listener: Listener): () => void {
    const entry = { method, sessionId, listener }
    this.listeners.add(entry)
    return () => this.listeners.delete(entry)
  }

  async stop(): Promise<void> {
    if (this.exited) return
    this.child.kill('SIGKILL')
    await once(this.child, 'exit').catch(() => {})
  }
}

/** The bwrap command around Chromium: the LibreOffice sandbox's shape (sidecar/sandbox.ts). */
function chromiumCommand(options: ChromiumOptions): string[] {
  const flags = [
    '--headless=new',
    '--no-sandbox',
    '--disable-gpu',
    '--no-first-run',
    '--no-default-browser-check',
    '--disable-dev-shm-usage',
    '--disable-breakpad',
    '--disable-crash-reporter',
    '--noerrdialogs',
    '--disable-extensions',
    '--disable-background-networking',
    '--disable-sync',
    '--disable-component-update',
    '--mute-audio',
    '--hide-scrollbars',
    '--font-render-hinting=none',
    '--remote-debugging-pipe',
    'about:blank',
  ]
  if (options.sandbox === 'none') return [options.program, `--user-data-dir=${options.profile}`, ...flags]
  flags.unshift('--user-data-dir=/tmp/profile')
  const sandbox = [
    'bwrap',
    '--clearenv',
    '--unshare-all',
    '--die-with-parent',
    '--new-session',
    '--ro-bind',
    '/usr',
    '/usr',
  ]
  for (const path of ['/etc/fonts', '/var/cache/fontconfig', '/etc/ld.so.cache', '/etc/chromium', '/etc/chromium.d'])
    sandbox.push('--ro-bind-try', path, path)
  sandbox.push('--symlink', 'usr/lib', '/lib', '--symlink', 'usr/lib64', '/lib64', '--symlink', 'usr/bin', '/bin')
  sandbox.push(
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--tmpfs',
    '/tmp',
    '--tmpfs',
    '/dev/shm',
    '--setenv',
    'HOME',
    '/tmp',
    '--setenv',
    'PATH',
    '/usr/bin:/bin',
    '--setenv',
    'LANG',
    'C.UTF-8',
  )
  return [...sandbox, options.program, ...flags]
}

/** One page's work: what to load, how to wait, what to make of it. */
export interface PageJob {
  /** A URL to load: the form's index.html at PAGE_ORIGIN, or the client's URL. */
  readonly url: string
  /** The request's Gotenberg-Trace, for the log. */
  readonly trace: string
  /** The form's files by name, served at PAGE_ORIGIN. */
  readonly files: ReadonlyMap<string, { bytes: Uint8Array; type: string }>
  readonly settings: PageSettings
  readonly output:
    | { kind: 'pdf'; print: Record<string, unknown>; header?: string; footer?: string }
    | { kind: 'screenshot'; capture: Record<string, unknown>; width: number; height: number; clip: boolean }
}

export interface PageSettings {
  readonly waitDelayMs: number
  readonly waitForExpression?: string
  readonly waitForSelector?: string
  readonly emulatedMediaType?: 'screen' | 'print'
  readonly emulatedMediaFeatures: ReadonlyArray<{ name: string; value: string }>
  readonly cookies: ReadonlyArray<Record<string, unknown>>
  readonly userAgent?: string
  readonly extraHttpHeaders: readonly ExtraHeader[]
  readonly failOnHttpStatusCodes: readonly number[]
  readonly failOnResourceHttpStatusCodes: readonly number[]
  readonly ignoreResourceHttpStatusDomains: readonly string[]
  readonly failOnResourceLoadingFailed: boolean
  readonly failOnConsoleExceptions: boolean
  readonly skipNetworkIdleEvent: boolean
  readonly omitBackground: boolean
}

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  html: 'text/html; charset=utf-8',
  htm: 'text/html; charset=utf-8',
  css: 'text/css',
  js: 'text/javascript',
  mjs: 'text/javascript',
  json: 'application/json',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  svg: 'image/svg+xml',
  webp: 'image/webp',
  avif: 'image/avif',
  ico: 'image/x-icon',
  woff: 'font/woff',
  woff2: 'font/woff2',
  ttf: 'font/ttf',
  otf: 'font/otf',
  txt: 'text/plain; charset=utf-8',
  md: 'text/markdown; charset=utf-8',
  pdf: 'application/pdf',
}
export const contentTypeOf = (name: string) =>
  CONTENT_TYPES[name.split('.').pop()!.toLowerCase()] ?? 'application/octet-stream'

/**
 * Status codes as Gotenberg reads them: "499" is one code, "400-499"-style ranges are written as 499 meaning 4xx (its
 * X99 rule).
 */
export function statusMatches(codes: readonly number[], status: number): boolean {
  return codes.some(
    (code) => code === status || (code % 100 === 99 && Math.floor(code / 100) === Math.floor(status / 100)),
  )
}

/**
 * The Chromium browser: started once, one target (tab) per page, at most `concurrency` pages at once and
 * `queueSize` waiting; restarted when it stops.
 */
export class ChromiumBrowser {
  private devtools: DevTools | undefined
  private starting: Promise<DevTools> | undefined
  private running = 0
  private readonly waiting: Array<() => void> = []
  private startFailure: string | undefined
  restarts = 0
  private isClosed = false
  private readonly options: ChromiumOptions

  constructor(options: ChromiumOptions) {
    this.options = options
  }

  /**
   * Refuses a URL the policy does not let a page reach (the URL route's main page, checked before Chromium loads it).
   */
  checkUrl(url: string): void {
    checkUrl(url, this.options.policy)
  }

  get queued(): number {
    return this.waiting.length
  }

  get health(): { up: boolean; reason?: string } {
    if (this.devtools && !this.devtools.exited) return { up: true }
    return { up: false, reason: this.startFailure ?? 'Chromium is not started' }
  }

  /** Starts Chromium (again, when it stopped): resolves once it answers. */
  start(): Promise<DevTools> {
    if (this.devtools && !this.devtools.exited) return Promise.resolve(this.devtools)
    this.starting ??= (async () => {
      if (this.devtools) this.restarts++
      // A Chromium that stops on its own (a crash, the kernel's OOM killer) is started again, as Gotenberg restarts it.
      const devtools = new DevTools(chromiumCommand(this.options), () => {
        if (this.devtools === devtools && !this.isClosed)
          setTimeout(() => void this.start().catch(() => {}), 500).unref()
      })
      try {
        await Promise.race([
          devtools.send('Browser.getVersion'),
          new Promise((_, reject) =>
            setTimeout(
              () => reject(new ChromiumUnavailableError('Chromium did not answer within 30 s')),
              30_000,
            ).unref(),
          ),
        ])
        this.devtools = devtools
        this.startFailure = undefined
        return devtools
      } catch (error) {
        await devtools.stop()
        this.startFailure = `Chromium could not start: ${(error as Error).message}`
        throw new ChromiumUnavailableError(this.startFailure)
      }
    })().finally(() => (this.starting = undefined))
    return this.starting
  }

  async close(): Promise<void> {
    this.isClosed = true
    await this.starting?.catch(() => {})
    await this.devtools?.stop()
    await rm(this.options.profile, { recursive: true, force: true })
  }

  /** Renders one page; the PDF or image bytes. */
  async render(job: PageJob): Promise<Uint8Array> {
    if (this.running >= this.options.concurrency) {
      if (this.waiting.length >= this.options.queueSize)
        throw new ChromiumUnavailableError('the Chromium queue is full')
      await new Promise<void>((resolve) => this.waiting.push(resolve))
    }
    this.running++
    try {
      const devtools = await this.start()
      return await this.renderOn(devtools, job)
    } finally {
      this.running--
      this.waiting.shift()?.()
    }
  }

  private async renderOn(devtools: DevTools, job: PageJob): Promise<Uint8Array> {
    const { browserContextId } = (await devtools.send('Target.createBrowserContext', { disposeOnDetach: true })) as {
      browserContextId: string
    }
    const { targetId } = (await devtools.send('Target.createTarget', { url: 'about:blank', browserContextId })) as {
      targetId: string
    }
    const { sessionId } = (await devtools.send('Target.attachToTarget', { targetId, flatten: true })) as {
      sessionId: string
    }
    const send = (method: string, params: Record<string, unknown> = {}) => devtools.send(method, params, sessionId)
    const removers: Array<() => void> = []
    const failures: string[] = []
    let mainStatus: number | undefined
    let timer: NodeJS.Timeout | undefined
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new ChromiumUnavailableError(`the page took longer than ${this.options.timeoutMs} ms`)),
          this.options.timeoutMs,
        )
      })
      const work = (async () => {
        const { settings } = job
        removers.push(devtools.on('Fetch.requestPaused', sessionId, (params) => void this.answer(send, params, job)))
        removers.push(
          devtools.on('Runtime.exceptionThrown', sessionId, (params) => {
            const details = params.exceptionDetails as
              | { exception?: { description?: string }; text?: string }
              | undefined
            failures.push(`exception: ${details?.exception?.description ?? details?.text ?? 'unknown'}`)
          }),
        )
        removers.push(
          devtools.on('Network.responseReceived', sessionId, (params) => {
            const response = params.response as { url: string; status: number }
            if (params.type === 'Document' && mainStatus === undefined) mainStatus = response.status
            else if (
              params.type !== 'Document' &&
              statusMatches(settings.failOnResourceHttpStatusCodes, response.status)
            ) {
              const host = (() => {
                try {
                  return new URL(response.url).hostname
                } catch {
                  return ''
                }
              })()
              const ignored = settings.ignoreResourceHttpStatusDomains.some(
                (domain) => host === domain || host.endsWith(`.${domain}`),
              )
              if (!ignored)
                failures.push(
                  `resource status: ${response.url} - ${response.status}: ${STATUS_CODES[response.status] ?? ''}`,
                )
            }
          }),
        )
        removers.push(
          devtools.on('Network.loadingFailed', sessionId, (params) => {
            if (params.type !== 'Document' && params.canceled !== true)
              failures.push(`loading failed: resource ${params.type}: ${params.errorText}`)
          }),
        )
        await send('Fetch.enable', { patterns: [{ urlPattern: '*' }] })
        await send('Network.enable')
        await send('Runtime.enable')
        await send('Page.enable')
        if (settings.userAgent) await send('Network.setUserAgentOverride', { userAgent: settings.userAgent })
        if (settings.cookies.length > 0) await send('Network.setCookies', { cookies: settings.cookies })
        if (settings.emulatedMediaType || settings.emulatedMediaFeatures.length > 0) {
          await send('Emulation.setEmulatedMedia', {
            media: settings.emulatedMediaType ?? (job.output.kind === 'pdf' ? 'print' : 'screen'),
            features: settings.emulatedMediaFeatures,
          })
        }
        if (job.output.kind === 'screenshot')
          await send('Emulation.setDeviceMetricsOverride', {
            width: job.output.width,
            height: job.output.height,
            deviceScaleFactor: 1,
            mobile: false,
          })
        if (settings.omitBackground)
          await send('Emulation.setDefaultBackgroundColorOverride', { color: { r: 0, g: 0, b: 0, a: 0 } })
        const loaded = new Promise<void>((resolve) =>
          removers.push(devtools.on('Page.loadEventFired', sessionId, () => resolve())),
        )
        const navigation = (await send('Page.navigate', { url: job.url })) as { errorText?: string }
        if (navigation.errorText)
          throw new ChromiumPageError(400, `Chromium could not load '${job.url}': ${navigation.errorText}`)
        await loaded
        if (mainStatus !== undefined && statusMatches(settings.failOnHttpStatusCodes, mainStatus))
          throw new ChromiumPageError(409, `Invalid HTTP status code from the main page: ${mainStatus}`)
        if (!settings.skipNetworkIdleEvent) await this.networkIdle(devtools, sessionId, send)
        if (settings.waitDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, settings.waitDelayMs))
        if (settings.waitForExpression)
          await waitFor(send, settings.waitForExpression, 'waitForExpression', this.options.timeoutMs)
        if (settings.waitForSelector)
          await waitFor(
            send,
            `document.querySelector(${JSON.stringify(settings.waitForSelector)}) !== null`,
            'waitForSelector',
            this.options.timeoutMs,
          )
        const failed = (prefix: string) => failures.filter((failure) => failure.startsWith(prefix))
        if (settings.failOnConsoleExceptions && failed('exception').length > 0)
          throw new ChromiumPageError(
            409,
            `Chromium console exceptions:\n${failed('exception:')
              .map((f) => f.slice(11))
              .join('\n')}`,
          )
        if (failed('resource status').length > 0)
          throw new ChromiumPageError(
            409,
            `Invalid HTTP status code from resources:\n${failed('resource status: ')
              .map((f) => f.slice(17))
              .join('\n')}`,
          )
        if (settings.failOnResourceLoadingFailed && failed('loading failed').length > 0)
          throw new ChromiumPageError(
            409,
            `Chromium failed to load resources: ${failed('loading failed: ')
              .map((f) => f.slice(16))
              .join(', ')}`,
          )
        if (job.output.kind === 'pdf') {
          const { singlePage, ...rest } = job.output.print
          const print: Record<string, unknown> = { ...rest, transferMode: 'ReturnAsBase64' }
          if (singlePage) {
            // One page as tall as the content (Gotenberg's singlePage): the layout's content height in inches, at 96 px
            // an inch, as Gotenberg measures it. Only the first page is kept (what a forced page break leaves over).
            const { cssContentSize } = (await send('Page.getLayoutMetrics')) as { cssContentSize: { height: number } }
            print.paperHeight =
              cssContentSize.height / 96 + Number(print.marginTop ?? 0) + Number(print.marginBottom ?? 0)
            print.pageRanges = '1'
          }
          if (job.output.header !== undefined || job.output.footer !== undefined)
            Object.assign(print, {
              displayHeaderFooter: true,
              headerTemplate: job.output.header ?? '<span></span>',
              footerTemplate: job.output.footer ?? '<span></span>',
            })
          const { data } = (await send('Page.printToPDF', print).catch((error: Error) => {
            // Chromium's own words for the two page-range failures, in Gotenberg's.
            if (/exceeds page count/i.test(error.message))
              throw new ChromiumPageError(
                400,
                `The page ranges '${String(print.pageRanges)}' (nativePageRanges) exceeds the page count`,
              )
            if (/page range/i.test(error.message))
              throw new ChromiumPageError(
                400,
                `Chromium does not handle the page ranges '${String(print.pageRanges)}' (nativePageRanges) syntax`,
              )
            throw error
          })) as { data: string }
          return new Uint8Array(Buffer.from(data, 'base64'))
        }
        const capture = { ...job.output.capture }
        if (!job.output.clip) Object.assign(capture, { captureBeyondViewport: true })
        const { data } = (await send('Page.captureScreenshot', capture)) as { data: string }
        return new Uint8Array(Buffer.from(data, 'base64'))
      })()
      return await Promise.race([work, timeout])
    } finally {
      clearTimeout(timer)
      for (const remove of removers) remove()
      await devtools.send('Target.disposeBrowserContext', { browserContextId }).catch(() => {})
    }
  }

  /**
   * Waits until no request has been in flight for 500 ms (Chromium's networkIdle lifecycle event, as Gotenberg waits
   * for it).
   */
  private async networkIdle(
    devtools: DevTools,
    sessionId: string,
    send: (method: string, params?: Record<string, unknown>) => Promise<Record<string, unknown>>,
  ): Promise<void> {
    await send('Page.setLifecycleEventsEnabled', { enabled: true })
    let idle: () => void = () => {}
    const reached = new Promise<void>((resolve) => (idle = resolve))
    const remove = devtools.on('Page.lifecycleEvent', sessionId, (params) => {
      if (params.name === 'networkIdle') idle()
    })
    // A page already idle fired the event before it was asked for: a short fallback, not a hang.
    await Promise.race([reached, new Promise((resolve) => setTimeout(resolve, 1000))])
    remove()
  }

  /** Answers one paused request: the form's files, an allowed outside URL fetched here, or a failure. */
  private async answer(
    send: (method: string, params?: Record<string, unknown>) => Promise<Record<string, unknown>>,
    params: Record<string, unknown>,
    job: PageJob,
  ): Promise<void> {
    const requestId = params.requestId as string
    const request = params.request as { url: string; method: string; headers: Record<string, string> }
    // A paused request left unanswered would hold the page's load forever: a refused reason falls back to 'Failed'.
    const fail = (errorReason: FetchErrorReason = 'AccessDenied') =>
      send('Fetch.failRequest', { requestId, errorReason }).catch(() =>
        send('Fetch.failRequest', { requestId, errorReason: 'Failed' }).catch(() => {}),
      )
    const fulfill = (status: number, headers: Record<string, string>, body: Uint8Array) =>
      send('Fetch.fulfillRequest', {
        requestId,
        responseCode: status,
        responseHeaders: Object.entries(headers).map(([name, value]) => ({ name, value })),
        body: Buffer.from(body).toString('base64'),
      }).catch(() => {})
    let url: URL
    try {
      url = new URL(request.url)
    } catch {
      return void fail()
    }
    if (url.protocol === 'file:') {
      // No local file is ever read: Gotenberg's default deny list (^file:(?!//\/tmp/).*) and more.
      this.options.log?.({
        level: 'warn',
        message: `'${request.url}' matches the expression from the denied list`,
        trace: job.trace,
        correlation_id: job.trace,
      })
      return void fail('AccessDenied')
    }
    if (url.origin === PAGE_ORIGIN) {
      const name = decodeURIComponent(url.pathname.slice(1))
      const file = job.files.get(name)
      // The form's files are the page's folder, as in Gotenberg (file://): a name not sent fails to load, as a missing
      // file does (the protocol has no "file not found" reason: Chromium reports net::ERR_FAILED).
      if (!file) return void fail('Failed')
      return void fulfill(200, { 'content-type': file.type }, file.bytes)
    }
    try {
      const checked = checkUrl(request.url, this.options.policy)
      const headers = Object.fromEntries(
        Object.entries(request.headers).filter(
          ([name]) => !/^(host|connection|content-length|transfer-encoding)$/i.test(name),
        ),
      )
      // The extra headers travel with the requests the sidecar makes: a scoped one only where its expression matches.
      for (const header of job.settings.extraHttpHeaders)
        if (!header.scope || header.scope.test(request.url)) headers[header.name] = header.value
      const body = typeof params.request === 'object' && (params.request as { postData?: string }).postData
      const answer = await sendRequest(checked, this.options.policy, {
        method: request.method,
        headers,
        body: body ? new TextEncoder().encode(body) : undefined,
        timeoutMs: this.options.timeoutMs,
        maxBytes: this.options.maxResourceBytes,
      })
      const responseHeaders: Record<string, string> = {}
      for (const [name, value] of Object.entries(answer.headers))
        if (value !== undefined && !/^(content-encoding|transfer-encoding|content-length|connection)$/i.test(name))
          responseHeaders[name] = Array.isArray(value) ? value.join(', ') : value
      await fulfill(answer.status, responseHeaders, answer.body)
    } catch (error) {
      this.options.log?.({
        level: 'warn',
        message: (error as Error).message,
        url: request.url,
        trace: job.trace,
        correlation_id: job.trace,
      })
      const reason = /ECONNREFUSED/.test(String(error))
        ? 'ConnectionRefused'
        : /ENOTFOUND|EAI_AGAIN/.test(String(error))
          ? 'NameNotResolved'
          : /took more than/.test(String(error))
            ? 'TimedOut'
            : error instanceof UrlRefusedError
              ? 'AccessDenied'
              : 'Failed'
      await fail(reason)
    }
  }
}

/**
 * Polls an expression until it is true, as Gotenberg's waitForExpression does; an exception or undefined is the
 * client's error.
 */
async function waitFor(
  send: (method: string, params?: Record<string, unknown>) => Promise<Record<string, unknown>>,
  expression: string,
  field: string,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    const { result, exceptionDetails } = (await send('Runtime.evaluate', { expression, returnByValue: true })) as {
      result?: { type?: string; value?: unknown }
      exceptionDetails?: unknown
    }
    if (exceptionDetails || result?.type === 'undefined')
      throw new ChromiumPageError(400, `The expression '${expression}' (${field}) returned an exception or undefined`)
    if (result?.value === true) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new ChromiumUnavailableError(`'${expression}' (${field}) was not true within ${timeoutMs} ms`)
}

/** An extra header: sent to every URL, or (Gotenberg's "value;scope=regex") to the URLs the expression matches. */
export interface ExtraHeader {
  readonly name: string
  readonly value: string
  readonly scope?: RegExp
}

/** The form's reader of one route: Go's parsers, every problem collected in the order Gotenberg reports them. */
export class FormReader {
  readonly errors: string[] = []
  private readonly form: FormData
  constructor(form: FormData) {
    this.form = form
  }
  field(name: string): string {
    const value = this.form.get(name)
    return typeof value === 'string' ? value : ''
  }
  private invalid(name: string, why: string): void {
    this.errors.push(`form field '${name}' is invalid (got '${this.field(name)}', resulting to ${why})`)
  }
  bool(name: string, fallback: boolean): boolean {
    const raw = this.field(name)
    if (raw === '') return fallback
    const parsed = parseGoBool(raw)
    if (parsed === undefined) this.invalid(name, `strconv.ParseBool: parsing "${raw}": invalid syntax`)
    return parsed ?? fallback
  }
  float(name: string, fallback: number, check: (n: number) => string | undefined = () => undefined): number {
    const raw = this.field(name)
    if (raw === '') return fallback
    const parsed = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(raw) ? Number(raw) : Number.NaN
    const problem = Number.isNaN(parsed) ? `strconv.ParseFloat: parsing "${raw}": invalid syntax` : check(parsed)
    if (problem) this.invalid(name, problem)
    return problem ? fallback : parsed
  }
  int(name: string, fallback: number, check: (n: number) => string | undefined = () => undefined): number {
    const raw = this.field(name)
    if (raw === '') return fallback
    const parsed = /^[+-]?\d{1,15}$/.test(raw) ? Number(raw) : Number.NaN
    const problem = Number.isNaN(parsed) ? `strconv.Atoi: parsing "${raw}": invalid syntax` : check(parsed)
    if (problem) this.invalid(name, problem)
    return problem ? fallback : parsed
  }
  /** A JSON field; `check` answers why a parsed value is refused. */
  json<T>(name: string, fallback: T, check: (value: unknown) => string | undefined): T {
    const raw = this.field(name)
    if (raw === '') return fallback
    let parsed: unknown
    try {
      parsed = JSON.parse(raw)
    } catch (error) {
      this.invalid(name, `unmarshal ${name}: ${goJsonError(raw) ?? (error as Error).message}`)
      return fallback
    }
    const problem = check(parsed)
    if (problem) this.invalid(name, problem)
    return problem ? fallback : (parsed as T)
  }
  /** Paper and margin sizes in inches: a number (inches) or with a unit (pt, px, in, mm, cm, pc). */
  inches(name: string, fallback: number): number {
    const raw = this.field(name).trim()
    if (raw === '') return fallback
    const match = /^(\d+(?:\.\d+)?)(pt|px|in|mm|cm|pc)?$/.exec(raw)
    if (!match) {
      this.invalid(name, `strconv.ParseFloat: parsing "${raw}": invalid syntax`)
      return fallback
    }
    return Number(match[1]) / { pt: 72, px: 96, in: 1, mm: 25.4, cm: 2.54, pc: 6 }[(match[2] ?? 'in') as 'in']
  }
}

const isCodes = (value: unknown) =>
  Array.isArray(value) && value.every((code) => Number.isInteger(code) && code >= 100 && code <= 599)
    ? undefined
    : 'expected an array of HTTP status codes'

/** Reads the page's settings as Gotenberg's chromium routes read them, in its order. */
export function readPageSettings(reader: FormReader): PageSettings {
  const skipNetworkIdleEvent = reader.bool('skipNetworkIdleEvent', true)
  reader.bool('skipNetworkAlmostIdleEvent', true)
  const failOnHttpStatusCodes = reader.json<number[]>('failOnHttpStatusCodes', [499, 599], isCodes)
  const failOnResourceHttpStatusCodes = reader.json<number[]>('failOnResourceHttpStatusCodes', [], isCodes)
  const failOnResourceLoadingFailed = reader.bool('failOnResourceLoadingFailed', false)
  const failOnConsoleExceptions = reader.bool('failOnConsoleExceptions', false)
  const waitDelay = reader.field('waitDelay')
  let waitDelayMs = 0
  if (waitDelay) {
    // Go's time.ParseDuration, for the units a page wait uses.
    const match = /^(\d+(?:\.\d+)?)(ms|s|m)$/.exec(waitDelay)
    if (!match)
      reader.errors.push(
        `form field 'waitDelay' is invalid (got '${waitDelay}', resulting to time: invalid duration "${waitDelay}")`,
      )
    else waitDelayMs = Number(match[1]) * { ms: 1, s: 1000, m: 60_000 }[match[2] as 'ms' | 's' | 'm']
  }
  const media = reader.field('emulatedMediaType')
  if (media && media !== 'screen' && media !== 'print')
    reader.errors.push(
      `form field 'emulatedMediaType' is invalid (got '${media}', resulting to wrong value, expected either 'screen', 'print' or empty)`,
    )
  // An array of {name, value}, or an object of names to values (both are Gotenberg's).
  const rawFeatures = reader.json<unknown>('emulatedMediaFeatures', [], (value) => {
    const isList =
      Array.isArray(value) && value.every((f) => typeof f?.name === 'string' && typeof f?.value === 'string')
    const isMap =
      typeof value === 'object' &&
      value !== null &&
      !Array.isArray(value) &&
      Object.values(value).every((v) => typeof v === 'string')
    return isList || isMap ? undefined : "expected an array of {'name','value'} objects or an object of names to values"
  })
  const features = Array.isArray(rawFeatures)
    ? (rawFeatures as Array<{ name: string; value: string }>)
    : Object.entries(rawFeatures as Record<string, string>).map(([name, value]) => ({ name, value }))
  const cookies = reader.json<Array<Record<string, unknown>>>('cookies', [], (value) => {
    if (!Array.isArray(value)) return 'expected an array of cookies'
    const bad = value.findIndex(
      (c) =>
        typeof c?.name !== 'string' ||
        !c.name ||
        typeof c?.value !== 'string' ||
        typeof c?.domain !== 'string' ||
        !c.domain,
    )
    return bad >= 0 ? `cookie ${bad} must have its name, value and domain set` : undefined
  })
  const headers = reader.json<Record<string, string>>('extraHttpHeaders', {}, (value) =>
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.entries(value).every(
      ([key, v]) => /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(key) && typeof v === 'string' && !/[\r\n\0]/.test(v),
    )
      ? undefined
      : 'expected an object of header names to string values',
  )
  const extraHttpHeaders: ExtraHeader[] = []
  for (const [name, raw] of Object.entries(headers)) {
    const [value, ...params] = raw.split(';')
    let scope: RegExp | undefined
    for (const param of params) {
      const [key, ...rest] = param.trim().split('=')
      const pattern = rest.join('=')
      if (key !== 'scope' || pattern === '') {
        reader.errors.push(
          `form field 'extraHttpHeaders' is invalid (got '${reader.field('extraHttpHeaders')}', resulting to invalid scope '${pattern}' for header '${name}')`,
        )
        break
      }
      try {
        scope = new RegExp(pattern)
      } catch (error) {
        // Go's regexp wording for the common case (Gotenberg compiles the scope with Go's regexp).
        const why = /Nothing to repeat/.test((error as Error).message)
          ? 'missing argument to repetition operator'
          : (error as Error).message.replace(/^Invalid regular expression: \/.*\/\w*: /, '')
        reader.errors.push(
          `form field 'extraHttpHeaders' is invalid (got '${reader.field('extraHttpHeaders')}', resulting to invalid scope regex pattern for header '${name}': error parsing regexp: ${why} in \`${pattern}\`)`,
        )
      }
      break
    }
    extraHttpHeaders.push({ name, value: value!.trim(), scope })
  }
  return {
    waitDelayMs,
    waitForExpression: reader.field('waitForExpression') || undefined,
    waitForSelector: reader.field('waitForSelector') || undefined,
    emulatedMediaType: (media || undefined) as PageSettings['emulatedMediaType'],
    emulatedMediaFeatures: features,
    cookies: cookies.map((cookie) => ({
      name: cookie.name,
      value: cookie.value,
      domain: cookie.domain,
      path: cookie.path ?? '/',
      secure: cookie.secure === true,
      httpOnly: cookie.httpOnly === true,
      ...(cookie.sameSite ? { sameSite: cookie.sameSite } : {}),
    })),
    userAgent: reader.field('userAgent') || undefined,
    extraHttpHeaders,
    failOnHttpStatusCodes,
    failOnResourceHttpStatusCodes,
    ignoreResourceHttpStatusDomains: reader
      .json<string[]>('ignoreResourceHttpStatusDomains', [], (value) =>
        Array.isArray(value) && value.every((d) => typeof d === 'string') ? undefined : 'expected an array of domains',
      )
      .map((domain) => domain.toLowerCase().replace(/^\*?\./, '')),
    failOnResourceLoadingFailed,
    failOnConsoleExceptions,
    skipNetworkIdleEvent,
    omitBackground: false,
  }
}
