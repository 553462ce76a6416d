// Resumable uploads: an R2 multipart upload across requests, completed into a normal file record.
import { env } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { call, callJson, callJsonWithSettings, type CallOptions } from '../support/api'
import { signUp, type TestUser } from '../support/accounts'
import { sha256Hex } from '../support/bytes'

const MiB = 1024 * 1024

const partRequest = (user: TestUser, bytes: Uint8Array): CallOptions => ({
  token: user.token,
  body: bytes,
  headers: { 'content-type': 'application/octet-stream', 'content-length': String(bytes.length) },
})

const sendPart = (user: TestUser, uploadId: string, part: number, bytes: Uint8Array) =>
  callJson('PUT', `/files/uploads/${uploadId}/${part}`, partRequest(user, bytes))

/** The same routes on a Worker built with other limits (same D1 and R2, so an upload carries over). */
const withSettings = callJsonWithSettings

describe('resumable uploads', { timeout: 120_000 }, () => {
  it('stores parts sent in separate requests (in any order, one twice) and completes them into a file', async () => {
    const user = await signUp()
    const start = await callJson('POST', '/files/uploads', {
      token: user.token,
      json: { name: 'big%20video.pdf', prefix: 'media/@user._id', modified: 1700000000000, part_bytes: 5 * MiB },
    })
    expect(start).toMatchObject({
      status: 201,
      body: { name: 'big video.pdf', parts: [], part_bytes: 5 * MiB, min_part_bytes: 5 * MiB },
    })
    const id = start.body.upload_id
    const first = new Uint8Array(5 * MiB).map((_, i) => i % 253)
    first.set(new TextEncoder().encode('%PDF-1.7\n'))
    const second = new Uint8Array(1234).fill(7)
    expect((await sendPart(user, id, 2, second)).body).toMatchObject({ part: 2, size: 1234 })
    expect((await sendPart(user, id, 1, new Uint8Array(5 * MiB))).status).toBe(200)
    expect((await sendPart(user, id, 1, first)).status).toBe(200) // a retried part replaces the first try
    const resumed = await callJson('GET', `/files/uploads/${id}`, { token: user.token })
    expect(resumed.body.parts).toEqual([
      { part: 1, size: 5 * MiB },
      { part: 2, size: 1234 },
    ])
    const done = await callJson('POST', `/files/uploads/${id}/complete`, { token: user.token })
    const whole = new Uint8Array(first.length + second.length)
    whole.set(first)
    whole.set(second, first.length)
    expect(done.status).toBe(201)
    expect(done.body).toMatchObject({
      name: 'big video.pdf',
      extension: '.pdf',
      content_type: 'application/pdf',
      size: whole.length,
      hash: await sha256Hex(whole),
      prefix: `media/${user.id}`,
    })
    const download = await call('GET', `/files/${done.body._id}/download`, { token: user.token })
    expect(new Uint8Array(await download.arrayBuffer())).toEqual(whole)
    expect((await callJson('GET', `/files/uploads/${id}`, { token: user.token })).status).toBe(404)
  })

  it('R2\'s part rule ("All parts except the last one must be the same size"): parts of 8, 6 and 3 MiB are refused at the third with 400 naming part_bytes', async () => {
    const user = await signUp()
    const start = await callJson('POST', '/files/uploads', { token: user.token, json: { name: 'x.bin' } })
    expect(start.body).toMatchObject({ part_bytes: 8 * MiB, size: null })
    const id = start.body.upload_id
    expect((await sendPart(user, id, 1, new Uint8Array(8 * MiB))).status).toBe(200)
    expect((await sendPart(user, id, 2, new Uint8Array(6 * MiB))).status).toBe(200) // smaller: the last, so far
    const third = await sendPart(user, id, 3, new Uint8Array(3 * MiB))
    expect(third).toMatchObject({
      status: 400,
      body: {
        message: `part 2 has ${6 * MiB} bytes, so it is the last; part 3 cannot follow it (every part but the last must have part_bytes (${8 * MiB}) bytes, and the last no more)`,
        part_bytes: 8 * MiB,
      },
    })
    const larger = await sendPart(user, id, 2, new Uint8Array(8 * MiB + 1))
    expect(larger.body.message).toBe(
      `part 2 has ${8 * MiB + 1} bytes; every part but the last must have part_bytes (${8 * MiB}) bytes, and the last no more`,
    )
    expect((await callJson('GET', `/files/uploads/${id}`, { token: user.token })).body.parts).toEqual([
      { part: 1, size: 8 * MiB },
      { part: 2, size: 6 * MiB },
    ])
  })

  it("with a declared size, every part's size is known: the last one must be exactly the rest", async () => {
    const user = await signUp()
    const start = await callJson('POST', '/files/uploads', {
      token: user.token,
      json: { name: 'x.bin', size: 12 * MiB, part_bytes: 5 * MiB },
    })
    const id = start.body.upload_id
    expect((await sendPart(user, id, 3, new Uint8Array(MiB))).body.message).toBe(
      `part 3 has ${MiB} bytes; it needs ${2 * MiB} (every part but the last must have part_bytes (${5 * MiB}) bytes, and the last no more, and the size is ${12 * MiB})`,
    )
    expect((await sendPart(user, id, 4, new Uint8Array(MiB))).status).toBe(400)
    expect((await sendPart(user, id, 1, new Uint8Array(4 * MiB))).status).toBe(400)
    const sizes = await callJson('POST', '/files/uploads', {
      token: user.token,
      json: { name: 'x.bin', part_bytes: 4 * MiB },
    })
    expect(sizes).toMatchObject({
      status: 400,
      body: { message: `part_bytes must be a whole number from ${5 * MiB} to ${95 * MiB} (FILES_MAX_PART_BYTES)` },
    })
  })

  it('refuses to complete with a missing part, and aborts leaving nothing', async () => {
    const user = await signUp()
    const id = (
      await callJson('POST', '/files/uploads', { token: user.token, json: { name: 'x.bin', part_bytes: 5 * MiB } })
    ).body.upload_id
    expect((await callJson('POST', `/files/uploads/${id}/complete`, { token: user.token })).body.message).toBe(
      'the upload has no parts yet',
    )
    await sendPart(user, id, 1, new Uint8Array(5 * MiB))
    await sendPart(user, id, 3, new Uint8Array(100))
    expect((await callJson('POST', `/files/uploads/${id}/complete`, { token: user.token })).body.message).toBe(
      'part 2 is missing',
    )
    expect((await callJson('DELETE', `/files/uploads/${id}`, { token: user.token })).status).toBe(200)
    expect((await callJson('GET', `/files/uploads/${id}`, { token: user.token })).status).toBe(404)
    expect((await env.BUCKET.list({ prefix: `u/${user.id}/` })).objects).toEqual([])
    expect(await env.DB.prepare('SELECT count(*) AS n FROM upload_parts WHERE upload_id = ?').bind(id).first('n')).toBe(
      0,
    )
  })

  it('refuses bad part numbers and prefixes, and hides uploads from other users', async () => {
    const user = await signUp()
    expect(
      (await callJson('POST', '/files/uploads', { token: user.token, json: { name: 'a', prefix: '../x' } })).status,
    ).toBe(400)
    const id = (await callJson('POST', '/files/uploads', { token: user.token, json: { name: 'a.bin' } })).body.upload_id
    for (const part of ['0', '10001', 'x'])
      expect((await sendPart(user, id, part as unknown as number, new Uint8Array(1))).status).toBe(400)
    const stranger = await signUp()
    expect((await sendPart(stranger, id, 1, new Uint8Array(1))).status).toBe(404)
    expect((await callJson('POST', `/files/uploads/${id}/complete`, { token: stranger.token })).status).toBe(404)
    expect((await callJson('DELETE', `/files/uploads/${id}`, { token: stranger.token })).status).toBe(404)
    expect((await callJson('GET', `/files/uploads/${id}`, { token: user.token })).status).toBe(200)
  })
})

describe('resumable upload limits', { timeout: 120_000 }, () => {
  it('takes files over FILES_MAX_BYTES (its own limit is FILES_MAX_RESUMABLE_BYTES) and tells the limits', async () => {
    const user = await signUp()
    const settings = { FILES_MAX_BYTES: '1024' }
    const start = await withSettings(settings, 'POST', '/files/uploads', {
      token: user.token,
      json: { name: 'big.bin', part_bytes: 5 * MiB },
    })
    expect(start).toMatchObject({
      status: 201,
      body: { min_part_bytes: 5 * MiB, max_part_bytes: 95 * MiB, max_bytes: 5 * 1024 * MiB, max_parts: 10_000 },
    })
    const id = start.body.upload_id
    expect(
      (await withSettings(settings, 'PUT', `/files/uploads/${id}/1`, partRequest(user, new Uint8Array(5 * MiB))))
        .status,
    ).toBe(200)
    expect(
      (await withSettings(settings, 'PUT', `/files/uploads/${id}/2`, partRequest(user, new Uint8Array(10)))).status,
    ).toBe(200)
    const done = await withSettings(settings, 'POST', `/files/uploads/${id}/complete`, { token: user.token })
    expect(done).toMatchObject({ status: 201, body: { size: 5 * MiB + 10 } })
  })

  it('refuses a part over FILES_MAX_PART_BYTES with 413 and stores nothing of it', async () => {
    const user = await signUp()
    const settings = { FILES_MAX_PART_BYTES: String(5 * MiB) }
    const id = (await withSettings(settings, 'POST', '/files/uploads', { token: user.token, json: { name: 'a.bin' } }))
      .body.upload_id
    const res = await withSettings(
      settings,
      'PUT',
      `/files/uploads/${id}/1`,
      partRequest(user, new Uint8Array(5 * MiB + 1)),
    )
    expect(res).toMatchObject({
      status: 413,
      body: {
        message: `a part may have at most ${5 * MiB} bytes; this one has ${5 * MiB + 1}`,
        max_part_bytes: 5 * MiB,
      },
    })
    expect((await callJson('GET', `/files/uploads/${id}`, { token: user.token })).body.parts).toEqual([])
  })

  it('refuses what takes the upload past FILES_MAX_RESUMABLE_BYTES, counting a part sent again once', async () => {
    const user = await signUp()
    const settings = { FILES_MAX_RESUMABLE_BYTES: String(6 * MiB) }
    const tooBig = await withSettings(settings, 'POST', '/files/uploads', {
      token: user.token,
      json: { name: 'a.bin', size: 6 * MiB + 1 },
    })
    expect(tooBig).toMatchObject({
      status: 413,
      body: { message: `the upload would have ${6 * MiB + 1} bytes; a resumable upload may have at most ${6 * MiB}` },
    })
    const id = (
      await withSettings(settings, 'POST', '/files/uploads', {
        token: user.token,
        json: { name: 'a.bin', part_bytes: 5 * MiB },
      })
    ).body.upload_id
    const send = (part: number, bytes: number) =>
      withSettings(settings, 'PUT', `/files/uploads/${id}/${part}`, partRequest(user, new Uint8Array(bytes)))
    expect((await send(1, 5 * MiB)).status).toBe(200)
    expect((await send(1, 5 * MiB)).status).toBe(200)
    const over = await send(2, 2 * MiB)
    expect(over).toMatchObject({
      status: 413,
      body: { message: `the upload would have ${7 * MiB} bytes; a resumable upload may have at most ${6 * MiB}` },
    })
    expect((await send(2, MiB)).status).toBe(200)
    // A lower limit at completion refuses it too, and loses nothing: the parts wait for a retry.
    const lower = await withSettings(
      { FILES_MAX_RESUMABLE_BYTES: String(5 * MiB) },
      'POST',
      `/files/uploads/${id}/complete`,
      { token: user.token },
    )
    expect(lower.status).toBe(413)
    expect((await callJson('GET', `/files/uploads/${id}`, { token: user.token })).body.parts).toHaveLength(2)
    expect((await withSettings(settings, 'POST', `/files/uploads/${id}/complete`, { token: user.token })).status).toBe(
      201,
    )
  })

  it('refuses parts past the quota', async () => {
    const user = await signUp()
    const settings = { FILES_QUOTA_BYTES: String(5 * MiB + 100) }
    const id = (
      await withSettings(settings, 'POST', '/files/uploads', {
        token: user.token,
        json: { name: 'a.bin', part_bytes: 5 * MiB },
      })
    ).body.upload_id
    expect(
      (await withSettings(settings, 'PUT', `/files/uploads/${id}/1`, partRequest(user, new Uint8Array(5 * MiB))))
        .status,
    ).toBe(200)
    const over = await withSettings(settings, 'PUT', `/files/uploads/${id}/2`, partRequest(user, new Uint8Array(101)))
    expect(over).toMatchObject({ status: 413, body: { code: 'QUOTA_EXCEEDED', used: 0, quota: 5 * MiB + 100 } })
    expect(
      (await withSettings(settings, 'PUT', `/files/uploads/${id}/2`, partRequest(user, new Uint8Array(100)))).status,
    ).toBe(200)
  })
})
