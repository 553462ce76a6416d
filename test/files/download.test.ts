// GET /files/:id/download: byte-identical streams, ranges, conditional requests, dispositions, signed URLs.
import { env } from 'cloudflare:test'
import { beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../worker/config'
import { signFileToken } from '../../worker/files/signed-url'
import { call } from '../support/api'
import { signUp, type TestUser } from '../support/accounts'
import { downloadBytes, uploaded } from '../support/files'

let user: TestUser
let file: Awaited<ReturnType<typeof uploaded>>
const bytes = new Uint8Array(100_000).map((_, i) => (i * 7) % 256)

beforeAll(async () => {
  user = await signUp()
  file = await uploaded(user, 'data "x";\r\nX-Evil: 1.bin', bytes)
})

const pathOf = (url: string) => url.replace('http://edgefloor.test', '')

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
    const { res, bytes: body } = await downloadBytes(`/files/${file._id}/download`, { token: user.token, headers: { range } })
    expect(res.status).toBe(206)
    expect(res.headers.get('content-range')).toBe(`bytes ${offset}-${offset + length - 1}/${bytes.length}`)
    expect(body).toEqual(bytes.slice(offset, offset + length))
  })

  it('answers 304 to If-None-Match with the current ETag', async () => {
    const first = await call('GET', `/files/${file._id}/download`, { token: user.token })
    await first.body?.cancel()
    const again = await call('GET', `/files/${file._id}/download`, { token: user.token, headers: { 'if-none-match': first.headers.get('etag')! } })
    expect(again.status).toBe(304)
    const later = await call('GET', `/files/${file._id}/download`, { token: user.token, headers: { 'if-modified-since': new Date(Date.now() + 60_000).toUTCString() } })
    expect(later.status).toBe(304)
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
    const expired = await signFileToken(config, file._id, user.id, Date.now() - 2 * 3600_000)
    expect((await call('GET', `/files/${file._id}/download?token=${expired}`)).status).toBe(401)
    const other = await uploaded(user, 'other.txt', 'o')
    expect((await call('GET', `/files/${other._id}/download?token=${token}`)).status).toBe(401)
  })

  it('stops working once the file is deleted', async () => {
    const doomed = await uploaded(user, 'gone.txt', 'bye')
    await call('DELETE', `/files/${doomed._id}`, { token: user.token })
    expect((await call('GET', pathOf(doomed.url))).status).toBe(404)
  })
})
