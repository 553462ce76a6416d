// Previews from the location's cache (worker/previews/edge-cache.ts, the Cache API: "caches.default"): a repeat is
// answered from the cached copy, without D1's preview row or R2, and only after the caller is authorized on the file,
// so a revoked link or token, or a deleted file, stops working at once though the bytes stay cached.
import { env } from 'cloudflare:test'
import { beforeAll, describe, expect, it } from 'vitest'
import { previewCacheKey } from '../../worker/previews/edge-cache'
import { PreviewQuery, previewParams } from '../../worker/previews/params'
import { call, callJson } from '../support/api'
import { signUp, type TestUser } from '../support/accounts'
import { uploaded } from '../support/files'

const WEBP = 'image/webp'

async function previewOf(user: TestUser, text: string) {
  const file = await uploaded(user, 'note.txt', text)
  const record = (await callJson('GET', `/files/${file._id}`, { token: user.token })).body
  const first = await call('GET', `/files/${file._id}/preview?w=64`, { token: user.token, headers: { accept: WEBP } })
  expect(first.status).toBe(200)
  const bytes = new Uint8Array(await first.arrayBuffer())
  const key = previewCacheKey(
    { userId: user.id, hash: record.hash, extension: record.extension, contentType: record.content_type },
    previewParams(PreviewQuery.parse({ w: '64' }), WEBP),
  )
  // The copy is kept after the answer (waitUntil): wait until the location has it.
  await expect.poll(async () => (await caches.default.match(key)) !== undefined).toBe(true)
  return { file, record, bytes, first }
}

let alice: TestUser
beforeAll(async () => {
  alice = await signUp()
})

describe('previews from the edge cache', () => {
  it('answers a repeat from the cached copy: the same bytes and headers, with R2 emptied', async () => {
    const { file, bytes, first } = await previewOf(alice, 'cached at the edge')
    // Every object of the account gone from R2: only the cache can answer now.
    const objects = await env.BUCKET.list({ prefix: `u/${alice.id}/` })
    await env.BUCKET.delete(objects.objects.map((object) => object.key))
    const repeat = await call('GET', `/files/${file._id}/preview?w=64`, {
      token: alice.token,
      headers: { accept: WEBP },
    })
    expect(repeat.status).toBe(200)
    expect(new Uint8Array(await repeat.arrayBuffer())).toEqual(bytes)
    for (const name of ['content-type', 'content-length', 'etag', 'cache-control', 'vary', 'x-content-type-options']) {
      expect(repeat.headers.get(name), name).toBe(first.headers.get(name))
    }
    expect(repeat.headers.get('cache-control')).toBe('private, max-age=0, must-revalidate')
  })

  it('still enforces the authorization: another user, a revoked signed link and a deleted file are refused though cached', async () => {
    const owner = await signUp()
    const { file, record } = await previewOf(owner, 'kept but guarded')
    const stranger = await signUp()
    expect(
      (await call('GET', `/files/${file._id}/preview?w=64`, { token: stranger.token, headers: { accept: WEBP } }))
        .status,
    ).toBe(404)
    const signed = new URL(record.preview_url!).search
    expect((await call('GET', `/files/${file._id}/preview${signed}&w=64`, { headers: { accept: WEBP } })).status).toBe(
      200,
    )
    // Logout everywhere changes the stamp the link was signed with.
    expect((await callJson('POST', '/auth/logout', { token: owner.token, json: { all: true } })).status).toBe(200)
    expect(
      await callJson('GET', `/files/${file._id}/preview${signed}&w=64`, { headers: { accept: WEBP } }),
    ).toMatchObject({ status: 401, body: { code: 'FILE_LINK_INVALID' } })
    expect(
      (await call('GET', `/files/${file._id}/preview?w=64`, { token: owner.token, headers: { accept: WEBP } })).status,
    ).toBe(401)

    const again = await signUp()
    const kept = await previewOf(again, 'deleted later')
    expect((await callJson('DELETE', `/files/${kept.file._id}`, { token: again.token })).status).toBe(200)
    expect(
      (await call('GET', `/files/${kept.file._id}/preview?w=64`, { token: again.token, headers: { accept: WEBP } }))
        .status,
    ).toBe(404)
  })

  it('keys the copy by owner: the same bytes of another account are another entry', async () => {
    const params = previewParams(PreviewQuery.parse({ w: '64' }), WEBP)
    const file = { hash: 'a'.repeat(64), extension: '.txt', contentType: 'text/plain' }
    expect(previewCacheKey({ ...file, userId: 'one' }, params).url).not.toBe(
      previewCacheKey({ ...file, userId: 'two' }, params).url,
    )
    expect(previewCacheKey({ ...file, userId: 'one' }, params).url).not.toBe(
      previewCacheKey({ ...file, userId: 'one' }, { ...params, width: 128 }).url,
    )
  })
})
