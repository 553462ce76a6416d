// tus-js-client (the tus project's own client, from npm) in Node against the real Worker under `wrangler dev
// --local`: chunk sizes R2 would refuse as parts, an upload interrupted mid-request and resumed from HEAD's offset,
// 401, 413 (size limit and quota) and another user's upload URL. Nothing here is a hand-made tus request.
import { beforeAll, describe, expect, inject, it } from 'vitest'
import { Readable } from 'node:stream'
import {
  DefaultHttpStack,
  type DetailedError,
  type HttpResponse,
  type HttpStack,
  Upload,
  type UploadOptions,
} from 'tus-js-client'
import { START_MS, uniqueEmail, waitForServers } from './dev-worker.ts'

const MiB = 1024 * 1024
const WAIT_MS = 240_000
/** The run's Worker (test/setup/dev-worker.ts), with a 40 MiB resumable limit and a 30 MiB quota, so both 413s are
 * reachable with small files. */
const worker = { url: inject('devWorkerUrl') }

beforeAll(() => waitForServers(worker.url), START_MS)

async function signIn(): Promise<string> {
  const json = { 'content-type': 'application/json' }
  const email = uniqueEmail('tus')
  const credentials = JSON.stringify({ email, password: 'a long enough password' })
  await fetch(`${worker.url}/auth/register`, { method: 'POST', headers: json, body: credentials })
  const login = await fetch(`${worker.url}/auth/login`, { method: 'POST', headers: json, body: credentials })
  return ((await login.json()) as { token: string }).token
}

function bytesOf(size: number): Buffer {
  const bytes = Buffer.alloc(size)
  for (let i = 0; i < size; i++) bytes[i] = (i * 131 + (i >> 11)) & 0xff
  return bytes
}

const sha256 = async (bytes: Uint8Array) => Buffer.from(await crypto.subtle.digest('SHA-256', bytes)).toString('hex')

interface Finished {
  fileId: string
  url: string
  progress: number[]
}

/** Runs a tus-js-client upload to the end: its file id (X-Edgefloor-File-Id of the last response), URL and progress. */
function runUpload(bytes: Buffer, options: UploadOptions, onStart?: (upload: Upload) => void): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const progress: number[] = []
    const upload: Upload = new Upload(bytes, {
      endpoint: `${worker.url}/files/tus`,
      retryDelays: [],
      metadata: { filename: 'data.bin', filetype: 'application/octet-stream' },
      ...options,
      onProgress: (sent) => progress.push(sent),
      onError: reject,
      onSuccess: ({ lastResponse }) =>
        resolve({ fileId: lastResponse.getHeader('x-edgefloor-file-id') ?? '', url: upload.url ?? '', progress }),
    })
    onStart?.(upload)
    upload.start()
  })
}

/**
 * tus-js-client's own Node HTTP stack, except that the first PATCH declares its whole body (Content-Length) but
 * sends only its first `cut` bytes and then nothing more: an interruption mid-request that no timing can undo.
 */
function stallingAfter(cut: number): HttpStack {
  const stack = new DefaultHttpStack({})
  let stalled = false
  return {
    getName: () => 'StallingHttpStack',
    createRequest(method, url) {
      const request = stack.createRequest(method, url)
      if (method !== 'PATCH' || stalled) return request
      stalled = true
      const send = request.send.bind(request)
      request.send = (body: Uint8Array) => {
        request.setHeader('Content-Length', String(body.length))
        const head = new Readable({ read() {} })
        head.push(Buffer.from(body.subarray(0, cut)))
        return send(head)
      }
      return request
    },
  }
}

/** The upload's failure: tus-js-client's DetailedError and the response status it carries. */
async function failure(bytes: Buffer, options: UploadOptions): Promise<{ status: number | undefined; body: string }> {
  const error = (await runUpload(bytes, options).then(
    () => undefined,
    (thrown: unknown) => thrown,
  )) as DetailedError | undefined
  expect(error, 'the upload should have failed').toBeDefined()
  const response: HttpResponse | undefined = error?.originalResponse ?? undefined
  return { status: response?.getStatus(), body: response?.getBody() ?? '' }
}

async function record(token: string, fileId: string) {
  const response = await fetch(`${worker.url}/files/${fileId}`, { headers: { authorization: `Bearer ${token}` } })
  return (await response.json()) as { name: string; size: number; hash: string; content_type: string }
}

async function download(token: string, fileId: string) {
  return new Uint8Array(
    await (
      await fetch(`${worker.url}/files/${fileId}/download`, { headers: { authorization: `Bearer ${token}` } })
    ).arrayBuffer(),
  )
}

async function headOffset(token: string, url: string): Promise<{ status: number; offset: number }> {
  const res = await fetch(url, {
    method: 'HEAD',
    headers: { authorization: `Bearer ${token}`, 'tus-resumable': '1.0.0' },
  })
  return { status: res.status, offset: Number(res.headers.get('upload-offset')) }
}

describe('tus-js-client against the Worker', { timeout: WAIT_MS }, () => {
  it('uploads in chunks R2 would refuse as parts (5 MiB + 7 bytes), with progress, into the same record as POST /files', async () => {
    const token = await signIn()
    const bytes = bytesOf(21 * MiB + 3)
    bytes.write('%PDF-1.7\n', 0)
    const done = await runUpload(bytes, {
      chunkSize: 5 * MiB + 7,
      headers: { authorization: `Bearer ${token}` },
      metadata: { filename: 'manual.pdf', filetype: 'application/pdf' },
    })
    expect(done.fileId).toMatch(/^[0-9a-f]{24}$/)
    expect(done.progress.at(-1)).toBe(bytes.length)
    expect(await record(token, done.fileId)).toMatchObject({
      name: 'manual.pdf',
      size: bytes.length,
      content_type: 'application/pdf',
      hash: await sha256(bytes),
    })
    expect(await sha256(await download(token, done.fileId))).toBe(await sha256(bytes))
  })

  it('an upload interrupted in the middle of a request resumes from the offset HEAD answers, and the file is whole', async () => {
    const token = await signIn()
    const bytes = bytesOf(24 * MiB + 11)
    const headers = { authorization: `Bearer ${token}` }
    // One PATCH for everything (chunkSize Infinity) that sends only its first 10 MiB and then stalls, so the Worker
    // can never have the rest however fast or slow the machine is; the client aborts it once those 10 MiB are out.
    const cut = 10 * MiB
    let url = ''
    const interrupted = new Promise<void>((resolve, reject) => {
      const upload = new Upload(bytes, {
        endpoint: `${worker.url}/files/tus`,
        headers,
        retryDelays: [],
        metadata: { filename: 'resumed.bin' },
        httpStack: stallingAfter(cut),
        onProgress: (sent) => {
          if (sent < cut || url) return
          url = upload.url ?? ''
          upload.abort().then(resolve, reject)
        },
        onError: reject,
        onSuccess: () => reject(new Error('the upload finished before it was interrupted')),
      })
      upload.start()
    })
    await interrupted
    expect(url).toMatch(/\/files\/tus\/[0-9a-f]{24}$/)
    const before = await headOffset(token, url)
    expect(before.status).toBe(200)
    expect(before.offset).toBeLessThanOrEqual(cut)
    // A new client resumes the same upload URL: tus-js-client asks HEAD and sends the rest from that offset.
    const done = await runUpload(bytes, { uploadUrl: url, headers, chunkSize: 7 * MiB + 1 })
    expect(done.url).toBe(url)
    expect(done.progress[0]).toBeGreaterThanOrEqual(before.offset)
    expect(await record(token, done.fileId)).toMatchObject({
      name: 'resumed.bin',
      size: bytes.length,
      hash: await sha256(bytes),
    })
  })

  it('without a token: 401', async () => {
    expect((await failure(bytesOf(1000), {})).status).toBe(401)
  })

  it('over FILES_MAX_RESUMABLE_BYTES (Tus-Max-Size) or the quota: 413 at creation', async () => {
    const token = await signIn()
    const headers = { authorization: `Bearer ${token}` }
    const tooLarge = await failure(bytesOf(41 * MiB), { headers })
    expect(tooLarge.status).toBe(413)
    expect(JSON.parse(tooLarge.body)).toMatchObject({ code: 'FILE_TOO_LARGE' })
    const overQuota = await failure(bytesOf(31 * MiB), { headers })
    expect(overQuota.status).toBe(413)
    expect(JSON.parse(overQuota.body)).toMatchObject({ code: 'QUOTA_EXCEEDED' })
  })

  it("another user's upload URL is 404 (resuming it fails, nothing of it changes)", async () => {
    const alice = await signIn()
    const bob = await signIn()
    const bytes = bytesOf(6 * MiB)
    let url = ''
    await new Promise<void>((resolve, reject) => {
      const upload = new Upload(bytes, {
        endpoint: `${worker.url}/files/tus`,
        headers: { authorization: `Bearer ${alice}` },
        retryDelays: [],
        chunkSize: 2 * MiB,
        onChunkComplete: () => {
          if (url) return
          url = upload.url ?? ''
          upload.abort().then(resolve, reject)
        },
        onError: reject,
      })
      upload.start()
    })
    // Bob's client resumes Alice's URL with his own token, and no endpoint to fall back to.
    const stolen = await failure(bytes, {
      endpoint: undefined,
      uploadUrl: url,
      headers: { authorization: `Bearer ${bob}` },
    })
    expect(stolen.status).toBe(404)
    expect(await headOffset(bob, url)).toMatchObject({ status: 404 })
    expect(await headOffset(alice, url)).toEqual({ status: 200, offset: 2 * MiB })
  })
})
