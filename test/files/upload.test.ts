// POST /files: streamed multipart uploads, headers, sniffing, limits, and nothing left behind on failure.
import { env } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { BASE, call, callJson, callWithSettings } from '../support/api'
import { signUp, type TestUser } from '../support/accounts'
import { sha256Hex } from '../support/bytes'
import { downloadBytes, multipartBody, PDF_HEAD, PNG_HEAD, uploaded, uploadFile } from '../support/files'

async function storedState(user: TestUser) {
  const objects = await env.BUCKET.list({ prefix: `u/${user.id}/` })
  const rows = await env.DB.prepare('SELECT count(*) AS n FROM files WHERE user_id = ?')
    .bind(user.id)
    .first<number>('n')
  return { objects: objects.objects.length, rows }
}

describe('POST /files', () => {
  it('stores the file and answers the record', async () => {
    const user = await signUp()
    const bytes = new TextEncoder().encode('hello, edge\n')
    const res = await uploadFile(user, 'Notes ü.TXT', bytes, {
      'x-edgefloor-modified': '1700000000000',
      'x-edgefloor-size': String(bytes.length),
    })
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({
      name: 'Notes ü.TXT',
      extension: '.txt',
      content_type: 'text/plain',
      size: bytes.length,
      hash: await sha256Hex(bytes),
      parent_file: null,
      file_modified_at: '2023-11-14T22:13:20.000Z',
    })
    expect(res.body.url).toMatch(
      new RegExp(`^http://edgefloor\\.test/files/${res.body._id}/download\\?token=\\d+\\.[\\w-]{43}$`),
    )
    expect(Object.keys(res.body)).not.toContain('user_id')
    expect(Object.keys(res.body)).not.toContain('key')
    expect(await storedState(user)).toEqual({ objects: 1, rows: 1 })
  })

  it('trusts the bytes over the declared type and name', async () => {
    const user = await signUp()
    const res = await uploadFile(user, 'photo.png', PDF_HEAD, { 'x-edgefloor-type': 'image/png' })
    expect(res.body).toMatchObject({ extension: '.png', content_type: 'application/pdf' })
    const png = await uploaded(user, 'image', PNG_HEAD)
    expect(png).toMatchObject({ extension: '', content_type: 'image/png' })
  })

  it('accepts the Basefloor header names and an ISO modified date', async () => {
    const user = await signUp()
    const res = await callJson('POST', '/files', {
      token: user.token,
      body: multipartBody('x.bin', 'abc'),
      headers: {
        'x-basefloor-name': encodeURIComponent('Résumé 2024.txt'),
        'x-basefloor-modified': '2024-02-03T04:05:06Z',
      },
    })
    expect(res.body).toMatchObject({ name: 'Résumé 2024.txt', file_modified_at: '2024-02-03T04:05:06.000Z' })
  })

  it('expands @user._id in the prefix and refuses traversal', async () => {
    const user = await signUp()
    const ok = await uploadFile(user, 'a.txt', 'a', { 'x-edgefloor-prefix': '/docs/@user._id/2024/' })
    expect(ok.body.prefix).toBe(`docs/${user.id}/2024`)
    // Basefloor's clients name the caller @req_user._id, in X-Basefloor-Prefix.
    const basefloor = await uploadFile(user, 'b.txt', 'b', { 'x-basefloor-prefix': 'docs/@req_user._id' })
    expect(basefloor.body.prefix).toBe(`docs/${user.id}`)
    for (const prefix of ['../other', 'a/../../b', '..', 'a\\b', 'a/%2e%2e/b', 'x\u0001y']) {
      const res = await uploadFile(user, 'a.txt', 'a', { 'x-edgefloor-prefix': encodeURIComponent(prefix) })
      expect(res.status, prefix).toBe(400)
    }
    expect(await storedState(user)).toEqual({ objects: 2, rows: 2 })
  })

  it.each([
    ['no body', { headers: {} }, 'multipart'],
    [
      'no file field',
      {
        body: (() => {
          const f = new FormData()
          f.append('other', 'x')
          return f
        })(),
      },
      'no file',
    ],
    [
      '"file" as a text field',
      {
        body: (() => {
          const f = new FormData()
          f.append('file', 'not a file')
          return f
        })(),
      },
      'no file',
    ],
    [
      'a multipart body without a boundary',
      { body: 'raw bytes', headers: { 'content-type': 'multipart/form-data' } },
      'multipart',
    ],
    [
      'a bad X-Edgefloor-Size',
      { body: multipartBody('a.txt', 'abc'), headers: { 'x-edgefloor-size': '3 bytes' } },
      'X-Edgefloor-Size',
    ],
  ])('refuses %s with 400', async (_case, options, message) => {
    const user = await signUp()
    const res = await callJson('POST', '/files', { token: user.token, ...options })
    expect(res.status).toBe(400)
    expect(res.body.message).toContain(message)
    expect(await storedState(user)).toEqual({ objects: 0, rows: 0 })
  })

  it.each([
    ['smaller', '10'],
    ['larger', '2'],
  ])('refuses a file %s than its declared size, leaving nothing', async (_case, size) => {
    const user = await signUp()
    const res = await uploadFile(user, 'a.txt', 'abcdef', { 'x-edgefloor-size': size })
    expect(res.status).toBe(400)
    expect(res.body.message).toContain('does not match the declared size')
    expect(await storedState(user)).toEqual({ objects: 0, rows: 0 })
  })

  it('refuses files over FILES_MAX_BYTES (declared or streamed) with 413', async () => {
    const user = await signUp()
    const declared = await callWithSettings({ FILES_MAX_BYTES: '4' }, 'POST', '/files', {
      token: user.token,
      body: multipartBody('a.txt', 'abcdef'),
      headers: { 'x-edgefloor-size': '6' },
    })
    expect(declared.status).toBe(413)
    expect(await declared.json()).toMatchObject({ message: 'the file is larger than 4 bytes', code: 'FILE_TOO_LARGE' })
    const streamed = await callWithSettings({ FILES_MAX_BYTES: '4' }, 'POST', '/files', {
      token: user.token,
      body: multipartBody('a.txt', 'abcdef'),
    })
    expect(streamed.status).toBe(413)
    expect(await streamed.json()).toMatchObject({ message: 'the file is larger than 4 bytes' })
    expect(await storedState(user)).toEqual({ objects: 0, rows: 0 })
  })

  it('refuses with 413 a stream that passes FILES_MAX_BYTES after many chunks, leaving nothing', async () => {
    const user = await signUp()
    const bytes = new Uint8Array(3 * 1024 * 1024).fill(1)
    const res = await callWithSettings({ FILES_MAX_BYTES: String(1024 * 1024) }, 'POST', '/files', {
      token: user.token,
      body: multipartBody('big.bin', bytes),
    })
    expect(res.status).toBe(413)
    expect(await res.json()).toEqual({
      message: `the file is larger than ${1024 * 1024} bytes`,
      code: 'FILE_TOO_LARGE',
      max_bytes: 1024 * 1024,
    })
    expect(await storedState(user)).toEqual({ objects: 0, rows: 0 })
  })

  it('enforces the per-user quota with the numbers', async () => {
    const user = await signUp()
    const first = await callWithSettings({ FILES_QUOTA_BYTES: '10' }, 'POST', '/files', {
      token: user.token,
      body: multipartBody('a.txt', '1234567'),
    })
    expect(first.status).toBe(201)
    const second = await callWithSettings({ FILES_QUOTA_BYTES: '10' }, 'POST', '/files', {
      token: user.token,
      body: multipartBody('b.txt', '1234567'),
    })
    expect(second.status).toBe(413)
    expect(await second.json()).toMatchObject({ code: 'QUOTA_EXCEEDED', used: 7, quota: 10 })
    expect(await storedState(user)).toEqual({ objects: 1, rows: 1 })
  })

  it('leaves nothing behind when the upload breaks off half-way', async () => {
    const user = await signUp()
    const boundary = 'edgefloorboundary'
    const head = new TextEncoder().encode(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\n\r\n`,
    )
    let sent = 0
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === 0) controller.enqueue(head)
        else if (sent < 5) controller.enqueue(new Uint8Array(64 * 1024).fill(sent))
        else controller.error(new Error('connection reset'))
        sent++
      },
    })
    const res = await call('POST', '/files', {
      token: user.token,
      body,
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
    }).catch((error) => error)
    // Either the request fails as the client's stream did, or the Worker answers an error: never a stored file.
    expect(res instanceof Response ? res.status : res).toSatisfy((outcome) =>
      typeof outcome === 'number' ? outcome >= 400 : outcome instanceof Error,
    )
    expect(await storedState(user)).toEqual({ objects: 0, rows: 0 })
  })

  it('streams a 50 MiB upload into storage byte for byte', async () => {
    const user = await signUp()
    const bytes = new Uint8Array(50 * 1024 * 1024)
    for (let i = 0; i < bytes.length; i += 4096) bytes[i] = (i / 4096) & 0xff
    const res = await uploadFile(user, 'big.bin', bytes, { 'x-edgefloor-size': String(bytes.length) })
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({ size: bytes.length, hash: await sha256Hex(bytes) })
    const stored = await env.BUCKET.head((await env.BUCKET.list({ prefix: `u/${user.id}/` })).objects[0]!.key)
    expect(stored!.size).toBe(bytes.length)
  }, 120_000)

  it('stores a file of unknown length in parts', async () => {
    const user = await signUp()
    const bytes = new Uint8Array(9 * 1024 * 1024 + 7).map((_, i) => i % 251)
    const res = await uploadFile(user, 'parts.bin', bytes)
    expect(res).toMatchObject({ status: 201, body: { size: bytes.length, hash: await sha256Hex(bytes) } })
  })
})

/** Objects, records and quota reservations of the user: all three must be empty after a refused upload. */
async function leftBehind(user: TestUser) {
  const reservations = await env.DB.prepare('SELECT count(*) AS n FROM storage_reservations WHERE user_id = ?')
    .bind(user.id)
    .first<number>('n')
  return { ...(await storedState(user)), reservations }
}

const QUOTA = { FILES_QUOTA_BYTES: String(100 * 1024 * 1024) }

/** A body that sends `bytes` in 64 KiB chunks and then breaks off (errors) or simply ends. */
function breakingBody(bytes: Uint8Array, breakOff: boolean): ReadableStream<Uint8Array> {
  let offset = 0
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset < bytes.length) {
        controller.enqueue(bytes.slice(offset, offset + 64 * 1024))
        offset += 64 * 1024
      } else if (breakOff) controller.error(new Error('connection reset'))
      else controller.close()
    },
  })
}

describe('POST /files with the raw body (any Content-Type but multipart: the fast path)', () => {
  it('stores the body as the file: named by X-Edgefloor-Name, typed by its bytes, hashed', async () => {
    const user = await signUp()
    const bytes = new Uint8Array([...PDF_HEAD, ...new Uint8Array(3 * 1024 * 1024 + 5).map((_, i) => i % 253)])
    const res = await callJson('POST', '/files', {
      token: user.token,
      body: bytes,
      headers: {
        'content-type': 'application/octet-stream',
        'x-edgefloor-name': encodeURIComponent('Report ü.pdf'),
        'x-edgefloor-size': String(bytes.length),
      },
    })
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({
      name: 'Report ü.pdf',
      extension: '.pdf',
      content_type: 'application/pdf',
      size: bytes.length,
      hash: await sha256Hex(bytes),
    })
    const stored = await env.BUCKET.get((await env.BUCKET.list({ prefix: `u/${user.id}/` })).objects[0]!.key)
    expect(await sha256Hex(new Uint8Array(await stored!.arrayBuffer()))).toBe(await sha256Hex(bytes))
  })

  it("takes the name from Content-Disposition's filename (RFC 6266), the type from the bytes over the declared one", async () => {
    const user = await signUp()
    const res = await callJson('POST', '/files', {
      token: user.token,
      body: PNG_HEAD,
      headers: {
        'content-type': 'text/plain',
        'content-disposition': `attachment; filename="x.bin"; filename*=UTF-8''%C3%A9t%C3%A9.png`,
      },
    })
    expect(res).toMatchObject({
      status: 201,
      body: { name: 'été.png', content_type: 'image/png', size: PNG_HEAD.length },
    })
    // A JSON body is a file when it is named (unnamed, it is refused: test/files/upload-mistakes.test.ts).
    const json = await callJson('POST', '/files', {
      token: user.token,
      json: { file: 'x' },
      headers: { 'content-disposition': 'attachment; filename="data.json"' },
    })
    expect(json).toMatchObject({ status: 201, body: { name: 'data.json', size: 12 } })
  })

  it('refuses a form-urlencoded body (curl -d mangles files) with 415, storing nothing', async () => {
    const user = await signUp()
    const res = await callJson('POST', '/files', {
      token: user.token,
      body: 'a=1&b=2',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
    expect(res).toMatchObject({ status: 415, body: { code: 'CONTENT_TYPE_UNSUPPORTED' } })
    expect(await leftBehind(user)).toEqual({ objects: 0, rows: 0, reservations: 0 })
  })

  it('refuses with 413 a declared size over FILES_MAX_BYTES before storing anything', async () => {
    const user = await signUp()
    const res = await callWithSettings({ FILES_MAX_BYTES: '1000' }, 'POST', '/files', {
      token: user.token,
      body: new Uint8Array(2000),
      headers: { 'content-type': 'application/octet-stream', 'x-edgefloor-size': '2000' },
    })
    expect(res.status).toBe(413)
    expect(await res.json()).toMatchObject({ code: 'FILE_TOO_LARGE', max_bytes: 1000 })
    expect(await leftBehind(user)).toEqual({ objects: 0, rows: 0, reservations: 0 })
  })

  it.each([
    ['shorter than X-Edgefloor-Size', 4000, { 'x-edgefloor-size': '5000' }],
    ['longer than X-Edgefloor-Size', 6000, { 'x-edgefloor-size': '5000' }],
    [
      'whose Content-Length disagrees with X-Edgefloor-Size',
      5000,
      { 'x-edgefloor-size': '5000', 'content-length': '4000' },
    ],
  ])('refuses a body %s with 400, storing nothing and releasing the quota hold', async (_case, length, headers) => {
    const user = await signUp()
    const res = await callWithSettings(QUOTA, 'POST', '/files', {
      token: user.token,
      body: new Uint8Array(length).fill(7),
      headers: { 'content-type': 'application/octet-stream', ...headers },
    })
    expect(res.status).toBe(400)
    expect(await res.json()).toMatchObject({ code: 'SIZE_MISMATCH' })
    expect(await leftBehind(user)).toEqual({ objects: 0, rows: 0, reservations: 0 })
  })

  it.each([
    ['with a declared size', true],
    ['of unknown size (stored in parts)', false],
  ])(
    'stores nothing and releases the quota hold when the raw body breaks off half-way, %s',
    async (_case, declared) => {
      const user = await signUp()
      const bytes = new Uint8Array(9 * 1024 * 1024).fill(3)
      const res = await callWithSettings(QUOTA, 'POST', '/files', {
        token: user.token,
        body: breakingBody(bytes, true),
        headers: {
          'content-type': 'application/octet-stream',
          ...(declared ? { 'x-edgefloor-size': String(bytes.length + 1) } : {}),
        },
      }).catch((error: unknown) => error)
      // The client's own stream failed: the request fails for it, or the Worker answers a 4xx. Never a stored file.
      if (res instanceof Response) expect(res.status).toBeGreaterThanOrEqual(400)
      else expect(res).toBeInstanceOf(Error)
      expect(await leftBehind(user)).toEqual({ objects: 0, rows: 0, reservations: 0 })
    },
  )

  it('refuses with 400 a multipart body whose file part never ends, storing nothing and releasing the quota hold', async () => {
    const user = await signUp()
    const boundary = 'edgefloorboundary'
    const bytes = new Uint8Array([
      ...new TextEncoder().encode(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\n\r\n`,
      ),
      ...new Uint8Array(9 * 1024 * 1024).fill(5),
    ])
    for (const declared of [{ 'x-edgefloor-size': String(9 * 1024 * 1024) }, {}] as Record<string, string>[]) {
      const res = await callWithSettings(QUOTA, 'POST', '/files', {
        token: user.token,
        body: breakingBody(bytes, false),
        headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, ...declared },
      })
      expect(res.status).toBe(400)
      expect(await res.json()).toMatchObject({
        code: 'BAD_MULTIPART',
        message: 'the upload ended before the file was complete',
      })
    }
    expect(await leftBehind(user)).toEqual({ objects: 0, rows: 0, reservations: 0 })
  })
})

/** Bytes that differ in every block (xorshift32): a block read over too early shows as wrong bytes, not as the same ones. */
function noise(length: number, seed = 0x9e3779b9): Uint8Array {
  const bytes = new Uint8Array(length)
  const words = new Uint32Array(bytes.buffer, 0, length >>> 2)
  let x = seed
  for (let i = 0; i < words.length; i++) {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    words[i] = x >>> 0
  }
  return bytes
}

describe('POST /files reads the body into two reused 512 KiB blocks (worker/files/blocks.ts)', () => {
  it('stores every byte of a 24 MiB body, raw and multipart, with a declared size and without: no block is read over before R2 and the hash have taken it', async () => {
    const user = await signUp()
    const bytes = noise(24 * 1024 * 1024 + 12_345)
    const expected = await sha256Hex(bytes)
    // The path under test: a request body that a BYOB reader can fill (one made in JavaScript falls back to its own chunks).
    new Request(BASE, { method: 'POST', body: bytes }).body!.getReader({ mode: 'byob' }).releaseLock()
    const uploads = {
      'raw body, Content-Length': () =>
        callJson('POST', '/files', {
          token: user.token,
          body: bytes,
          headers: { 'content-type': 'application/octet-stream', 'x-edgefloor-name': 'noise.bin' },
        }),
      'multipart, X-Edgefloor-Size': () =>
        callJson('POST', '/files', {
          token: user.token,
          body: multipartBody('noise.bin', bytes),
          headers: { 'x-edgefloor-size': String(bytes.length) },
        }),
      'multipart, unknown size (R2 parts)': () =>
        callJson('POST', '/files', { token: user.token, body: multipartBody('noise.bin', bytes) }),
    }
    for (const [kind, send] of Object.entries(uploads)) {
      const { status, body: record } = await send()
      expect({ status, size: record.size, hash: record.hash }, kind).toEqual({
        status: 201,
        size: bytes.length,
        hash: expected,
      })
      const stored = await downloadBytes(`/files/${record._id}/download`, { token: user.token })
      expect(await sha256Hex(stored.bytes), kind).toBe(expected)
      expect(indexOfDifference(stored.bytes, bytes), kind).toBe(-1)
    }
  }, 300_000)
})

function indexOfDifference(a: Uint8Array, b: Uint8Array): number {
  if (a.length !== b.length) return Math.min(a.length, b.length)
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return i
  return -1
}
