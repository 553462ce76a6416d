// The Edgefloor sidecar: a Gotenberg-8-compatible HTTP API over real LibreOffice, Debian's Chromium, qpdf and
// exiftool, for this machine (no Docker) and for self-hosters. Routes: POST /forms/libreoffice/convert (and
// Gotenberg 6's /convert/office alias), /forms/pdfengines/* (sidecar/pdfengines.ts), /forms/chromium/*
// (sidecar/chromium-routes.ts), GET /, /favicon.ico, /health, /version, /prometheus/metrics.
// Run: node sidecar/server.ts (SIDECAR_HOST, SIDECAR_PORT).
import { randomUUID, timingSafeEqual } from 'node:crypto'
import { readFile, rm, writeFile } from 'node:fs/promises'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import {
  ChromiumBrowser,
  ChromiumPageError,
  CHROMIUM_ROUTES,
  ChromiumUnavailableError,
  type ChromiumRoute,
} from './chromium.ts'
import { runChromiumRoute } from './chromium-routes.ts'
import { ATTACHMENT_FIELDS, FormError, readRouteSettings, type RouteSettings } from './gotenberg-form.ts'
import { DocumentRefusedError, inspectDocument } from './inspect.ts'
import {
  ConversionFailedError,
  ConversionTimeoutError,
  LibreOfficePool,
  OfficeUnavailableError,
  QueueFullError,
  sidecarRoot,
  type PdfOptions,
} from './libreoffice.ts'
import type { Sandbox } from './office-process.ts'
import {
  type Answer,
  answerOf,
  needsPostProcessing,
  type Output,
  postProcess,
  safeName,
  uniqueNames,
} from './outputs.ts'
import { METADATA_REFUSED, metadataArguments, PostProcessError } from './pdf-post.ts'
import { PDF_ENGINE_ROUTES, type PdfEngineRoute, runPdfEngineRoute } from './pdfengines.ts'
import { addDownloads, type DownloadSettings } from './download.ts'
import { OutboundError, UrlRefusedError, type UrlPolicy } from './outbound.ts'
import { appliesVariables, applyVariables, VARIABLES_EXTENSIONS, VariablesError, type Variables } from './variables.ts'
import { readWebhook, sendToWebhook, WebhookHeaderError, type WebhookSettings } from './webhook.ts'

/** The Gotenberg release whose API we serve: GET /version answers it, and docker-compose.sidecar.yml pins its image. */
export const GOTENBERG_VERSION = '8.34.0'

/** The extensions Gotenberg 8.34 hands to LibreOffice (its libreoffice module's list, quoted in its 400). A format
 * the Debian packages here cannot open fails in LibreOffice with a 400, as it does in Gotenberg. */
export const EXTENSIONS = [
  '123',
  '602',
  'abw',
  'bib',
  'bmp',
  'cdr',
  'cgm',
  'cmx',
  'csv',
  'cwk',
  'dbf',
  'dif',
  'doc',
  'docm',
  'docx',
  'dot',
  'dotm',
  'dotx',
  'dxf',
  'emf',
  'eps',
  'epub',
  'fodg',
  'fodp',
  'fods',
  'fodt',
  'fopd',
  'gif',
  'htm',
  'html',
  'hwp',
  'jpeg',
  'jpg',
  'key',
  'ltx',
  'lwp',
  'mcw',
  'met',
  'mml',
  'mw',
  'numbers',
  'odd',
  'odg',
  'odm',
  'odp',
  'ods',
  'odt',
  'otg',
  'oth',
  'otp',
  'ots',
  'ott',
  'pages',
  'pbm',
  'pcd',
  'pct',
  'pcx',
  'pdb',
  'pdf',
  'pgm',
  'png',
  'pot',
  'potm',
  'potx',
  'ppm',
  'pps',
  'ppt',
  'pptm',
  'pptx',
  'psd',
  'psw',
  'pub',
  'pwp',
  'pxl',
  'ras',
  'rtf',
  'sda',
  'sdc',
  'sdd',
  'sdp',
  'sdw',
  'sgl',
  'slk',
  'smf',
  'stc',
  'std',
  'sti',
  'stw',
  'svg',
  'svm',
  'swf',
  'sxc',
  'sxd',
  'sxg',
  'sxi',
  'sxm',
  'sxw',
  'tga',
  'tif',
  'tiff',
  'txt',
  'uof',
  'uop',
  'uos',
  'uot',
  'vdx',
  'vor',
  'vsd',
  'vsdm',
  'vsdx',
  'wb2',
  'wk1',
  'wks',
  'wmf',
  'wpd',
  'wpg',
  'wps',
  'xbm',
  'xhtml',
  'xls',
  'xlsb',
  'xlsm',
  'xlsx',
  'xlt',
  'xltm',
  'xltx',
  'xlw',
  'xml',
  'xpm',
  'zabw',
]

export interface SidecarOptions {
  readonly host: string
  readonly port: number
  readonly processes: number
  readonly queueSize: number
  readonly timeoutMs: number
  readonly maxBytes: number
  readonly maxExpandedBytes: number
  readonly restartAfter: number
  readonly username?: string
  readonly password?: string
  readonly soffice: string
  readonly python: string
  readonly sandbox: Sandbox
  /** Served under this prefix (Gotenberg's --api-root-path), "/" by default. */
  readonly rootPath: string
  /** Whether requests to /health are logged (Gotenberg's --api-disable-health-check-logging turns it off). */
  readonly healthLogging: boolean
  /** Where the JSON log lines go (standard output by default). */
  readonly log?: (entry: Record<string, unknown>) => void
  readonly webhook: WebhookSettings
  readonly download: DownloadSettings
  /** Serves Gotenberg's Chromium routes (SIDECAR_CHROMIUM_DISABLE=true turns them off, as CHROMIUM_DISABLE_ROUTES). */
  readonly chromium: {
    readonly disabled: boolean
    readonly program: string
    readonly concurrency: number
    readonly policy: UrlPolicy
  }
  /**
   * Serves Gotenberg's PDF engines routes (SIDECAR_PDFENGINES_DISABLE=true turns them off, as
   * PDFENGINES_DISABLE_ROUTES).
   */
  readonly pdfEnginesDisabled: boolean
}

export function optionsFromEnv(env: Readonly<Record<string, string | undefined>> = process.env): SidecarOptions {
  const number = (name: string, fallback: number) => {
    const value = env[name]
    if (value === undefined || value === '') return fallback
    const parsed = Number(value)
    if (!Number.isInteger(parsed) || parsed < 0) throw new Error(`${name} must be a whole number, got "${value}"`)
    return parsed
  }
  const pattern = (name: string) => {
    const value = env[name]
    if (!value) return undefined
    try {
      return new RegExp(value)
    } catch (error) {
      throw new Error(`${name} must be a regular expression: ${(error as Error).message}`)
    }
  }
  // Hosts, as written in URLs, that webhooks and downloads may reach although they are loopback or private.
  const privateHosts = (env.SIDECAR_ALLOWED_PRIVATE_HOSTS ?? '')
    .split(',')
    .map((host) =>
      host
        .trim()
        .toLowerCase()
        .replace(/^\[|\]$/g, ''),
    )
    .filter(Boolean)
  const policy = (allow: string, deny: string): UrlPolicy => ({
    allow: pattern(allow),
    deny: pattern(deny),
    privateHosts,
  })
  const maxBytes = number('SIDECAR_MAX_BYTES', 100 * 1024 * 1024)
  return {
    host: env.SIDECAR_HOST || '127.0.0.1',
    port: number('SIDECAR_PORT', 3000),
    processes: Math.max(1, number('SIDECAR_PROCESSES', 1)),
    queueSize: number('SIDECAR_QUEUE', 16),
    timeoutMs: number('SIDECAR_TIMEOUT_MS', 120_000),
    maxBytes,
    maxExpandedBytes: number('SIDECAR_MAX_EXPANDED_BYTES', 512 * 1024 * 1024),
    restartAfter: Math.max(1, number('SIDECAR_RESTART_AFTER', 10)),
    username: env.SIDECAR_USERNAME || undefined,
    password: env.SIDECAR_PASSWORD || undefined,
    soffice: env.SOFFICE || 'soffice',
    python: env.SIDECAR_PYTHON || '/usr/bin/python3',
    sandbox: sandbox(env.SIDECAR_SANDBOX),
    rootPath: rootPath(env.SIDECAR_ROOT_PATH),
    healthLogging: env.SIDECAR_HEALTH_LOGGING !== 'false',
    webhook: {
      disabled: env.SIDECAR_WEBHOOK_DISABLE === 'true',
      policy: policy('SIDECAR_WEBHOOK_ALLOW_LIST', 'SIDECAR_WEBHOOK_DENY_LIST'),
      errorPolicy: policy('SIDECAR_WEBHOOK_ERROR_ALLOW_LIST', 'SIDECAR_WEBHOOK_ERROR_DENY_LIST'),
      maxRetry: number('SIDECAR_WEBHOOK_MAX_RETRY', 4),
      retryMinWaitMs: number('SIDECAR_WEBHOOK_RETRY_MIN_WAIT_MS', 1000),
      retryMaxWaitMs: number('SIDECAR_WEBHOOK_RETRY_MAX_WAIT_MS', 30_000),
      timeoutMs: number('SIDECAR_WEBHOOK_TIMEOUT_MS', 30_000),
    },
    chromium: {
      disabled: env.SIDECAR_CHROMIUM_DISABLE === 'true',
      program: env.SIDECAR_CHROMIUM || '/usr/lib/chromium/chromium',
      concurrency: Math.max(1, number('SIDECAR_CHROMIUM_PAGES', 2)),
      // SIDECAR_CHROMIUM_DENY_PRIVATE=true: no loopback or private address for pages, even a host listed for the
      // other features.
      policy: {
        ...policy('SIDECAR_CHROMIUM_ALLOW_LIST', 'SIDECAR_CHROMIUM_DENY_LIST'),
        ...(env.SIDECAR_CHROMIUM_DENY_PRIVATE === 'true' ? { privateHosts: [] } : {}),
      },
    },
    pdfEnginesDisabled: env.SIDECAR_PDFENGINES_DISABLE === 'true',
    download: {
      disabled: env.SIDECAR_DOWNLOAD_DISABLE === 'true',
      policy: policy('SIDECAR_DOWNLOAD_ALLOW_LIST', 'SIDECAR_DOWNLOAD_DENY_LIST'),
      timeoutMs: number('SIDECAR_DOWNLOAD_TIMEOUT_MS', 30_000),
      maxBytes: number('SIDECAR_DOWNLOAD_MAX_BYTES', maxBytes),
    },
  }
}

function rootPath(value: string | undefined): string {
  if (!value || value === '/') return '/'
  if (!/^\/[\w.~/-]*$/.test(value)) throw new Error(`SIDECAR_ROOT_PATH must be a path like "/foo/", got "${value}"`)
  return value.endsWith('/') ? value : `${value}/`
}

function sandbox(value: string | undefined): Sandbox {
  if (value === undefined || value === '' || value === 'bwrap') return 'bwrap'
  if (value === 'none') return 'none'
  throw new Error(`SIDECAR_SANDBOX must be "bwrap" or "none", got "${value}"`)
}

class HttpError extends Error {
  readonly status: number
  constructor(status: number, message: string) {
    super(message)
    this.status = status
  }
}

function send(
  response: ServerResponse,
  status: number,
  body: string | Uint8Array,
  headers: Record<string, string> = {},
): void {
  const type = typeof body === 'string' ? { 'content-type': 'text/plain; charset=UTF-8' } : {}
  response.writeHead(status, { ...type, ...headers })
  response.end(body)
}

function authorized(request: IncomingMessage, options: SidecarOptions): boolean {
  if (!options.username) return true
  const expected = Buffer.from(
    `Basic ${Buffer.from(`${options.username}:${options.password ?? ''}`).toString('base64')}`,
  )
  const given = Buffer.from(request.headers.authorization ?? '')
  return given.length === expected.length && timingSafeEqual(given, expected)
}

/**
 * Formats LibreOffice reads that Gotenberg 8.34's list lacks (PowerPoint shows, tab-separated values): accepted too.
 */
const MORE_EXTENSIONS = ['ppsx', 'ppsm', 'tsv']

const isConvertible = (name: string) =>
  name.includes('.') && [...EXTENSIONS, ...MORE_EXTENSIONS].includes(name.split('.').pop()!.toLowerCase())

/** Refuses what Gotenberg refuses before reading a byte: a body that is not multipart, or has no boundary. */
function checkMultipart(contentType: string): void {
  if (!/^multipart\/form-data\s*(;|$)/i.test(contentType))
    throw new HttpError(415, "Invalid 'Content-Type' header value: want 'multipart/form-data'")
  if (!/;\s*boundary=/i.test(contentType)) throw new HttpError(415, "Invalid 'Content-Type' header value: no boundary")
}

async function readForm(request: IncomingMessage, options: SidecarOptions): Promise<FormData> {
  const contentType = request.headers['content-type'] ?? ''
  checkMultipart(contentType)
  const declared = Number(request.headers['content-length'] ?? '0')
  if (declared > options.maxBytes) throw new HttpError(413, 'Request Entity Too Large')
  let seen = 0
  const limited = Readable.from(
    (async function* () {
      for await (const chunk of request) {
        seen += (chunk as Buffer).length
        if (seen > options.maxBytes) throw new HttpError(413, 'Request Entity Too Large')
        yield chunk as Buffer
      }
    })(),
  )
  try {
    const webRequest = new Request('http://sidecar/', {
      method: 'POST',
      headers: { 'content-type': contentType },
      body: Readable.toWeb(limited) as ReadableStream,
      duplex: 'half',
    } as RequestInit)
    return await webRequest.formData()
  } catch (error) {
    if (error instanceof HttpError || (error as { cause?: unknown })?.cause instanceof HttpError)
      throw error instanceof HttpError ? error : (error as { cause: HttpError }).cause
    throw new HttpError(400, "Malformed body: it does not match the 'Content-Type' header boundaries")
  }
}

const CFB_MAGIC = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]
const PAGE_RANGES = /^\s*\d+(\s*-\s*\d+)?(\s*,\s*\d+(\s*-\s*\d+)?)*\s*$/

function pdfOptions(settings: RouteSettings): PdfOptions {
  return {
    nativePageRanges: settings.nativePageRanges?.replace(/\s+/g, ''),
    pdfa: settings.pdfa,
    pdfua: settings.pdfua,
    landscape: settings.landscape,
    password: settings.password,
    exportFilter: settings.exportFilter,
    updateIndexes: settings.updateIndexes,
  }
}

/** Gotenberg's words for LibreOffice failures it cannot tell apart (its api.ErrLibreOffice* sentinels). */
const PASSWORD_REQUIRED =
  'LibreOffice failed to process a document: a password may be required, or, if one has been given, it is invalid. In any case, the exact cause is uncertain.'
const rangesOrPassword = (ranges: string) =>
  `LibreOffice failed to process a document: possible causes include malformed page ranges '${ranges}' (nativePageRanges), or, if a password has been provided, it may not be required. In any case, the exact cause is uncertain.`

/** Inspects one document (zip bomb, encryption), converts it, and words a failure as Gotenberg does. */
async function convertOne(
  pool: LibreOfficePool,
  options: SidecarOptions,
  name: string,
  bytes: Uint8Array,
  settings: PdfOptions,
  trace: string,
  variables?: Variables,
): Promise<Uint8Array> {
  const facts = await inspectDocument(name, bytes, options.maxExpandedBytes).catch((error) => {
    throw error instanceof DocumentRefusedError ? new HttpError(400, `Bad Request: ${error.message}`) : error
  })
  if (variables) {
    // After the inspection: the template's zip is known not to be a bomb before it is rewritten.
    if (facts.encrypted || CFB_MAGIC.every((byte, i) => bytes[i] === byte))
      throw new HttpError(400, `Bad Request: variables cannot be applied to the password-protected document '${name}'`)
    bytes = applyVariables(name, bytes, variables)
  }
  // Only a legacy binary file (.doc, .xls, .ppt) can hide its encryption from the inspection.
  const knownPlain = !facts.encrypted && !CFB_MAGIC.every((byte, i) => bytes[i] === byte)
  if (settings.password && knownPlain) throw new HttpError(400, rangesOrPassword(''))
  try {
    return await pool.convert(name, bytes, settings, trace)
  } catch (error) {
    if (error instanceof ConversionFailedError && facts.encrypted) {
      throw new HttpError(400, PASSWORD_REQUIRED)
    }
    throw error
  }
}

/** Converts a read form into Gotenberg's answer: one PDF, or a zip of several. */
async function convertForm(
  form: FormData,
  headers: IncomingMessage['headers'],
  pool: LibreOfficePool,
  options: SidecarOptions,
  trace: string,
): Promise<Answer> {
  await addDownloads(form, options.download)
  // Like Gotenberg, files LibreOffice cannot read are left out, and the documents go in file-name order (the
  // order of a merge and of a zip); files sent as embeds, watermark or stamp are never converted.
  const files = [...form.entries()]
    .filter(
      (entry): entry is [string, File] =>
        typeof entry[1] !== 'string' && !ATTACHMENT_FIELDS.includes(entry[0]) && isConvertible(entry[1].name),
    )
    .map(([, file]) => file)
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  const settings = readRouteSettings(form, files.length > 0, EXTENSIONS)
  const names = files.map((file) => safeName(file.name))
  if (settings.nativePageRanges && !PAGE_RANGES.test(settings.nativePageRanges)) {
    throw new HttpError(400, rangesOrPassword(settings.nativePageRanges))
  }
  if (settings.metadata) {
    const args = metadataArguments(settings.metadata)
    if (typeof args === 'string') throw new HttpError(400, METADATA_REFUSED)
  }
  const notWord = settings.variables && names.find((name) => !appliesVariables(name))
  if (notWord)
    throw new HttpError(
      400,
      `The 'variables' form field only applies to Word documents (${VARIABLES_EXTENSIONS.join(', ')}), but '${notWord}' is not one. Remove the 'variables' form field or convert '${notWord}' in a separate request.`,
    )
  const lo = pdfOptions(settings)
  // Settled, not Promise.all: a failure must not answer while the other documents still convert in their folders.
  const results = await Promise.allSettled(
    files.map(async (file, i) =>
      convertOne(pool, options, names[i]!, new Uint8Array(await file.arrayBuffer()), lo, trace, settings.variables),
    ),
  )
  const failure = results.find((result) => result.status === 'rejected')
  if (failure) throw failure.reason
  const pdfs = results.map((result) => (result as PromiseFulfilledResult<Uint8Array>).value)
  const zipNames = uniqueNames(names.map((name) => `${name}.pdf`))
  const header = headers['gotenberg-output-filename']?.toString()
  const gotenberg6Name = form.get('resultFilename')
  const given = header || (typeof gotenberg6Name === 'string' && gotenberg6Name.replace(/\.(pdf|zip)$/i, '')) || ''
  // Nothing to do after LibreOffice (most requests): answered from memory, no folder, no file written and read back.
  if (!needsPostProcessing(settings, form, pdfs.length))
    return answerOf(
      pdfs.map((bytes, i) => ({ name: zipNames[i]!, bytes })),
      given,
      false,
    )
  const folder = await pool.scratch('post-')
  try {
    let outputs: Output[] = await Promise.all(
      pdfs.map(async (pdf, i) => {
        const path = join(folder, `document-${i}.pdf`)
        await writeFile(path, pdf)
        return { path, name: zipNames[i]! }
      }),
    )
    outputs = await postProcess(outputs, settings, form, folder, pool, options.timeoutMs, trace)
    const entries = await Promise.all(
      outputs.map(async (output) => ({ name: output.name, bytes: new Uint8Array(await readFile(output.path)) })),
    )
    return answerOf(entries, given, settings.split !== undefined)
  } finally {
    // Removed before answering: a client that has the answer finds nothing of its request left on disk.
    await rm(folder, { recursive: true, force: true })
  }
}

/** The deliveries of webhook requests still running, so that close() waits for them. */
type WebhookJobs = Set<Promise<void>>

/** What a form route does with its read form. */
type Produce = (form: FormData) => Promise<Answer>

async function formRoute(
  request: IncomingMessage,
  response: ServerResponse,
  options: SidecarOptions,
  trace: string,
  webhookJobs: WebhookJobs,
  produce: Produce,
): Promise<void> {
  // A webhook's headers are checked before the body is read: a refused URL costs no upload.
  const webhook = readWebhook(request.headers, options.webhook)
  // Each webhook request holds its form and then its result until delivered: as many as the queue takes, no more.
  if (webhook && webhookJobs.size >= options.queueSize + options.processes)
    throw new QueueFullError('too many webhook requests in progress')
  const form = await readForm(request, options)
  const headersOf = (answer: Answer): Record<string, string> => ({
    'content-type': answer.type,
    ...(answer.name ? { 'content-disposition': contentDisposition(answer.name) } : {}),
  })
  if (!webhook) {
    const answer = await produce(form)
    return send(response, 200, answer.body, headersOf(answer))
  }
  const result = produce(form).then((answer) => {
    // A read route's JSON is an answer, not a file: Gotenberg's webhook middleware refuses it.
    if (!answer.name)
      throw new HttpError(
        400,
        'The webhook middleware can only work with multipart/form-data routes that results in output files',
      )
    return { body: answer.body, type: answer.type, disposition: contentDisposition(answer.name) }
  })
  const job: Promise<void> = sendToWebhook(
    webhook,
    result,
    errorAnswer,
    trace,
    options.webhook,
    options.log ?? logLine,
  ).finally(() => webhookJobs.delete(job))
  webhookJobs.add(job)
  response.writeHead(204).end()
}

const logLine = (entry: Record<string, unknown>) => console.log(JSON.stringify(entry))

/** An error's status and Gotenberg's wording; internals never leave (a 500 says only that). */
function errorAnswer(error: unknown): [number, string] {
  if (error instanceof HttpError || error instanceof FormError || error instanceof WebhookHeaderError)
    return [error.status, error.message]
  if (error instanceof UrlRefusedError) return [403, `Forbidden: ${error.message}`]
  if (error instanceof OutboundError) return [400, `Bad Request: downloadFrom: ${error.message}`]
  if (error instanceof PostProcessError || error instanceof ConversionFailedError || error instanceof VariablesError)
    return [400, `Bad Request: ${error.message}`]
  if (error instanceof ChromiumPageError) return [error.status, error.message]
  if (error instanceof QueueFullError) return [429, 'Too Many Requests']
  if (
    error instanceof ConversionTimeoutError ||
    error instanceof OfficeUnavailableError ||
    error instanceof ChromiumUnavailableError
  )
    return [503, `Service Unavailable: ${error.message}`]
  return [500, 'Internal Server Error']
}

/** Content-Disposition with an ASCII fallback and the UTF-8 name (RFC 6266), as a header cannot carry UTF-8. */
function contentDisposition(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_')
  return ascii === name
    ? `attachment; filename="${name}"`
    : `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`
}

/** Gotenberg 6's other paths (gotenberg-js-client's), served by the Gotenberg 8 route each became. */
const GOTENBERG6_ROUTES: Readonly<Record<string, string>> = {
  '/convert/html': '/forms/chromium/convert/html',
  '/convert/url': '/forms/chromium/convert/url',
  '/convert/markdown': '/forms/chromium/convert/markdown',
  '/merge': '/forms/pdfengines/merge',
}

/**
 * A Gotenberg 6 form in Gotenberg 8's names: remoteURL → url, pageRanges → nativePageRanges, waitDelay in seconds,
 * Gotenberg-Remoteurl-* headers → extraHttpHeaders, resultFilename → the output's name. Gotenberg 6 options with no
 * Gotenberg 8 equivalent here are refused (webhookURL, waitTimeout); googleChromeRpccBufferSize sizes a buffer this
 * server does not have (the DevTools pipe has no limit) and is accepted.
 */
function fromGotenberg6(form: FormData, headers: IncomingMessage['headers']): string {
  const take = (name: string) => {
    const value = form.get(name)
    form.delete(name)
    return typeof value === 'string' ? value : ''
  }
  for (const name of ['webhookURL', 'webhookURLTimeout', 'waitTimeout']) {
    if (form.has(name))
      throw new FormError(
        `Invalid form data: form field '${name}' is not supported by this server (a Gotenberg 6 option: use the Gotenberg-Webhook-* headers, or the server's SIDECAR_TIMEOUT_MS)`,
      )
  }
  take('googleChromeRpccBufferSize')
  const remoteUrl = take('remoteURL')
  if (remoteUrl) form.set('url', remoteUrl)
  const ranges = take('pageRanges')
  if (ranges) form.set('nativePageRanges', ranges)
  const delay = take('waitDelay')
  if (delay) form.set('waitDelay', /^\d+(\.\d+)?$/.test(delay) ? `${Math.round(Number(delay) * 1000)}ms` : delay)
  const remoteHeaders = Object.entries(headers)
    .filter(([name]) => name.startsWith('gotenberg-remoteurl-'))
    .map(([name, value]) => [name.slice('gotenberg-remoteurl-'.length), String(value)])
  if (remoteHeaders.length > 0) form.set('extraHttpHeaders', JSON.stringify(Object.fromEntries(remoteHeaders)))
  return take('resultFilename').replace(/\.(pdf|zip)$/i, '')
}

/** Gotenberg's answer to GET / (its API has no UI). */
const ROOT_PAGE =
  'Hey, Gotenberg has no UI, it\'s an API. Head to the <a href="https://gotenberg.dev">documentation</a> to learn how to interact with it 🚀'

/** Gotenberg's Prometheus gauges, in its text exposition format (names sorted, as its registry writes them). */
function metricsText(pool: LibreOfficePool, chromium: ChromiumBrowser): string {
  const gauge = (name: string, help: string, value: number) =>
    `# HELP gotenberg_${name} ${help}\n# TYPE gotenberg_${name} gauge\ngotenberg_${name} ${value}\n`
  return [
    gauge(
      'chromium_requests_queue_size',
      'Current number of Chromium conversion requests waiting to be treated.',
      chromium.queued,
    ),
    gauge('chromium_restarts_count', 'Current number of Chromium restarts.', chromium.restarts),
    gauge(
      'libreoffice_requests_queue_size',
      'Current number of LibreOffice conversion requests waiting to be treated.',
      pool.stats.queued,
    ),
    gauge('libreoffice_restarts_count', 'Current number of LibreOffice restarts.', pool.restarts),
  ].join('')
}

/** Each path and the methods it answers; HEAD /health as Gotenberg answers it (for load balancers' checks). */
const ROUTE_METHODS: Readonly<Record<string, readonly string[]>> = {
  '/': ['GET'],
  '/favicon.ico': ['GET'],
  '/health': ['GET', 'HEAD'],
  '/version': ['GET'],
  '/prometheus/metrics': ['GET'],
  '/forms/libreoffice/convert': ['POST'],
  '/convert/office': ['POST'],
  ...Object.fromEntries(Object.keys(GOTENBERG6_ROUTES).map((path) => [path, ['POST']])),
  ...Object.fromEntries(PDF_ENGINE_ROUTES.map((route) => [`/forms/pdfengines/${route}`, ['POST']])),
  ...Object.fromEntries(CHROMIUM_ROUTES.map((route) => [`/forms/chromium/${route}`, ['POST']])),
}

export interface RunningSidecar {
  readonly url: string
  readonly pool: LibreOfficePool
  readonly chromium: ChromiumBrowser
  close(): Promise<void>
}

/** Starts the HTTP server, on its own LibreOffice pool or on `sharedPool` (left running by close()). */
export async function startSidecar(
  options: SidecarOptions,
  sharedPool?: LibreOfficePool,
  sharedChromium?: ChromiumBrowser,
): Promise<RunningSidecar> {
  // Its own pool is made once the port is ours: its temp root is named by the port (swept at start). LibreOffice
  // starts here, so the first conversion finds it warm; requests wait for it in the queue meanwhile.
  let pool = sharedPool as LibreOfficePool
  let chromium = sharedChromium as ChromiumBrowser
  const webhookJobs: WebhookJobs = new Set()
  const server: Server = createServer(async (request, response) => {
    const trace = request.headers['gotenberg-trace']?.toString() || randomUUID()
    // On every answer, 401s and errors included, as Gotenberg's trace middleware runs before the others.
    response.setHeader('gotenberg-trace', trace)
    const fullPath = new URL(request.url ?? '/', 'http://sidecar').pathname
    // Served under the root path only (Gotenberg's --api-root-path): anything outside it is unknown.
    const path = fullPath.startsWith(options.rootPath) ? `/${fullPath.slice(options.rootPath.length)}` : ''
    const log = options.log ?? logLine
    if (path !== '/health' || options.healthLogging) {
      response.once('finish', () =>
        log({
          level: 'info',
          message: 'request handled',
          method: request.method,
          path: fullPath,
          status: response.statusCode,
          trace,
          correlation_id: trace,
        }),
      )
    }
    try {
      // Gotenberg's router: an unknown path is 404, a known one asked with another method 405.
      const allowed = ROUTE_METHODS[path]
      const target = GOTENBERG6_ROUTES[path] ?? path
      const isDisabled =
        (options.chromium.disabled && target.startsWith('/forms/chromium/')) ||
        (options.pdfEnginesDisabled && target.startsWith('/forms/pdfengines/'))
      if (!allowed || isDisabled) return send(response, 404, 'Not Found')
      if (!allowed.includes(request.method ?? ''))
        return send(response, 405, 'Method Not Allowed', { allow: allowed.join(', ') })
      // Health stays open, as in Gotenberg: a load balancer's check carries no credentials.
      if (path === '/health') {
        const timestamp = new Date().toISOString()
        const entry = ({ up, reason }: { up: boolean; reason?: string }) => ({
          status: up ? 'up' : 'down',
          timestamp,
          ...(reason ? { error: reason } : {}),
        })
        const details = {
          ...(options.chromium.disabled ? {} : { chromium: entry(chromium.health) }),
          libreoffice: entry(pool.health),
        }
        const up = Object.values(details).every((detail) => detail.status === 'up')
        send(
          response,
          up ? 200 : 503,
          request.method === 'HEAD' ? '' : JSON.stringify({ status: up ? 'up' : 'down', details }),
          { 'content-type': 'application/json; charset=utf-8' },
        )
        return
      }
      if (!authorized(request, options))
        return send(response, 401, 'Unauthorized', { 'www-authenticate': 'Basic realm="gotenberg"' })
      if (path === '/version') return send(response, 200, GOTENBERG_VERSION)
      if (path === '/') return send(response, 200, ROOT_PAGE, { 'content-type': 'text/html; charset=UTF-8' })
      if (path === '/favicon.ico') return void response.writeHead(204).end()
      if (path === '/prometheus/metrics')
        return send(response, 200, metricsText(pool, chromium), {
          'content-type': 'text/plain; version=0.0.4; charset=utf-8; escaping=underscores',
        })
      const outputName = request.headers['gotenberg-output-filename']?.toString() ?? ''
      const context = { pool, timeoutMs: options.timeoutMs, download: options.download, trace, outputName, log }
      const route = GOTENBERG6_ROUTES[path] ?? path
      // A Gotenberg 6 path's form is read in Gotenberg 8's names first.
      const named = (form: FormData) =>
        route === path ? context : { ...context, outputName: fromGotenberg6(form, request.headers) || outputName }
      let produce: Produce
      if (route.startsWith('/forms/pdfengines/'))
        produce = (form) =>
          runPdfEngineRoute(route.slice('/forms/pdfengines/'.length) as PdfEngineRoute, form, named(form))
      else if (route.startsWith('/forms/chromium/'))
        produce = (form) =>
          runChromiumRoute(route.slice('/forms/chromium/'.length) as ChromiumRoute, form, {
            ...named(form),
            browser: chromium,
          })
      // The two LibreOffice paths: Gotenberg 8's, and Gotenberg 6's for older clients.
      else produce = (form) => convertForm(form, request.headers, pool, options, trace)
      await formRoute(request, response, options, trace, webhookJobs, produce)
    } catch (error) {
      const [status, message] = errorAnswer(error)
      if (status === 500) console.error(JSON.stringify({ level: 'error', trace, error: String(error) }))
      if (!response.headersSent) send(response, status, message)
      request.resume()
    }
  })
  server.requestTimeout = options.timeoutMs + 30_000
  // Longer than clients' pooled-connection idle time: Node's 5 s default closes sockets a client is about to reuse.
  server.keepAliveTimeout = 65_000
  server.headersTimeout = 66_000
  await new Promise<void>((resolve) => server.listen(options.port, options.host, resolve))
  const address = server.address()
  const port = typeof address === 'object' && address ? address.port : options.port
  pool ??= new LibreOfficePool({ ...options, port })
  // Its profile (unsandboxed) lives beside LibreOffice's files, under the port's temp root, swept the same way.
  chromium ??= new ChromiumBrowser({
    program: options.chromium.program,
    sandbox: options.sandbox,
    timeoutMs: options.timeoutMs,
    concurrency: options.chromium.concurrency,
    queueSize: options.queueSize,
    policy: options.chromium.policy,
    maxResourceBytes: options.download.maxBytes,
    profile: `${sidecarRoot(port)}-chromium`,
    log: options.log ?? logLine,
  })
  // Started with the server, as LibreOffice is, so the first page finds it warm and /health tells whether it runs.
  // Awaited like LibreOffice's first start: /health answers up once the sidecar is started (Gotenberg's readiness).
  if (!options.chromium.disabled && !sharedChromium)
    await chromium
      .start()
      .catch((error) => console.error(JSON.stringify({ level: 'error', message: (error as Error).message })))
  await pool.ready()
  return {
    url: `http://${options.host}:${port}`,
    pool,
    chromium,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()))
      // Webhook requests already answered 204 are finished, not dropped: their conversion and delivery end first.
      await Promise.allSettled([...webhookJobs])
      if (!sharedPool) await pool.close()
      if (!sharedChromium) await chromium.close()
    },
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const options = optionsFromEnv()
  const sidecar = await startSidecar(options)
  console.log(
    `edgefloor sidecar (Gotenberg ${GOTENBERG_VERSION} API, ${options.processes} LibreOffice worker(s)) on ${sidecar.url}`,
  )
  const stop = () => sidecar.close().then(() => process.exit(0))
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)
}
