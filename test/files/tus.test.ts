// tus 1.0.0 at /files/tus, request by request, each behaviour beside the sentence of the specification
// (https://tus.io/protocols/resumable-upload, version 1.0.0) it follows. The real clients (tus-js-client, Uppy)
// drive the same routes in test/e2e/tus-client.test.ts and test/e2e/console.test.ts.
import { createScheduledController, env } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { consumerHandlers } from '../../worker/consumer'
import { localEngines } from '../../worker/engine-workers/local'
import { call, callJson, callWithSettings, type CallOptions } from '../support/api'
import { signUp, type TestUser } from '../support/accounts'
import { sha256Hex } from '../support/bytes'
import { grantRole } from '../support/roles'

const consumer = consumerHandlers(() => localEngines)

const MiB = 1024 * 1024
const TUS = { 'tus-resumable': '1.0.0' }
const b64 = (text: string) => new TextEncoder().encode(text).toBase64()

/** Bytes that vary (so a misplaced part shows in the hash), starting as a PDF so the type is sniffed. */
function pdfBytes(size: number): Uint8Array {
  const bytes = new Uint8Array(size).map((_, i) => (i * 7 + (i >> 13)) & 0xff)
  bytes.set(new TextEncoder().encode('%PDF-1.7\n'))
  return bytes
}

async function create(
  user: TestUser,
  length: number,
  metadata = `filename ${b64('report.pdf')}`,
  extra: Record<string, string> = {},
) {
  const res = await call('POST', '/files/tus', {
    token: user.token,
    headers: { ...TUS, 'upload-length': String(length), 'upload-metadata': metadata, ...extra },
  })
  expect(res.status).toBe(201)
  return new URL(res.headers.get('location')!).pathname
}

const patch = (
  user: TestUser,
  path: string,
  offset: number,
  bytes: Uint8Array,
  headers: Record<string, string> = {},
  options: CallOptions = {},
) =>
  call('PATCH', path, {
    token: user.token,
    body: bytes,
    headers: {
      ...TUS,
      'upload-offset': String(offset),
      'content-type': 'application/offset+octet-stream',
      // As an HTTP client sends it (a Request made here has none): the PATCH's D1 work then goes before its bytes.
      'content-length': String(bytes.byteLength),
      ...headers,
    },
    ...options,
  })

const head = (user: TestUser, path: string) => call('HEAD', path, { token: user.token, headers: TUS })

async function objectsOf(user: TestUser) {
  return (await env.BUCKET.list({ prefix: `u/${user.id}/` })).objects.map((object) => object.key)
}

describe('tus core protocol', { timeout: 120_000 }, () => {
  it('OPTIONS: "A successful response … MUST contain the Tus-Version header. It MAY include the Tus-Extension and Tus-Max-Size headers" (no token needed)', async () => {
    const res = await call('OPTIONS', '/files/tus')
    expect(res.status).toBe(204)
    expect(res.headers.get('tus-version')).toBe('1.0.0')
    expect(res.headers.get('tus-resumable')).toBe('1.0.0')
    expect(res.headers.get('tus-extension')).toBe('creation,creation-with-upload,termination,expiration,checksum')
    expect(res.headers.get('tus-max-size')).toBe(String(5 * 1024 * MiB))
    // Checksum: "The Tus-Checksum-Algorithm header MUST be included in the response to an OPTIONS request."
    expect(res.headers.get('tus-checksum-algorithm')).toBe('sha1,sha256,sha512,md5')
  })

  it('"If the version specified by the Client is not supported by the Server, it MUST respond with the 412 Precondition Failed status and MUST include the Tus-Version header" (with a valid token: the token is checked first)', async () => {
    const user = await signUp()
    const res = await call('POST', '/files/tus', {
      token: user.token,
      headers: { 'tus-resumable': '0.2.2', 'upload-length': '5' },
    })
    expect(res.status).toBe(412)
    expect(res.headers.get('tus-version')).toBe('1.0.0')
    expect(await objectsOf(user)).toEqual([])
  })

  it('creation, HEAD ("MUST include the Upload-Length", "Upload-Metadata … as specified by the Client", "Cache-Control: no-store"), PATCHes of any size joined into equal R2 parts, and the same record as POST /files', async () => {
    const user = await signUp()
    const whole = pdfBytes(17 * MiB + 12345)
    const metadata = `filename ${b64('Q3 report – final.pdf')},filetype ${b64('application/octet-stream')},prefix ${b64('media/@user._id')},modified ${b64('1700000000000')},is_confidential`
    const path = await create(user, whole.length, metadata)
    expect(path).toMatch(/^\/files\/tus\/[0-9a-f]{24}$/)

    const fresh = await head(user, path)
    expect(fresh.status).toBe(200)
    expect(
      Object.fromEntries(
        ['upload-offset', 'upload-length', 'upload-metadata', 'cache-control', 'tus-resumable'].map((name) => [
          name,
          fresh.headers.get(name),
        ]),
      ),
    ).toEqual({
      'upload-offset': '0',
      'upload-length': String(whole.length),
      'upload-metadata': metadata,
      'cache-control': 'no-store',
      'tus-resumable': '1.0.0',
    })
    expect(new Date(fresh.headers.get('upload-expires')!).getTime()).toBeGreaterThan(Date.now() + 23 * 3600_000)

    // Chunk sizes R2 would refuse as parts: 3 MiB, 6 MiB + 1, 1 byte, then the rest.
    const cuts = [0, 3 * MiB, 9 * MiB + 1, 9 * MiB + 2, whole.length]
    for (let i = 0; i < cuts.length - 1; i++) {
      const res = await patch(user, path, cuts[i]!, whole.subarray(cuts[i], cuts[i + 1]))
      expect(res.status).toBe(204)
      // "It MUST include the Upload-Offset header containing the new offset."
      expect(res.headers.get('upload-offset')).toBe(String(cuts[i + 1]))
      if (i < cuts.length - 2) {
        // Expiration: "This header MUST be included in every PATCH response if the upload is going to expire."
        expect(res.headers.get('upload-expires')).toMatch(/GMT$/)
        expect((await head(user, path)).headers.get('upload-offset')).toBe(String(cuts[i + 1]))
      } else {
        const fileId = res.headers.get('x-edgefloor-file-id')!
        const record = await callJson('GET', `/files/${fileId}`, { token: user.token })
        expect(record.body).toMatchObject({
          name: 'Q3 report – final.pdf',
          extension: '.pdf',
          content_type: 'application/pdf',
          size: whole.length,
          hash: await sha256Hex(whole),
          prefix: `media/${user.id}`,
          file_modified_at: new Date(1700000000000).toISOString(),
        })
        const download = await call('GET', `/files/${fileId}/download`, { token: user.token })
        expect(await sha256Hex(new Uint8Array(await download.arrayBuffer()))).toBe(await sha256Hex(whole))
      }
    }
    // "The Server MUST always include the Upload-Offset header in the response for a HEAD request, even if … the upload is already considered completed."
    const done = await head(user, path)
    expect(done.headers.get('upload-offset')).toBe(String(whole.length))
    expect(done.headers.get('x-edgefloor-file-id')).toMatch(/^[0-9a-f]{24}$/)
    // No tail object is left over: only the file's bytes.
    expect(await objectsOf(user)).toHaveLength(1)
  })

  it('parts sent to R2 are equal (8 MiB), the last no larger, whatever the PATCH sizes (R2: "All parts except the last one must be the same size")', async () => {
    const user = await signUp()
    const whole = pdfBytes(20 * MiB + 3)
    const path = await create(user, whole.length)
    const id = path.split('/').pop()!
    for (const [from, to] of [
      [0, 5 * MiB - 1],
      [5 * MiB - 1, 13 * MiB],
      [13 * MiB, 13 * MiB + 7],
    ] as const) {
      expect((await patch(user, path, from, whole.subarray(from, to))).status).toBe(204)
    }
    const parts = await env.DB.prepare(
      'SELECT part_number, size FROM upload_parts WHERE upload_id = ? ORDER BY part_number',
    )
      .bind(id)
      .all()
    expect(parts.results.map((part) => part.size)).toEqual([8 * MiB])
    const upload = await env.DB.prepare('SELECT part_bytes, tail_bytes, offset FROM uploads WHERE id = ?')
      .bind(id)
      .first()
    expect(upload).toEqual({ part_bytes: 8 * MiB, tail_bytes: 13 * MiB + 7 - 8 * MiB, offset: 13 * MiB + 7 })
    expect((await patch(user, path, 13 * MiB + 7, whole.subarray(13 * MiB + 7))).status).toBe(204)
    expect((await callJson('GET', `/files/${id}`, { token: user.token })).body.hash).toBe(await sha256Hex(whole))
  })

  it('PATCHes without Content-Length (streamed bodies) are taken as they come: equal parts, and the same file', async () => {
    const user = await signUp()
    const whole = pdfBytes(9 * MiB + 5)
    const path = await create(user, whole.length)
    for (const [from, to] of [
      [0, 1000],
      [1000, 8 * MiB + 1],
      [8 * MiB + 1, whole.length],
    ] as const) {
      const streamed = await call('PATCH', path, {
        token: user.token,
        body: new Blob([whole.subarray(from, to)]).stream(),
        headers: { ...TUS, 'upload-offset': String(from), 'content-type': 'application/offset+octet-stream' },
      })
      expect(streamed.status).toBe(204)
      expect(streamed.headers.get('upload-offset')).toBe(String(to))
    }
    const id = path.split('/').pop()!
    expect((await callJson('GET', `/files/${id}`, { token: user.token })).body.hash).toBe(await sha256Hex(whole))
    expect(await objectsOf(user)).toHaveLength(1)
  })

  it('"If the offsets do not match, the Server MUST respond with the 409 Conflict status without modifying the upload resource"', async () => {
    const user = await signUp()
    const path = await create(user, 100)
    expect((await patch(user, path, 0, new Uint8Array(10))).status).toBe(204)
    const conflict = await patch(user, path, 5, new Uint8Array(10))
    expect(conflict.status).toBe(409)
    expect(await conflict.json()).toMatchObject({ code: 'UPLOAD_OFFSET_MISMATCH', offset: 10 })
    expect((await head(user, path)).headers.get('upload-offset')).toBe('10')
  })

  it('"All PATCH requests MUST use Content-Type: application/offset+octet-stream, otherwise the server SHOULD return a 415"', async () => {
    const user = await signUp()
    const path = await create(user, 10)
    expect(
      (await patch(user, path, 0, new Uint8Array(10), { 'content-type': 'application/octet-stream' })).status,
    ).toBe(415)
    expect((await head(user, path)).headers.get('upload-offset')).toBe('0')
  })

  it('X-HTTP-Method-Override: "MUST be interpreted as the request\'s method by the Server"', async () => {
    const user = await signUp()
    const path = await create(user, 11, `filename ${b64('hello.txt')}`)
    const res = await call('POST', path, {
      token: user.token,
      body: new TextEncoder().encode('hello world'),
      headers: {
        ...TUS,
        'x-http-method-override': 'PATCH',
        'upload-offset': '0',
        'content-type': 'application/offset+octet-stream',
      },
    })
    expect(res.status).toBe(204)
    expect(res.headers.get('upload-offset')).toBe('11')
  })
})

describe('tus extensions', { timeout: 120_000 }, () => {
  it('creation-with-upload: "MUST include the Upload-Offset header in the response and MUST set its value to the offset of the upload after applying the accepted bytes"', async () => {
    const user = await signUp()
    const res = await call('POST', '/files/tus', {
      token: user.token,
      body: new TextEncoder().encode('hello'),
      headers: {
        ...TUS,
        'upload-length': '11',
        'content-type': 'application/offset+octet-stream',
        'upload-metadata': `filename ${b64('hello.txt')}`,
      },
    })
    expect(res.status).toBe(201)
    expect(res.headers.get('upload-offset')).toBe('5')
    // "If the expiration is known at the creation, the Upload-Expires header MUST be included in the response to the initial POST request."
    expect(res.headers.get('upload-expires')).toMatch(/GMT$/)
    const path = new URL(res.headers.get('location')!).pathname
    const rest = await patch(user, path, 5, new TextEncoder().encode(' world'))
    const record = await callJson('GET', `/files/${rest.headers.get('x-edgefloor-file-id')}`, { token: user.token })
    expect(record.body).toMatchObject({
      name: 'hello.txt',
      size: 11,
      content_type: 'text/plain',
      hash: await sha256Hex(new TextEncoder().encode('hello world')),
    })
  })

  it('an empty upload (Upload-Length: 0) is a complete, empty file at once', async () => {
    const user = await signUp()
    const res = await call('POST', '/files/tus', {
      token: user.token,
      headers: { ...TUS, 'upload-length': '0', 'upload-metadata': `filename ${b64('empty.txt')}` },
    })
    expect(res.status).toBe(201)
    const record = await callJson('GET', `/files/${res.headers.get('x-edgefloor-file-id')}`, { token: user.token })
    expect(record.body).toMatchObject({ name: 'empty.txt', size: 0, hash: await sha256Hex(new Uint8Array(0)) })
  })

  it('checksum: the spec\'s own example ("sha1 Kq5sNclPz7QV2+lfQIuc6R7oRu0=" for "hello world") passes; a mismatch is "460 Checksum Mismatch" and "the upload and its offset MUST NOT be updated"; an unknown algorithm is 400', async () => {
    const user = await signUp()
    const path = await create(user, 22, `filename ${b64('twice.txt')}`)
    const hello = new TextEncoder().encode('hello world')
    const mismatch = await patch(user, path, 0, hello, { 'upload-checksum': 'sha1 AAAAAAAAAAAAAAAAAAAAAAAAAAA=' })
    expect(mismatch.status).toBe(460)
    expect(await mismatch.json()).toMatchObject({ code: 'CHECKSUM_MISMATCH' })
    expect((await head(user, path)).headers.get('upload-offset')).toBe('0')
    expect((await patch(user, path, 0, hello, { 'upload-checksum': 'crc32 AAAA' })).status).toBe(400)
    expect((await patch(user, path, 0, hello, { 'upload-checksum': 'sha1 Kq5sNclPz7QV2+lfQIuc6R7oRu0=' })).status).toBe(
      204,
    )
    // After a mismatch of a PATCH that had a tail: the tail of the refused PATCH is not kept either.
    expect((await patch(user, path, 11, hello, { 'upload-checksum': 'sha256 AAAA' })).status).toBe(460)
    expect(await objectsOf(user)).toHaveLength(1) // the first PATCH's tail only
    expect(
      (
        await patch(user, path, 11, hello, {
          'upload-checksum': `sha256 ${new Uint8Array(await crypto.subtle.digest('SHA-256', hello)).toBase64()}`,
        })
      ).status,
    ).toBe(204)
  })

  it('termination: "MUST respond with the 204 No Content status", then "404 Not Found or 410 Gone"; the parts and tail are gone from R2', async () => {
    const user = await signUp()
    const path = await create(user, 10 * MiB)
    expect((await patch(user, path, 0, pdfBytes(9 * MiB))).status).toBe(204)
    expect(await objectsOf(user)).toHaveLength(1) // the tail
    const res = await call('DELETE', path, { token: user.token, headers: TUS })
    expect(res.status).toBe(204)
    expect((await head(user, path)).status).toBe(404)
    expect((await patch(user, path, 9 * MiB, new Uint8Array(10))).status).toBe(404)
    expect(await objectsOf(user)).toEqual([])
  })

  it('expiration: an upload past FILES_UPLOAD_TTL is 404 at once, and the scheduled sweep aborts its R2 multipart upload and removes its tail', async () => {
    const user = await signUp()
    const path = await create(user, 20 * MiB)
    const id = path.split('/').pop()!
    expect((await patch(user, path, 0, pdfBytes(9 * MiB))).status).toBe(204)
    const row = await env.DB.prepare('SELECT key, r2_upload_id FROM uploads WHERE id = ?')
      .bind(id)
      .first<{ key: string; r2_upload_id: string }>()
    await env.DB.prepare('UPDATE uploads SET expires_at = ? WHERE id = ?')
      .bind(Date.now() - 1, id)
      .run()
    expect((await head(user, path)).status).toBe(404)
    // The Worker's scheduled export, as the Cron Trigger calls it.
    await consumer.scheduled(createScheduledController({ scheduledTime: Date.now(), cron: '*/15 * * * *' }), env)
    expect(await env.DB.prepare('SELECT count(*) AS n FROM uploads WHERE id = ?').bind(id).first('n')).toBe(0)
    expect(await objectsOf(user)).toEqual([])
    // The R2 multipart upload is aborted: a part can no longer be added to it.
    await expect(
      env.BUCKET.resumeMultipartUpload(row!.key, row!.r2_upload_id).uploadPart(2, new Uint8Array(10)),
    ).rejects.toThrow()
  })

  it('FILES_UPLOAD_TTL sets Upload-Expires', async () => {
    const user = await signUp()
    const res = await callWithSettings({ FILES_UPLOAD_TTL: '1h' }, 'POST', '/files/tus', {
      token: user.token,
      headers: { ...TUS, 'upload-length': '10' },
    })
    const expires = new Date(res.headers.get('upload-expires')!).getTime()
    expect(expires).toBeGreaterThan(Date.now() + 3500_000)
    expect(expires).toBeLessThanOrEqual(Date.now() + 3600_000)
  })
})

describe('tus: auth, owners, limits', { timeout: 120_000 }, () => {
  it("needs the bearer token (401), and another user's upload URL is 404 for HEAD, PATCH, DELETE and the override", async () => {
    const alice = await signUp()
    const bob = await signUp()
    expect((await call('POST', '/files/tus', { headers: { ...TUS, 'upload-length': '10' } })).status).toBe(401)
    const path = await create(alice, 10)
    expect((await call('HEAD', path, { headers: TUS })).status).toBe(401)
    expect((await head(bob, path)).status).toBe(404)
    expect((await patch(bob, path, 0, new Uint8Array(10))).status).toBe(404)
    expect((await call('DELETE', path, { token: bob.token, headers: TUS })).status).toBe(404)
    expect(
      (await call('POST', path, { token: bob.token, headers: { ...TUS, 'x-http-method-override': 'DELETE' } })).status,
    ).toBe(404)
    expect((await head(alice, path)).headers.get('upload-offset')).toBe('0')
  })

  it('"If the length of the upload exceeds the maximum, which MAY be specified using the Tus-Max-Size header, the Server MUST respond with the 413"; more bytes than Upload-Length and the quota are 413 too', async () => {
    const user = await signUp()
    const tooLong = await callWithSettings({ FILES_MAX_RESUMABLE_BYTES: '1000' }, 'POST', '/files/tus', {
      token: user.token,
      headers: { ...TUS, 'upload-length': '1001' },
    })
    expect(tooLong.status).toBe(413)
    const path = await create(user, 10)
    const over = await patch(user, path, 0, new Uint8Array(11))
    expect(over.status).toBe(413)
    expect((await head(user, path)).headers.get('upload-offset')).toBe('0')
    const quota = await callWithSettings({ FILES_QUOTA_BYTES: String(MiB) }, 'POST', '/files/tus', {
      token: user.token,
      headers: { ...TUS, 'upload-length': String(MiB + 1) },
    })
    expect(quota.status).toBe(413)
    expect(await quota.json()).toMatchObject({ code: 'QUOTA_EXCEEDED' })
  })

  it('a pending upload counts toward FILES_QUOTA_BYTES until it completes or is terminated', async () => {
    const user = await signUp()
    const settings = { FILES_QUOTA_BYTES: String(MiB) }
    const started = await callWithSettings(settings, 'POST', '/files/tus', {
      token: user.token,
      headers: { ...TUS, 'upload-length': String(600 * 1024) },
    })
    expect(started.status).toBe(201)
    const form = () => {
      const body = new FormData()
      body.append('file', new Blob([new Uint8Array(500 * 1024)]), 'other.bin')
      return body
    }
    const refused = await callWithSettings(settings, 'POST', '/files', { token: user.token, body: form() })
    expect(refused.status).toBe(413)
    expect(await refused.json()).toMatchObject({ code: 'QUOTA_EXCEEDED' })
    const path = new URL(started.headers.get('location')!).pathname
    expect((await callWithSettings(settings, 'DELETE', path, { token: user.token, headers: TUS })).status).toBe(204)
    expect((await callWithSettings(settings, 'POST', '/files', { token: user.token, body: form() })).status).toBe(201)
  })

  it("a parts upload's id is no tus upload URL: a PATCH there is 404 and takes nothing", async () => {
    const user = await signUp()
    const started = await callJson('POST', '/files/uploads', { token: user.token, json: { name: 'p.bin', size: 10 } })
    const id = started.body.upload_id as string
    const row = () =>
      env.DB.prepare('SELECT offset, next_part, lease_holders FROM uploads WHERE id = ?').bind(id).first()
    const before = await row()
    expect((await patch(user, `/files/tus/${id}`, 0, new Uint8Array(10))).status).toBe(404)
    expect(await row()).toEqual(before)
  })

  it('refuses a deferred length, a missing length and malformed metadata with 400', async () => {
    const user = await signUp()
    const post = (headers: Record<string, string>) =>
      call('POST', '/files/tus', { token: user.token, headers: { ...TUS, ...headers } })
    expect((await post({ 'upload-defer-length': '1' })).status).toBe(400)
    expect((await post({})).status).toBe(400)
    expect((await post({ 'upload-length': '-1' })).status).toBe(400)
    expect((await post({ 'upload-length': '5', 'upload-metadata': 'filename not*base64' })).status).toBe(400)
    expect(
      (await post({ 'upload-length': '5', 'upload-metadata': `filename ${b64('a')},filename ${b64('b')}` })).status,
    ).toBe(400)
    expect((await post({ 'upload-length': '5', 'upload-metadata': `prefix ${b64('../up')}` })).status).toBe(400)
  })

  it('deleting a user aborts their unfinished uploads in R2', async () => {
    const user = await signUp()
    const admin = await signUp()
    await grantRole(admin, 'admin')
    const path = await create(user, 20 * MiB)
    expect((await patch(user, path, 0, pdfBytes(9 * MiB))).status).toBe(204)
    const id = path.split('/').pop()!
    const row = await env.DB.prepare('SELECT key, r2_upload_id FROM uploads WHERE id = ?')
      .bind(id)
      .first<{ key: string; r2_upload_id: string }>()
    expect((await call('DELETE', `/users/${user.id}`, { token: admin.token })).status).toBe(204)
    expect(await objectsOf(user)).toEqual([])
    await expect(
      env.BUCKET.resumeMultipartUpload(row!.key, row!.r2_upload_id).uploadPart(2, new Uint8Array(10)),
    ).rejects.toThrow()
  })
})

// Behind a proxy the Worker sees the upstream's address; tus 1.0.0, Creation: "The Server MUST set the `Location`
// header to the URL of the created resource", which the client then PATCHes: it must be the address the client used.
// RFC 7239 section 5.3: "The "host" parameter is used to forward the original value of the "Host" header field";
// section 5.4: "The "proto" parameter has the value of the used protocol type".
describe('Location behind a proxy (TRUST_FORWARDED_HOST)', () => {
  const created = async (settings: Record<string, string>, headers: Record<string, string>) => {
    const user = await signUp()
    const res = await callWithSettings(settings, 'POST', '/files/tus', {
      token: user.token,
      headers: { ...TUS, 'upload-length': '3', ...headers },
    })
    expect(res.status).toBe(201)
    return res.headers.get('location')!
  }
  const trusted = { TRUST_FORWARDED_HOST: 'true' }

  it('follows X-Forwarded-Host and X-Forwarded-Proto when trusted', async () => {
    expect(await created(trusted, { 'x-forwarded-host': 'files.example.com', 'x-forwarded-proto': 'https' })).toMatch(
      /^https:\/\/files\.example\.com\/files\/tus\/[0-9a-f]{24}$/,
    )
  })

  it('follows Forwarded (RFC 7239), its last element (the proxy nearest the Worker), quoted values included', async () => {
    const location = await created(trusted, {
      forwarded:
        'for=192.0.2.60;host=forged.example.net;proto=http, for=198.51.100.17;proto=https;host="api.example.com:8443"',
    })
    expect(location).toMatch(/^https:\/\/api\.example\.com:8443\/files\/tus\/[0-9a-f]{24}$/)
  })

  it('ignores the headers unless trusted, and a host that is not a plain host', async () => {
    expect(await created({}, { 'x-forwarded-host': 'files.example.com', 'x-forwarded-proto': 'https' })).toMatch(
      /^http:\/\/edgefloor\.test\/files\/tus\//,
    )
    expect(await created(trusted, { 'x-forwarded-host': 'evil.example/path?x=' })).toMatch(
      /^http:\/\/edgefloor\.test\/files\/tus\//,
    )
    expect(await created(trusted, { 'x-forwarded-host': 'user@evil.example' })).toMatch(
      /^http:\/\/edgefloor\.test\/files\/tus\//,
    )
    expect(await created(trusted, { 'x-forwarded-proto': 'javascript' })).toMatch(
      /^http:\/\/edgefloor\.test\/files\/tus\//,
    )
  })

  it('signs the file URLs of the answers for the same origin', async () => {
    const user = await signUp()
    const res = await callWithSettings(trusted, 'POST', '/files', {
      token: user.token,
      body: 'hello',
      headers: { 'x-edgefloor-name': 'a.txt', 'x-forwarded-host': 'files.example.com', 'x-forwarded-proto': 'https' },
    })
    expect(res.status).toBe(201)
    expect((await res.json<{ url: string }>()).url).toMatch(
      /^https:\/\/files\.example\.com\/files\/[0-9a-f]{24}\/download\?token=/,
    )
  })
})
