// Requests that race on one upload end in a 4xx that says what happened (404: the upload is gone; 409: another
// request changed or completed it), never a 5xx, and D1 and R2 agree afterwards. A body the test holds open keeps
// a PATCH or a part "still sending" while the other request of the pair runs to its end; pairs with no body to
// hold are sent at once, several rounds, and every interleaving they hit must answer so.
import { env } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { call, callJson, callWithSettings } from '../support/api'
import { signUp, type TestUser } from '../support/accounts'
import { grantRole } from '../support/roles'

const MiB = 1024 * 1024
const TUS = { 'tus-resumable': '1.0.0' }
const b64 = (text: string) => new TextEncoder().encode(text).toBase64()

/** A request body the test feeds: `send` enqueues bytes, `end` closes it; the request waits for what is not sent. */
function heldBody() {
  let controller!: ReadableStreamDefaultController<Uint8Array>
  const body = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) })
  return { body, send: (bytes: Uint8Array) => controller.enqueue(bytes), end: () => controller.close() }
}

function pdfBytes(size: number): Uint8Array {
  const bytes = new Uint8Array(size).map((_, i) => (i * 7) & 0xff)
  bytes.set(new TextEncoder().encode('%PDF-1.7\n'))
  return bytes
}

async function tusUpload(user: TestUser, length: number) {
  const res = await call('POST', '/files/tus', {
    token: user.token,
    headers: { ...TUS, 'upload-length': String(length), 'upload-metadata': `filename ${b64('race.pdf')}` },
  })
  expect(res.status).toBe(201)
  return new URL(res.headers.get('location')!).pathname
}

/** A PATCH with the Content-Length an HTTP client sends (a Request made here has none): `length`, or the bytes'. */
const patch = (
  user: TestUser,
  path: string,
  offset: number,
  body: BodyInit,
  length = body instanceof Uint8Array ? body.byteLength : undefined,
) =>
  call('PATCH', path, {
    token: user.token,
    body,
    headers: {
      ...TUS,
      'upload-offset': String(offset),
      'content-type': 'application/offset+octet-stream',
      ...(length === undefined ? {} : { 'content-length': String(length) }),
    },
  })

/** A PATCH whose body the test holds open after `first` bytes; `finish` sends the rest and answers the response. */
function heldPatch(user: TestUser, path: string, bytes: Uint8Array, first: number) {
  const held = heldBody()
  held.send(bytes.slice(0, first))
  const response = patch(user, path, 0, held.body, bytes.length)
  return {
    finish: async () => {
      held.send(bytes.slice(first))
      held.end()
      return response
    },
  }
}

/** Waits until a request holding its body open has reached the engine (its row shows it took part numbers, or it is reading). */
const settle = () => new Promise((resolve) => setTimeout(resolve, 200))

async function answer(res: Response) {
  const text = await res.text()
  return { status: res.status, body: text ? JSON.parse(text) : undefined }
}

async function objectsOf(user: TestUser) {
  return (await env.BUCKET.list({ prefix: `u/${user.id}/` })).objects.map((object) => object.key)
}

async function rowsOf(user: TestUser) {
  const filesRows = await env.DB.prepare('SELECT id, size FROM files WHERE user_id = ?')
    .bind(user.id)
    .all<{ id: string; size: number }>()
  const uploadRows = await env.DB.prepare('SELECT id, file_id FROM uploads WHERE user_id = ?')
    .bind(user.id)
    .all<{ id: string; file_id: string | null }>()
  const reservations = await env.DB.prepare('SELECT id FROM storage_reservations WHERE user_id = ?').bind(user.id).all()
  return { files: filesRows.results, uploads: uploadRows.results, reservations: reservations.results.length }
}

describe('tus races', { timeout: 120_000 }, () => {
  it('two PATCHes completing one upload: one 204, the other 409 UPLOAD_OFFSET_MISMATCH, one file of the right bytes', async () => {
    const user = await signUp()
    const bytes = pdfBytes(3000)
    const path = await tusUpload(user, bytes.length)
    const slow = heldPatch(user, path, bytes, 1000)
    await settle()
    const fast = await patch(user, path, 0, bytes)
    expect(fast.status).toBe(204)
    const fileId = fast.headers.get('x-edgefloor-file-id')!
    const late = await answer(await slow.finish())
    expect(late).toEqual({
      status: 409,
      body: { message: expect.stringContaining('complete'), code: 'UPLOAD_OFFSET_MISMATCH', offset: bytes.length },
    })
    const download = await call('GET', `/files/${fileId}/download`, { token: user.token })
    expect(new Uint8Array(await download.arrayBuffer())).toEqual(bytes)
    expect((await rowsOf(user)).files).toEqual([{ id: fileId, size: bytes.length }])
    expect(await objectsOf(user)).toEqual([
      (await env.DB.prepare('SELECT key FROM files WHERE id = ?').bind(fileId).first<{ key: string }>())!.key,
    ])
  })

  it('two PATCHes completing one upload sent at once: never a 5xx', async () => {
    const user = await signUp()
    for (let round = 0; round < 3; round++) {
      const bytes = pdfBytes(6 * MiB + round)
      const path = await tusUpload(user, bytes.length)
      const statuses = (await Promise.all([patch(user, path, 0, bytes), patch(user, path, 0, bytes)]))
        .map((res) => res.status)
        .sort()
      expect(statuses).toEqual([204, 409])
    }
    expect((await rowsOf(user)).files).toHaveLength(3)
  })

  it('a PATCH still sending when its upload is terminated: the termination 204, the PATCH 404 UPLOAD_NOT_FOUND, nothing left in R2', async () => {
    const user = await signUp()
    const bytes = pdfBytes(9 * MiB)
    const path = await tusUpload(user, bytes.length)
    // 8 MiB fill a part, sent to R2 while the body is still open.
    const slow = heldPatch(user, path, bytes, 8 * MiB + 10)
    await settle()
    expect((await call('DELETE', path, { token: user.token, headers: TUS })).status).toBe(204)
    expect(await answer(await slow.finish())).toEqual({
      status: 404,
      body: { message: 'upload not found', code: 'UPLOAD_NOT_FOUND' },
    })
    expect(await objectsOf(user)).toEqual([])
    expect(await rowsOf(user)).toEqual({ files: [], uploads: [], reservations: 0 })
  })

  it('a PATCH still sending when its upload is terminated, with a tail from an earlier PATCH: 404', async () => {
    const user = await signUp()
    const bytes = pdfBytes(3000)
    const path = await tusUpload(user, bytes.length)
    expect((await patch(user, path, 0, bytes.slice(0, 1000))).status).toBe(204)
    const held = heldBody()
    held.send(bytes.slice(1000, 1500))
    const response = patch(user, path, 1000, held.body, bytes.length - 1000)
    await settle()
    expect((await call('DELETE', path, { token: user.token, headers: TUS })).status).toBe(204)
    held.send(bytes.slice(1500))
    held.end()
    expect((await answer(await response)).status).toBe(404)
    expect(await objectsOf(user)).toEqual([])
  })

  it('a PATCH still sending when its user is deleted: the deletion 204, the PATCH 404, nothing left in R2 or D1', async () => {
    const user = await signUp()
    const admin = await signUp()
    await grantRole(admin, 'admin')
    const bytes = pdfBytes(9 * MiB)
    const path = await tusUpload(user, bytes.length)
    const slow = heldPatch(user, path, bytes, 8 * MiB + 10)
    await settle()
    expect((await call('DELETE', `/users/${user.id}`, { token: admin.token })).status).toBe(204)
    expect(await answer(await slow.finish())).toEqual({
      status: 404,
      body: { message: 'upload not found', code: 'UPLOAD_NOT_FOUND' },
    })
    expect(await objectsOf(user)).toEqual([])
    expect(await rowsOf(user)).toEqual({ files: [], uploads: [], reservations: 0 })
  })

  it('a completing PATCH still sending when its user is deleted: 404, and no file outlives the user', async () => {
    const user = await signUp()
    const admin = await signUp()
    await grantRole(admin, 'admin')
    const bytes = pdfBytes(3000)
    const path = await tusUpload(user, bytes.length)
    const slow = heldPatch(user, path, bytes, 1000)
    await settle()
    expect((await call('DELETE', `/users/${user.id}`, { token: admin.token })).status).toBe(204)
    expect((await answer(await slow.finish())).status).toBe(404)
    expect(await objectsOf(user)).toEqual([])
    expect(await rowsOf(user)).toEqual({ files: [], uploads: [], reservations: 0 })
  })
  it('two PATCHes completing one upload sent at once without Content-Length (claimed first, then joined): never a 5xx', async () => {
    const user = await signUp()
    const bytes = pdfBytes(3000)
    const path = await tusUpload(user, bytes.length)
    const stream = () => new Blob([bytes]).stream()
    const statuses = (await Promise.all([patch(user, path, 0, stream()), patch(user, path, 0, stream())]))
      .map((res) => res.status)
      .sort()
    expect(statuses).toEqual([204, 409])
    expect((await rowsOf(user)).files).toEqual([{ id: expect.any(String), size: bytes.length }])
  })
})

/** The file a completing PATCH answered (X-Edgefloor-File-Id) has exactly `bytes`. */
async function expectFileBytes(user: TestUser, done: Response, bytes: Uint8Array) {
  expect(done.status).toBe(204)
  const download = await call('GET', `/files/${done.headers.get('x-edgefloor-file-id')}/download`, {
    token: user.token,
  })
  expect(new Uint8Array(await download.arrayBuffer())).toEqual(bytes)
}

/** The upload's row as the PATCH's first batch leaves it: the part numbers taken, the lease, the expiry. */
const uploadState = (path: string) =>
  env.DB.prepare('SELECT offset, next_part, lease_holders, lease_until, expires_at FROM uploads WHERE id = ?')
    .bind(path.split('/').pop())
    .first<{
      offset: number
      next_part: number
      lease_holders: number
      lease_until: number | null
      expires_at: number
    }>()

// The PATCH that completes an upload joins its parts in R2 before its batch claims the offset (two D1 round trips,
// issue 30). It holds the offset from its first batch: R2's join cannot be undone, so no other PATCH may move the
// offset it was made for. tus 1.0 (https://tus.io/protocols/resumable-upload), PATCH: "If the offsets do not match,
// the Server MUST respond with the 409 Conflict status without modifying the upload resource."
describe('tus: the completing PATCH holds the offset', { timeout: 120_000 }, () => {
  it('a smaller PATCH at the offset a completing PATCH holds: 409 before its bytes; the completing one 204, its bytes exactly, its record once, its hold ended', async () => {
    const user = await signUp()
    const bytes = pdfBytes(3000)
    const path = await tusUpload(user, bytes.length)
    const completing = heldPatch(user, path, bytes, 1000)
    await settle()
    expect((await uploadState(path))!.lease_holders).toBe(1)
    const smaller = await answer(await patch(user, path, 0, pdfBytes(500).reverse()))
    expect(smaller).toEqual({
      status: 409,
      body: { message: expect.stringContaining('completing'), code: 'UPLOAD_OFFSET_MISMATCH', offset: 0 },
    })
    const done = await completing.finish()
    expect(done.status).toBe(204)
    const fileId = done.headers.get('x-edgefloor-file-id')!
    const download = await call('GET', `/files/${fileId}/download`, { token: user.token })
    expect(new Uint8Array(await download.arrayBuffer())).toEqual(bytes)
    expect(await rowsOf(user)).toEqual({
      files: [{ id: fileId, size: bytes.length }],
      uploads: [{ id: fileId, file_id: fileId }],
      reservations: 0,
    })
    expect(await uploadState(path)).toMatchObject({ offset: bytes.length, lease_holders: 0, lease_until: null })
    // Sent again, it changes nothing (tus: 409 for an offset that is not the upload's).
    expect((await patch(user, path, 0, bytes)).status).toBe(409)
    expect((await rowsOf(user)).files).toHaveLength(1)
  })

  it('a smaller PATCH still sending when a completing PATCH arrives: the completing one 204, the smaller 409, and nothing of the smaller is kept', async () => {
    const user = await signUp()
    const bytes = pdfBytes(3000)
    const path = await tusUpload(user, bytes.length)
    const held = heldBody()
    held.send(pdfBytes(200).reverse())
    const smaller = patch(user, path, 0, held.body, 1000)
    await settle()
    const completing = await patch(user, path, 0, bytes)
    expect(completing.status).toBe(204)
    held.send(pdfBytes(800))
    held.end()
    expect((await answer(await smaller)).status).toBe(409)
    const fileId = completing.headers.get('x-edgefloor-file-id')!
    const download = await call('GET', `/files/${fileId}/download`, { token: user.token })
    expect(new Uint8Array(await download.arrayBuffer())).toEqual(bytes)
    // The file's object only: the smaller PATCH's tail went when its claim lost.
    expect(await expectConsistent(user)).toMatchObject({ files: [{ id: fileId, size: bytes.length }], reservations: 0 })
  })

  it('a completing PATCH refused for its checksum keeps nothing and gives the offset back: a smaller PATCH goes at once', async () => {
    // tus checksum extension: "the Server MUST respond with the 460 Checksum Mismatch status … the uploaded chunk
    // MUST be discarded, and the upload and its offset MUST NOT be updated."
    const user = await signUp()
    const bytes = pdfBytes(9 * MiB)
    const path = await tusUpload(user, bytes.length)
    const refused = await call('PATCH', path, {
      token: user.token,
      body: bytes,
      headers: {
        ...TUS,
        'upload-offset': '0',
        'content-type': 'application/offset+octet-stream',
        'content-length': String(bytes.length),
        'upload-checksum': `sha256 ${new Uint8Array(32).toBase64()}`,
      },
    })
    expect(refused.status).toBe(460)
    expect(await uploadState(path)).toMatchObject({ offset: 0, lease_holders: 0 })
    expect(await objectsOf(user)).toEqual([])
    expect((await patch(user, path, 0, bytes.subarray(0, 1000))).status).toBe(204)
    await expectFileBytes(user, await patch(user, path, 1000, bytes.subarray(1000)), bytes)
    await expectConsistent(user)
  })

  it('a PATCH that died holding the offset: a completing PATCH still completes; a smaller one is 409 until the lease ends, then goes', async () => {
    const user = await signUp()
    const bytes = pdfBytes(3000)
    const path = await tusUpload(user, bytes.length)
    const hold = (until: number) =>
      env.DB.prepare('UPDATE uploads SET lease_holders = 1, lease_until = ? WHERE id = ?')
        .bind(until, path.split('/').pop())
        .run()
    await hold(Date.now() + 60_000)
    expect((await patch(user, path, 0, bytes.subarray(0, 1000))).status).toBe(409)
    await hold(Date.now() - 1)
    expect((await patch(user, path, 0, bytes.subarray(0, 1000))).status).toBe(204)
    await hold(Date.now() + 60_000)
    await expectFileBytes(user, await patch(user, path, 1000, bytes.subarray(1000)), bytes)
  })

  it('a completing PATCH cut short stores what arrived once it gives the offset back (tus: "store as much of the received data as possible")', async () => {
    const user = await signUp()
    const bytes = pdfBytes(3000)
    const path = await tusUpload(user, bytes.length)
    const held = heldBody()
    held.send(bytes.subarray(0, 1200))
    const short = patch(user, path, 0, held.body, bytes.length)
    await settle()
    held.end()
    expect((await short).headers.get('upload-offset')).toBe('1200')
    expect(await uploadState(path)).toMatchObject({ offset: 1200, lease_holders: 0 })
    await expectFileBytes(user, await patch(user, path, 1200, bytes.subarray(1200)), bytes)
  })

  it("a completing PATCH that died after R2's join, before its record: the next PATCH is 409, and termination leaves nothing in R2", async () => {
    const user = await signUp()
    const bytes = pdfBytes(9 * MiB + 10)
    const path = await tusUpload(user, bytes.length)
    expect((await patch(user, path, 0, bytes.subarray(0, 9 * MiB))).status).toBe(204)
    // What the dead PATCH left: R2 joined (here, the part stored so far), no record, the offset where it was.
    const row = (await env.DB.prepare('SELECT key, r2_upload_id FROM uploads WHERE id = ?')
      .bind(path.split('/').pop())
      .first<{ key: string; r2_upload_id: string }>())!
    const parts = await env.DB.prepare('SELECT part_number, etag FROM upload_parts WHERE upload_id = ?')
      .bind(path.split('/').pop())
      .all<{ part_number: number; etag: string }>()
    await env.BUCKET.resumeMultipartUpload(row.key, row.r2_upload_id).complete(
      parts.results.map((part) => ({ partNumber: part.part_number, etag: part.etag })),
    )
    const next = await answer(await patch(user, path, 9 * MiB, bytes.subarray(9 * MiB)))
    expect(next).toMatchObject({ status: 409, body: { code: 'UPLOAD_OFFSET_MISMATCH' } })
    expect((await rowsOf(user)).files).toEqual([])
    expect((await call('DELETE', path, { token: user.token, headers: TUS })).status).toBe(204)
    expect(await objectsOf(user)).toEqual([])
    expect(await rowsOf(user)).toEqual({ files: [], uploads: [], reservations: 0 })
  })

  it("a completing PATCH that died after R2's join of the whole upload: once its lease ends, the next completing PATCH writes the dead one's record (409: another request completed it) and HEAD names the file", async () => {
    const user = await signUp()
    const dead = pdfBytes(3000)
    const path = await tusUpload(user, dead.length)
    const id = path.split('/').pop()!
    const row = (await env.DB.prepare('SELECT key, r2_upload_id FROM uploads WHERE id = ?')
      .bind(id)
      .first<{ key: string; r2_upload_id: string }>())!
    // What the dead PATCH left: part 1 taken and joined, its lease (now ended) still counting it, no record.
    const multipart = env.BUCKET.resumeMultipartUpload(row.key, row.r2_upload_id)
    const part = await multipart.uploadPart(1, dead)
    await multipart.complete([part])
    await env.DB.prepare('UPDATE uploads SET next_part = 2, lease_holders = 1, lease_until = ? WHERE id = ?')
      .bind(Date.now() - 1, id)
      .run()
    const next = await answer(await patch(user, path, 0, pdfBytes(3000).reverse()))
    expect(next).toEqual({
      status: 409,
      body: { message: expect.stringContaining('completed'), code: 'UPLOAD_OFFSET_MISMATCH', offset: dead.length },
    })
    const head = await call('HEAD', path, { token: user.token, headers: TUS })
    expect(head.headers.get('upload-offset')).toBe(String(dead.length))
    const download = await call('GET', `/files/${head.headers.get('x-edgefloor-file-id')}/download`, {
      token: user.token,
    })
    expect(new Uint8Array(await download.arrayBuffer())).toEqual(dead)
    expect(await expectConsistent(user)).toMatchObject({ files: [{ id, size: dead.length }], reservations: 0 })
  })

  it('a PATCH of a logged-out token, after the upload expired, or past the quota takes nothing: no part numbers, no lease, no hold renewed', async () => {
    const user = await signUp()
    const settings = { FILES_QUOTA_BYTES: String(MiB) }
    const created = await callWithSettings(settings, 'POST', '/files/tus', {
      token: user.token,
      headers: { ...TUS, 'upload-length': String(600 * 1024) },
    })
    const path = new URL(created.headers.get('location')!).pathname
    const id = path.split('/').pop()!
    const reservation = () =>
      env.DB.prepare('SELECT bytes, expires_at FROM storage_reservations WHERE id = ?').bind(id).first()
    const before = { upload: await uploadState(path), reservation: await reservation() }
    const bytes = pdfBytes(600 * 1024)
    const patchWith = (token: string, quota = settings) =>
      callWithSettings(quota, 'PATCH', path, {
        token,
        body: bytes,
        headers: {
          ...TUS,
          'upload-offset': '0',
          'content-type': 'application/offset+octet-stream',
          'content-length': String(bytes.length),
        },
      })
    // The quota lowered under the upload's declared size: 413 before any byte.
    const overQuota = await patchWith(user.token, { FILES_QUOTA_BYTES: String(500 * 1024) })
    expect(overQuota.status).toBe(413)
    expect(await overQuota.json()).toMatchObject({ code: 'QUOTA_EXCEEDED' })
    // Logged out: the session check refuses it in the same batch.
    const other = await callJson('POST', '/auth/login', { json: { email: user.email, password: user.password } })
    expect((await call('POST', '/auth/logout', { token: other.body.token })).status).toBeLessThan(300)
    expect((await patchWith(other.body.token)).status).toBe(401)
    expect({ upload: await uploadState(path), reservation: await reservation() }).toEqual(before)
    // Expired: 404.
    await env.DB.prepare('UPDATE uploads SET expires_at = ? WHERE id = ?')
      .bind(Date.now() - 1, id)
      .run()
    const expired = { upload: await uploadState(path), reservation: await reservation() }
    expect((await patchWith(user.token)).status).toBe(404)
    expect({ upload: await uploadState(path), reservation: await reservation() }).toEqual(expired)
    expect(await objectsOf(user)).toEqual([])
  })
})

const partOptions = (user: TestUser, body: BodyInit, length: number) => ({
  token: user.token,
  body,
  headers: { 'content-type': 'application/octet-stream', 'content-length': String(length) },
})

async function partsUpload(user: TestUser, parts: Uint8Array[]) {
  const start = await callJson('POST', '/files/uploads', {
    token: user.token,
    json: { name: 'race.pdf', part_bytes: 5 * MiB },
  })
  expect(start.status).toBe(201)
  const id = start.body.upload_id
  for (const [index, part] of parts.entries())
    expect((await call('PUT', `/files/uploads/${id}/${index + 1}`, partOptions(user, part, part.length))).status).toBe(
      200,
    )
  return id
}

/** Every answer a 2xx, or a 404/409 with its code; never a 5xx. */
function expectClean(answers: { status: number; body: { code?: string } }[], allowed: Record<number, string[]>) {
  for (const { status, body } of answers) {
    if (status < 300) continue
    expect(allowed[status], `status ${status}: ${JSON.stringify(body)}`).toBeDefined()
    expect(allowed[status]).toContain(body.code)
  }
}

/** D1 and R2 agree: every file row has its object, and no object is without a row (the parts of an aborted upload are gone). */
async function expectConsistent(user: TestUser) {
  const rows = await rowsOf(user)
  const keys = (
    await env.DB.prepare('SELECT key FROM files WHERE user_id = ?').bind(user.id).all<{ key: string }>()
  ).results.map((row) => row.key)
  expect((await objectsOf(user)).sort()).toEqual(keys.sort())
  return rows
}

describe('parts API races', { timeout: 180_000 }, () => {
  it('complete racing complete: one 201, the other 409 UPLOAD_COMPLETED (or 404 once the upload is gone), one file', async () => {
    const user = await signUp()
    for (let round = 0; round < 3; round++) {
      const id = await partsUpload(user, [pdfBytes(5 * MiB), pdfBytes(100)])
      const answers = await Promise.all(
        [1, 2].map(async () => answer(await call('POST', `/files/uploads/${id}/complete`, { token: user.token }))),
      )
      expect(answers.filter((a) => a.status === 201)).toHaveLength(1)
      expectClean(answers, { 404: ['UPLOAD_NOT_FOUND'], 409: ['UPLOAD_COMPLETED'] })
    }
    const rows = await expectConsistent(user)
    expect(rows.files).toHaveLength(3)
    expect(rows).toMatchObject({ uploads: [], reservations: 0 })
  })

  it("complete racing the upload's deletion: each answers 2xx or 404/409 with a code, and the file exists only if complete said 201", async () => {
    const user = await signUp()
    for (let round = 0; round < 4; round++) {
      const id = await partsUpload(user, [pdfBytes(5 * MiB), pdfBytes(100)])
      const [completed, deleted] = await Promise.all([
        call('POST', `/files/uploads/${id}/complete`, { token: user.token }).then(answer),
        call('DELETE', `/files/uploads/${id}`, { token: user.token }).then(answer),
      ])
      expectClean([completed, deleted], { 404: ['UPLOAD_NOT_FOUND'], 409: ['UPLOAD_COMPLETED'] })
      const file = await env.DB.prepare('SELECT id FROM files WHERE id = ?').bind(id).first()
      expect(Boolean(file)).toBe(completed.status === 201)
      expect(completed.status === 201 && deleted.status === 200).toBe(false)
    }
    const rows = await expectConsistent(user)
    expect(rows).toMatchObject({ uploads: [], reservations: 0 })
  })

  it('a part still sending when the upload completes: complete 201 with the parts it had, the part 409 UPLOAD_COMPLETED', async () => {
    const user = await signUp()
    const first = pdfBytes(5 * MiB)
    const last = pdfBytes(100)
    const id = await partsUpload(user, [first, last])
    const held = heldBody()
    const replacement = new Uint8Array(100).fill(9)
    held.send(replacement.slice(0, 50))
    const part = call('PUT', `/files/uploads/${id}/2`, partOptions(user, held.body, 100))
    await settle()
    const completed = await answer(await call('POST', `/files/uploads/${id}/complete`, { token: user.token }))
    expect(completed).toMatchObject({ status: 201, body: { size: first.length + last.length } })
    held.send(replacement.slice(50))
    held.end()
    expect(await answer(await part)).toEqual({
      status: 409,
      body: { message: 'the upload was completed by another request', code: 'UPLOAD_COMPLETED' },
    })
    const download = await call('GET', `/files/${id}/download`, { token: user.token })
    expect((await download.arrayBuffer()).byteLength).toBe(first.length + last.length)
    await expectConsistent(user)
  })

  it('a part still sending when the upload is deleted: 404, nothing left', async () => {
    const user = await signUp()
    const id = await partsUpload(user, [pdfBytes(5 * MiB)])
    const held = heldBody()
    held.send(new Uint8Array(50))
    const part = call('PUT', `/files/uploads/${id}/2`, partOptions(user, held.body, 100))
    await settle()
    expect((await call('DELETE', `/files/uploads/${id}`, { token: user.token })).status).toBe(200)
    held.send(new Uint8Array(50))
    held.end()
    expect(await answer(await part)).toEqual({
      status: 404,
      body: { message: 'upload not found', code: 'UPLOAD_NOT_FOUND' },
    })
    expect(await expectConsistent(user)).toEqual({ files: [], uploads: [], reservations: 0 })
  })

  it('a part and complete sent at once: never a 5xx, and the file is whole', async () => {
    const user = await signUp()
    for (let round = 0; round < 3; round++) {
      const last = pdfBytes(100)
      const id = await partsUpload(user, [pdfBytes(5 * MiB), last])
      const answers = await Promise.all([
        call('PUT', `/files/uploads/${id}/2`, partOptions(user, last, last.length)).then(answer),
        call('POST', `/files/uploads/${id}/complete`, { token: user.token }).then(answer),
      ])
      expectClean(answers, { 404: ['UPLOAD_NOT_FOUND'], 409: ['UPLOAD_COMPLETED'] })
      expect(answers[1]!.status).toBe(201)
    }
    await expectConsistent(user)
  })
})
