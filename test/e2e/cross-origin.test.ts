// A browser app on another origin, as a new user builds one: a page served from its own server (here
// http://localhost:<port>, the Worker being http://127.0.0.1:<port>) signs up and in with fetch, uploads with Uppy
// and @uppy/tus, converts, follows the job with a plain EventSource on its events_url, and downloads the result by
// its signed URL. Every call is cross-origin, so Chromium sends the preflights and enforces the CORS answers (Fetch
// standard: a response without a matching Access-Control-Allow-Origin is a network error to the script, and a header
// not in Access-Control-Expose-Headers reads as null). Uppy is the bundle the console uses (public/static/uppy.js).
import { readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { join } from 'node:path'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { freePort, root } from '../../bench/wrangler-dev.ts'
import { launchChromium, openPage } from './chromium.ts'
import { START_MS, uniqueEmail, waitForServers } from './dev-worker.ts'

const WAIT_MS = 120_000
const worker = { url: inject('devWorkerUrl') }
let browser: Browser
let appServer: Server
let appOrigin: string

/** The app's page: Uppy and its tus uploader, from the app's own server. */
const PAGE = `<!doctype html><meta charset="utf-8"><title>an app elsewhere</title>
<script type="module">import { Uppy, Tus } from '/uppy.js'; Object.assign(globalThis, { Uppy, Tus, isReady: true })</script>`

beforeAll(async () => {
  const port = await freePort()
  appOrigin = `http://localhost:${port}`
  const uppy = readFileSync(join(root, 'public', 'static', 'uppy.js'))
  appServer = createServer((request, response) => {
    if (request.url === '/uppy.js') return response.writeHead(200, { 'content-type': 'text/javascript' }).end(uppy)
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE)
  })
  await new Promise<void>((resolve) => appServer.listen(port, '127.0.0.1', resolve))
  ;[browser] = await Promise.all([launchChromium(), waitForServers(worker.url)])
}, START_MS)

afterAll(async () => {
  await browser?.close()
  await new Promise((resolve) => appServer?.close(resolve))
})

interface Outcome {
  pageOrigin: string
  registered: number
  token: string
  uploadUrl: string
  fileId: string
  jobStatus: number
  eventStatuses: string[]
  png: { status: number; type: string | null; etag: string | null; signature: number[] }
  exposedLocation: string | null
}

describe('a browser app on another origin (Chromium)', () => {
  it('signs in, uploads with Uppy (@uppy/tus), converts, follows the job with EventSource and downloads', async () => {
    const { page, errors } = await openPage(browser, `${appOrigin}/`)
    await page.waitForFunction(() => 'isReady' in globalThis)
    const account = { email: uniqueEmail('elsewhere'), password: 'a long enough password' }
    const outcome: Outcome = await page.evaluate(
      async ({ api, account, waitMs }) => {
        const json = async (path: string, init: RequestInit = {}, token?: string) => {
          const headers = new Headers(init.headers)
          headers.set('content-type', 'application/json')
          if (token) headers.set('authorization', `Bearer ${token}`)
          const response = await fetch(`${api}${path}`, { ...init, headers })
          return {
            status: response.status,
            headers: response.headers,
            body: (await response.json()) as Record<string, any>,
          }
        }
        const registered = await json('/auth/register', { method: 'POST', body: JSON.stringify(account) })
        const login = await json('/auth/login', { method: 'POST', body: JSON.stringify(account) })
        const token = login.body.token as string

        type UppyLike = {
          use(plugin: unknown, options: object): UppyLike
          addFile(file: object): string
          upload(): Promise<{ successful?: Array<{ uploadURL?: string }>; failed?: Array<{ error?: string }> }>
        }
        const scope = globalThis as unknown as { Uppy: new (options: object) => UppyLike; Tus: unknown }
        const uppy = new scope.Uppy({ autoProceed: false }).use(scope.Tus, {
          endpoint: `${api}/files/tus`,
          headers: { authorization: `Bearer ${token}` },
          retryDelays: [],
        })
        uppy.addFile({
          name: 'note.txt',
          type: 'text/plain',
          data: new Blob(['Hello from another origin.\nA second line.\n'], { type: 'text/plain' }),
        })
        const result = await uppy.upload()
        const uploadUrl =
          result.successful?.[0]?.uploadURL ??
          `failed: ${JSON.stringify(result.failed?.map((file) => String(file.error)))}`
        // The tus upload's JSON view names the file it became.
        const upload = (await (await fetch(uploadUrl, { headers: { authorization: `Bearer ${token}` } })).json()) as {
          file_id: string
        }
        const fileId = upload.file_id

        const job = await json(
          `/files/${fileId}/convert`,
          { method: 'POST', headers: { prefer: 'respond-async' }, body: JSON.stringify({ to: '.png' }) },
          token,
        )
        // EventSource takes a URL and nothing else: the signed events_url is the only way in.
        const eventStatuses: string[] = []
        const finished = await new Promise<{ status: string; files: Array<{ url: string; extension: string }> }>(
          (resolve, reject) => {
            const source = new EventSource(job.body.events_url)
            const timer = setTimeout(() => {
              source.close()
              reject(new Error(`no finished job in ${waitMs} ms: ${eventStatuses}`))
            }, waitMs)
            source.addEventListener('job', (event) => {
              const view = JSON.parse((event as MessageEvent).data)
              eventStatuses.push(view.status)
              if (view.status === 'done' || view.status === 'failed') {
                clearTimeout(timer)
                source.close()
                resolve(view)
              }
            })
          },
        )
        const pngFile = finished.files.find((file) => file.extension === '.png')
        const png = await fetch(pngFile?.url ?? `${api}/missing`)
        const bytes = new Uint8Array(await png.arrayBuffer())
        return {
          pageOrigin: (globalThis as unknown as { location: { origin: string } }).location.origin,
          registered: registered.status,
          token,
          uploadUrl,
          fileId,
          jobStatus: job.status,
          eventStatuses,
          png: {
            status: png.status,
            type: png.headers.get('content-type'),
            etag: png.headers.get('etag'),
            signature: [...bytes.slice(0, 8)],
          },
          exposedLocation: job.headers.get('location'),
        }
      },
      { api: worker.url, account, waitMs: WAIT_MS },
    )

    expect(outcome.pageOrigin).toBe(appOrigin)
    expect(new URL(worker.url).origin).not.toBe(appOrigin)
    expect(outcome.registered).toBe(201)
    expect(outcome.uploadUrl).toMatch(new RegExp(`^${worker.url}/files/tus/[0-9a-f]{24}$`))
    expect(outcome.fileId).toMatch(/^[0-9a-f]{24}$/)
    expect(outcome.jobStatus).toBe(202)
    // Location is exposed (a header outside the safelist reads as null otherwise).
    expect(outcome.exposedLocation).toMatch(/^\/jobs\/[0-9a-f]{24}$/)
    expect(outcome.eventStatuses.at(-1)).toBe('done')
    expect(outcome.png).toEqual({
      status: 200,
      type: 'image/png',
      etag: expect.stringMatching(/^"[0-9a-f]{64}"$/),
      signature: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a],
    })
    // The uploaded bytes are the record's (read from Node: no browser involved).
    const record = await (
      await fetch(`${worker.url}/files/${outcome.fileId}`, { headers: { authorization: `Bearer ${outcome.token}` } })
    ).json()
    expect(record).toMatchObject({ name: 'note.txt', size: 'Hello from another origin.\nA second line.\n'.length })
    // No "blocked by CORS policy" or any other error in the page.
    expect(errors).toEqual([])
    await page.close()
  })
})
