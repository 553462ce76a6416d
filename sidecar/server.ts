// The Edgefloor sidecar: a Gotenberg-8-compatible HTTP API over real LibreOffice, for this machine (no Docker)
// and for self-hosters without Docker. Routes: POST /forms/libreoffice/convert (and Gotenberg 6's
// /convert/office alias), GET /health, GET /version. Run: node sidecar/server.ts (SIDECAR_HOST, SIDECAR_PORT).
import { spawn } from 'node:child_process'
import { randomUUID, timingSafeEqual } from 'node:crypto'
import { readFile, rm, writeFile } from 'node:fs/promises'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { DocumentRefusedError, inspectDocument } from './inspect.ts'
import { ConversionFailedError, ConversionTimeoutError, LibreOfficePool, OfficeUnavailableError, QueueFullError, type PdfOptions } from './libreoffice.ts'
import type { Sandbox } from './office-process.ts'
import { zip } from './zip.ts'

/** The Gotenberg release whose API we serve: GET /version answers it, and docker-compose.sidecar.yml pins its image. */
export const GOTENBERG_VERSION = '8.34.0'

/** What LibreOffice reads here (Gotenberg's list, trimmed to the formats the Debian nogui packages open). */
export const EXTENSIONS = [
  'doc', 'docx', 'docm', 'dot', 'dotx', 'odt', 'ott', 'rtf', 'txt', 'wpd', 'fodt', 'html', 'htm', 'xml',
  'xls', 'xlsx', 'xlsm', 'xlt', 'xltx', 'ods', 'ots', 'csv', 'fods', 'tsv',
  'ppt', 'pptx', 'pps', 'ppsx', 'pot', 'potx', 'odp', 'otp', 'fodp', 'odg',
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
}

export function optionsFromEnv(env: Readonly<Record<string, string | undefined>> = process.env): SidecarOptions {
  const number = (name: string, fallback: number) => {
    const value = env[name]
    if (value === undefined || value === '') return fallback
    const parsed = Number(value)
    if (!Number.isInteger(parsed) || parsed < 0) throw new Error(`${name} must be a whole number, got "${value}"`)
    return parsed
  }
  return {
    host: env.SIDECAR_HOST || '127.0.0.1',
    port: number('SIDECAR_PORT', 3000),
    processes: Math.max(1, number('SIDECAR_PROCESSES', 1)),
    queueSize: number('SIDECAR_QUEUE', 16),
    timeoutMs: number('SIDECAR_TIMEOUT_MS', 120_000),
    maxBytes: number('SIDECAR_MAX_BYTES', 100 * 1024 * 1024),
    maxExpandedBytes: number('SIDECAR_MAX_EXPANDED_BYTES', 512 * 1024 * 1024),
    restartAfter: Math.max(1, number('SIDECAR_RESTART_AFTER', 10)),
    username: env.SIDECAR_USERNAME || undefined,
    password: env.SIDECAR_PASSWORD || undefined,
    soffice: env.SOFFICE || 'soffice',
    python: env.SIDECAR_PYTHON || '/usr/bin/python3',
    sandbox: sandbox(env.SIDECAR_SANDBOX),
  }
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

function send(response: ServerResponse, status: number, body: string | Uint8Array, headers: Record<string, string> = {}): void {
  const type = typeof body === 'string' ? { 'content-type': 'text/plain; charset=utf-8' } : {}
  response.writeHead(status, { ...type, ...headers })
  response.end(body)
}

function authorized(request: IncomingMessage, options: SidecarOptions): boolean {
  if (!options.username) return true
  const expected = Buffer.from(`Basic ${Buffer.from(`${options.username}:${options.password ?? ''}`).toString('base64')}`)
  const given = Buffer.from(request.headers.authorization ?? '')
  return given.length === expected.length && timingSafeEqual(given, expected)
}

const isConvertible = (name: string) => name.includes('.') && EXTENSIONS.includes(name.split('.').pop()!.toLowerCase())

const flag = (value: string | File | null) => typeof value === 'string' && ['true', '1'].includes(value.toLowerCase())

function safeName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? 'document'
  return base.replace(/[^\p{L}\p{N} ._()-]/gu, '_').slice(0, 200) || 'document'
}

/** Refuses what Gotenberg refuses before reading a byte: a body that is not multipart, or has no boundary. */
function checkMultipart(contentType: string): void {
  if (!/^multipart\/form-data\s*(;|$)/i.test(contentType)) throw new HttpError(415, "Invalid 'Content-Type' header value: want 'multipart/form-data'")
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
    if (error instanceof HttpError || (error as { cause?: unknown })?.cause instanceof HttpError) throw error instanceof HttpError ? error : ((error as { cause: HttpError }).cause)
    throw new HttpError(400, "Malformed body: it does not match the 'Content-Type' header boundaries")
  }
}

async function mergePdfs(pool: LibreOfficePool, pdfs: Uint8Array[], timeoutMs: number): Promise<Uint8Array> {
  const dir = await pool.scratch('merge-')
  try {
    const inputs = await Promise.all(pdfs.map(async (pdf, i) => {
      const path = join(dir, `${String(i).padStart(4, '0')}.pdf`)
      await writeFile(path, pdf)
      return path
    }))
    const output = join(dir, 'merged.pdf')
    await new Promise<void>((resolve, reject) => {
      const child = spawn('pdfunite', [...inputs, output], { stdio: 'ignore' })
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
      child.on('error', reject)
      child.on('close', (code) => {
        clearTimeout(timer)
        code === 0 ? resolve() : reject(new ConversionFailedError(`merging the PDFs failed (pdfunite exit ${code})`))
      })
    })
    return new Uint8Array(await readFile(output))
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

function pdfOptions(form: FormData): PdfOptions {
  const pdfa = form.get('pdfa')
  if (typeof pdfa === 'string' && pdfa && !['PDF/A-1b', 'PDF/A-2b', 'PDF/A-3b'].includes(pdfa)) {
    throw new HttpError(400, `Invalid form data: form field 'pdfa' is invalid (got '${pdfa}', resulting to wrong value, expected either 'PDF/A-1b', 'PDF/A-2b' or 'PDF/A-3b')`)
  }
  // Gotenberg 6 (gotenberg-js-client) names the page ranges `pageRanges`.
  const ranges = form.get('nativePageRanges') ?? form.get('pageRanges')
  if (typeof ranges === 'string' && ranges && !/^\s*\d+(\s*-\s*\d+)?(\s*,\s*\d+(\s*-\s*\d+)?)*\s*$/.test(ranges)) {
    throw new HttpError(400, `Invalid form data: form field 'nativePageRanges' is invalid (got '${ranges}')`)
  }
  const password = form.get('password')
  return {
    nativePageRanges: typeof ranges === 'string' && ranges ? ranges.replace(/\s+/g, '') : undefined,
    pdfa: (typeof pdfa === 'string' && pdfa ? pdfa : undefined) as PdfOptions['pdfa'],
    pdfua: flag(form.get('pdfua')),
    landscape: flag(form.get('landscape')),
    password: typeof password === 'string' && password ? password : undefined,
  }
}

/** Inspects one document (zip bomb, encryption), converts it, and words a failure for the client. */
async function convertOne(pool: LibreOfficePool, options: SidecarOptions, name: string, bytes: Uint8Array, settings: PdfOptions, trace: string): Promise<Uint8Array> {
  const facts = await inspectDocument(name, bytes, options.maxExpandedBytes).catch((error) => {
    throw error instanceof DocumentRefusedError ? new HttpError(400, `Bad Request: ${error.message}`) : error
  })
  try {
    return await pool.convert(name, bytes, settings, trace)
  } catch (error) {
    if (error instanceof ConversionFailedError && facts.encrypted) {
      throw new HttpError(400, settings.password ? 'Bad Request: the password does not open the document' : 'Bad Request: the document is password-protected: give its password in the form field "password"')
    }
    throw error
  }
}

async function convertRoute(request: IncomingMessage, response: ServerResponse, pool: LibreOfficePool, options: SidecarOptions, trace: string): Promise<void> {
  const form = await readForm(request, options)
  // Like Gotenberg, files LibreOffice cannot read are left out; the request fails only when none is left.
  const files = [...form.values()].filter((value): value is File => typeof value !== 'string' && isConvertible(value.name))
  if (files.length === 0) throw new HttpError(400, `Invalid form data: no form file found for extensions: ${JSON.stringify(EXTENSIONS)}`)
  const settings = pdfOptions(form)
  const names = files.map((file, i) => `${files.length > 1 ? `${i}_` : ''}${safeName(file.name)}`)
  // Settled, not Promise.all: a failure must not answer while the other documents still convert in their folders.
  const results = await Promise.allSettled(files.map(async (file, i) => convertOne(pool, options, names[i]!, new Uint8Array(await file.arrayBuffer()), settings, trace)))
  const failure = results.find((result) => result.status === 'rejected')
  if (failure) throw failure.reason
  const pdfs = results.map((result) => (result as PromiseFulfilledResult<Uint8Array>).value)
  const gotenberg6Name = form.get('resultFilename')
  const outputName = safeName(request.headers['gotenberg-output-filename']?.toString() || (typeof gotenberg6Name === 'string' && gotenberg6Name.replace(/\.(pdf|zip)$/i, '')) || randomUUID())
  if (pdfs.length === 1 || flag(form.get('merge'))) {
    const pdf = pdfs.length === 1 ? pdfs[0]! : await mergePdfs(pool, pdfs, options.timeoutMs)
    send(response, 200, pdf, { 'content-type': 'application/pdf', 'content-disposition': `attachment; filename="${outputName}.pdf"` })
    return
  }
  const archive = zip(pdfs.map((pdf, i) => ({ name: `${names[i]!.replace(/^\d+_/, '').replace(/\.[^.]*$/, '')}.pdf`, bytes: pdf })))
  send(response, 200, archive, { 'content-type': 'application/zip', 'content-disposition': `attachment; filename="${outputName}.zip"` })
}

const ROUTE_METHODS: Readonly<Record<string, string>> = { '/health': 'GET', '/version': 'GET', '/forms/libreoffice/convert': 'POST', '/convert/office': 'POST' }

export interface RunningSidecar {
  readonly url: string
  readonly pool: LibreOfficePool
  close(): Promise<void>
}

export async function startSidecar(options: SidecarOptions): Promise<RunningSidecar> {
  // The pool is made once the port is ours: its temp root is named by the port (swept at start), and LibreOffice
  // starts now, so the first conversion finds it warm. Requests wait for it in the queue meanwhile.
  let pool = undefined as unknown as LibreOfficePool
  const server: Server = createServer(async (request, response) => {
    const trace = request.headers['gotenberg-trace']?.toString() || randomUUID()
    // On every answer, 401s and errors included, as Gotenberg's trace middleware runs before the others.
    response.setHeader('gotenberg-trace', trace)
    const path = new URL(request.url ?? '/', 'http://sidecar').pathname
    try {
      // Gotenberg's router: an unknown path is 404, a known one asked with another method 405.
      const allowed = ROUTE_METHODS[path]
      if (!allowed) return send(response, 404, 'Not Found')
      if (request.method !== allowed) return send(response, 405, 'Method Not Allowed', { allow: allowed })
      if (path === '/health') {
        const { up, reason } = pool.health
        const libreoffice = { status: up ? 'up' : 'down', timestamp: new Date().toISOString(), ...(reason ? { error: reason } : {}) }
        send(response, up ? 200 : 503, JSON.stringify({ status: libreoffice.status, details: { libreoffice } }), { 'content-type': 'application/json' })
        return
      }
      if (path === '/version') return send(response, 200, GOTENBERG_VERSION)
      // The two conversion paths: Gotenberg 8's, and Gotenberg 6's for older clients.
      if (!authorized(request, options)) return send(response, 401, 'Unauthorized', { 'www-authenticate': 'Basic realm="gotenberg"' })
      await convertRoute(request, response, pool, options, trace)
    } catch (error) {
      const [status, message] =
        error instanceof HttpError
          ? [error.status, error.message]
          : error instanceof QueueFullError
            ? [429, 'Too Many Requests']
            : error instanceof ConversionTimeoutError || error instanceof OfficeUnavailableError
              ? [503, `Service Unavailable: ${error.message}`]
              : error instanceof ConversionFailedError
                ? [400, `Bad Request: ${error.message}`]
                : [500, 'Internal Server Error']
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
  pool = new LibreOfficePool({ ...options, port })
  await pool.ready()
  return {
    url: `http://${options.host}:${port}`,
    pool,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await pool.close()
    },
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const options = optionsFromEnv()
  const sidecar = await startSidecar(options)
  console.log(`edgefloor sidecar (Gotenberg ${GOTENBERG_VERSION} API, ${options.processes} LibreOffice worker(s)) on ${sidecar.url}`)
  const stop = () => sidecar.close().then(() => process.exit(0))
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)
}
