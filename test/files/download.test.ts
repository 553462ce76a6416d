// GET /files/:id/download: byte-identical streams, ranges, conditional requests, dispositions, signed URLs.
import { env } from 'cloudflare:test'
import { beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../worker/config'
import { requestedRange } from '../../worker/files/download'
import { signFileToken } from '../../worker/files/signed-url'
import { call, callJson } from '../support/api'
import { signUp, type TestUser } from '../support/accounts'
import { downloadBytes, multipartBody, uploaded } from '../support/files'

let user: TestUser
let file: Awaited<ReturnType<typeof uploaded>>
const bytes = new Uint8Array(100_000).map((_, i) => (i * 7) % 256)

beforeAll(async () => {
  user = await signUp()
  file = await uploaded(user, 'data "x";\r\nX-Evil: 1.bin', bytes)
})

const pathOf = (url: string) => url.replace('http://edgefloor.test', '')

async function validators(id = file._id) {
  const res = await call('GET', `/files/${id}/download`, { token: user.token })
  await res.body?.cancel()
  return { etag: res.headers.get('etag')!, lastModified: res.headers.get('last-modified')! }
}

describe('requestedRange', () => {
  it.each([
    ['bytes=0-9', 100, { offset: 0, length: 10 }],
    ['bytes=90-', 100, { offset: 90, length: 10 }],
    ['bytes=90-1000', 100, { offset: 90, length: 10 }],
    ['bytes=99-99', 100, { offset: 99, length: 1 }],
    ['bytes=-10', 100, { offset: 90, length: 10 }],
    ['bytes=-1000', 100, { offset: 0, length: 100 }],
    ['BYTES= 0-0 ', 100, { offset: 0, length: 1 }],
    ['bytes=100-', 100, 'unsatisfiable'],
    ['bytes=100-200', 100, 'unsatisfiable'],
    ['bytes=-0', 100, 'unsatisfiable'],
    ['bytes=0-', 0, 'unsatisfiable'],
    ['bytes=-5', 0, 'unsatisfiable'],
    ['bytes=5-2', 100, undefined],
    ['bytes=-', 100, undefined],
    ['bytes=0-1,3-4', 100, undefined],
    ['bytes=a-b', 100, undefined],
    [null, 100, undefined],
  ])('%s of %i bytes → %o', (header, size, expected) => {
    expect(requestedRange(header, size)).toEqual(expected)
  })
})

describe('download', () => {
  it('streams the exact bytes with the caching headers', async () => {
    const { res, bytes: body } = await downloadBytes(`/files/${file._id}/download`, { token: user.token })
    expect(res.status).toBe(200)
    expect(body).toEqual(bytes)
    expect(res.headers.get('content-length')).toBe(String(bytes.length))
    expect(res.headers.get('accept-ranges')).toBe('bytes')
    expect(res.headers.get('etag')).toMatch(/^"[0-9a-f]+"$/)
    expect(res.headers.get('last-modified')).toMatch(/GMT$/)
    expect(res.headers.get('x-content-type-options')).toBe('nosniff')
  })

  it('writes a Content-Disposition no name can break out of', async () => {
    const inline = await call('GET', `/files/${file._id}/download`, { token: user.token })
    expect(inline.headers.get('content-disposition')).toBe(
      `inline; filename="data _x__X-Evil: 1.bin"; filename*=UTF-8''data%20%22x%22%3BX-Evil%3A%201.bin`,
    )
    expect(inline.headers.get('x-evil')).toBeNull()
    for (const query of ['download=1', 'force=1']) {
      const res = await call('GET', `/files/${file._id}/download?${query}`, { token: user.token })
      expect(res.headers.get('content-disposition')).toMatch(/^attachment; /)
      await res.body?.cancel()
    }
    await inline.body?.cancel()
  })

  it.each([
    ['bytes=0-9', 0, 10],
    ['bytes=99990-', 99_990, 10],
    ['bytes=-5', 99_995, 5],
  ])('answers Range %s with 206', async (range, offset, length) => {
    const { res, bytes: body } = await downloadBytes(`/files/${file._id}/download`, {
      token: user.token,
      headers: { range },
    })
    expect(res.status).toBe(206)
    expect(res.headers.get('content-range')).toBe(`bytes ${offset}-${offset + length - 1}/${bytes.length}`)
    expect(body).toEqual(bytes.slice(offset, offset + length))
  })

  it.each([
    ['an end past the file, clamped', 'bytes=99990-200000', 99_990, 10],
    ['a suffix longer than the file: all of it', 'bytes=-200000', 0, 100_000],
  ])('answers 206 to %s', async (_case, range, offset, length) => {
    const { res, bytes: body } = await downloadBytes(`/files/${file._id}/download`, {
      token: user.token,
      headers: { range },
    })
    expect(res.status).toBe(206)
    expect(res.headers.get('content-range')).toBe(`bytes ${offset}-${offset + length - 1}/${bytes.length}`)
    expect(res.headers.get('content-length')).toBe(String(length))
    expect(body).toEqual(bytes.slice(offset, offset + length))
  })

  it.each(['bytes=100000-', 'bytes=200000-300000', 'bytes=-0'])(
    'answers Range %s, which starts past the end, with 416',
    async (range) => {
      const res = await callJson('GET', `/files/${file._id}/download`, { token: user.token, headers: { range } })
      expect(res.status).toBe(416)
      expect(res.headers.get('content-range')).toBe(`bytes */${bytes.length}`)
      expect(res.body).toMatchObject({ message: 'the requested range is not satisfiable' })
    },
  )

  it.each(['bytes=5-2', 'items=0-1', 'bytes=0-1,5-6'])(
    'ignores a Range it cannot serve (%s) and sends the whole file',
    async (range) => {
      const { res, bytes: body } = await downloadBytes(`/files/${file._id}/download`, {
        token: user.token,
        headers: { range },
      })
      expect(res.status).toBe(200)
      expect(body).toEqual(bytes)
    },
  )

  it('answers 412 when If-Match or If-Unmodified-Since fails, and streams when they hold', async () => {
    const { etag, lastModified } = await validators()
    const failing: Record<string, string>[] = [
      { 'if-match': '"not-the-etag"' },
      { 'if-match': `W/${etag}` },
      { 'if-unmodified-since': new Date(Date.parse(lastModified) - 1000).toUTCString() },
    ]
    for (const headers of failing) {
      const res = await callJson('GET', `/files/${file._id}/download`, { token: user.token, headers })
      expect(res.status, JSON.stringify(headers)).toBe(412)
      expect(res.body).toMatchObject({
        message: "the file does not match the request's If-Match or If-Unmodified-Since",
        code: 'PRECONDITION_FAILED',
      })
      expect(res.headers.get('etag')).toBe(etag)
    }
    const holding: Record<string, string>[] = [
      { 'if-match': etag },
      { 'if-match': `"other", ${etag}` },
      { 'if-match': '*' },
      { 'if-unmodified-since': lastModified },
    ]
    for (const headers of holding) {
      const { res, bytes: body } = await downloadBytes(`/files/${file._id}/download`, { token: user.token, headers })
      expect(res.status, JSON.stringify(headers)).toBe(200)
      expect(body).toEqual(bytes)
    }
    // Preconditions come before the range: a failed If-Match wins over an unsatisfiable range.
    const both = await callJson('GET', `/files/${file._id}/download`, {
      token: user.token,
      headers: { 'if-match': '"x"', range: 'bytes=999999-' },
    })
    expect(both.status).toBe(412)
  })

  it('serves the range only while If-Range still matches', async () => {
    const { etag } = await validators()
    const current = await downloadBytes(`/files/${file._id}/download`, {
      token: user.token,
      headers: { range: 'bytes=0-9', 'if-range': etag },
    })
    expect(current.res.status).toBe(206)
    expect(current.bytes).toEqual(bytes.slice(0, 10))
    const stale = await downloadBytes(`/files/${file._id}/download`, {
      token: user.token,
      headers: { range: 'bytes=0-9', 'if-range': '"stale"' },
    })
    expect(stale.res.status).toBe(200)
    expect(stale.bytes).toEqual(bytes)
  })

  it('answers 304 to If-None-Match with the current ETag', async () => {
    const first = await call('GET', `/files/${file._id}/download`, { token: user.token })
    await first.body?.cancel()
    const again = await call('GET', `/files/${file._id}/download`, {
      token: user.token,
      headers: { 'if-none-match': first.headers.get('etag')! },
    })
    expect(again.status).toBe(304)
    const later = await call('GET', `/files/${file._id}/download`, {
      token: user.token,
      headers: { 'if-modified-since': new Date(Date.now() + 60_000).toUTCString() },
    })
    expect(later.status).toBe(304)
    expect(later.headers.get('etag')).toBe(first.headers.get('etag'))
    expect(await later.text()).toBe('')
    // If-None-Match decides alone when present: another tag means the file changed, whatever the date says.
    const changed = await downloadBytes(`/files/${file._id}/download`, {
      token: user.token,
      headers: { 'if-none-match': '"older"', 'if-modified-since': new Date(Date.now() + 60_000).toUTCString() },
    })
    expect(changed.res.status).toBe(200)
    expect(changed.bytes).toEqual(bytes)
  })

  it('changes its ETag when the content is replaced', async () => {
    const mine = await uploaded(user, 'v.txt', 'version 1')
    const { etag } = await validators(mine._id)
    expect(etag).toBe(`"${mine.hash}"`)
    const replaced = await callJson('PUT', `/files/${mine._id}`, {
      token: user.token,
      body: multipartBody('v.txt', 'version 2'),
    })
    expect(replaced.status).toBe(200)
    const res = await callJson('GET', `/files/${mine._id}/download`, {
      token: user.token,
      headers: { 'if-match': etag },
    })
    expect(res.status).toBe(412)
    const again = await call('GET', `/files/${mine._id}/download`, {
      token: user.token,
      headers: { 'if-none-match': etag },
    })
    expect(again.status).toBe(200)
    expect(await again.text()).toBe('version 2')
  })

  it('needs a bearer token or a signed URL', async () => {
    const res = await call('GET', `/files/${file._id}/download`)
    expect(res.status).toBe(401)
  })

  it('works from the signed url without a token, and not once tampered or expired', async () => {
    const { res, bytes: body } = await downloadBytes(pathOf(file.url))
    expect(res.status).toBe(200)
    expect(body).toEqual(bytes)
    const token = new URL(file.url).searchParams.get('token')!
    const tampered = token.slice(0, -2) + (token.endsWith('AA') ? 'BB' : 'AA')
    expect((await call('GET', `/files/${file._id}/download?token=${tampered}`)).status).toBe(401)
    const config = loadConfig(env)
    const owner = await env.DB.prepare('SELECT id, security_stamp AS securityStamp FROM users WHERE id = ?')
      .bind(user.id)
      .first<{ id: string; securityStamp: string }>()
    const expired = await signFileToken(config, file._id, owner!, Date.now() - 2 * 3600_000)
    expect((await call('GET', `/files/${file._id}/download?token=${expired}`)).status).toBe(401)
    const other = await uploaded(user, 'other.txt', 'o')
    expect((await call('GET', `/files/${other._id}/download?token=${token}`)).status).toBe(401)
  })

  it('stops working once the file is deleted (401, as for any id the link was not signed for)', async () => {
    const doomed = await uploaded(user, 'gone.txt', 'bye')
    await call('DELETE', `/files/${doomed._id}`, { token: user.token })
    expect((await call('GET', pathOf(doomed.url))).status).toBe(401)
  })
})
