// Issue 17's hostile-input corpus, every case through the real API and queue: uploaded, converted with POST
// /files/:id/convert, and each must end refused before a job (4xx, no job), in a failed job with its reason, or in
// a bounded success; the original stays byte for byte, and a failed step leaves no record in D1 and no object in R2.
import { env } from 'cloudflare:test'
import { describe, expect, inject, it } from 'vitest'
import { signUp } from '../support/accounts'
import { call, callJson } from '../support/api'
import { uploaded } from '../support/files'
import { HOSTILE_CASES } from './corpus'

/** Every R2 object of the user (the original's and whatever a step wrote). */
async function objectsOf(userId: string): Promise<string[]> {
  const keys: string[] = []
  let cursor: string | undefined
  do {
    const listed = await env.BUCKET.list({ prefix: `u/${userId}/`, cursor })
    keys.push(...listed.objects.map((object) => object.key))
    cursor = listed.truncated ? listed.cursor : undefined
  } while (cursor)
  return keys
}

describe('hostile inputs through the queue', () => {
  it.each(HOSTILE_CASES.map((hostile) => [hostile.name, hostile.why, hostile] as const))(
    '%s (%s) ends as it must, the original intact',
    { timeout: 240_000 },
    async (_name, _why, hostile) => {
      const user = await signUp()
      // An encrypted case comes encrypted by qpdf (test/setup/encrypted-pdfs.ts).
      const bytes = hostile.encryption
        ? Uint8Array.from(atob(inject('encryptedPdfs')[hostile.name]!), (char) => char.charCodeAt(0))
        : await hostile.bytes()
      const source = await uploaded(user, hostile.name, bytes)
      const before = await objectsOf(user.id)
      const res = await callJson('POST', `/files/${source._id}/convert`, { token: user.token })
      const jobs = (await callJson('GET', `/files/${source._id}/jobs`, { token: user.token })).body

      if (hostile.expect === 'refused') {
        expect(res.status).toBeGreaterThanOrEqual(400)
        expect(res.status).toBeLessThan(500)
        expect(res.body).toMatchObject({ message: expect.stringMatching(hostile.reason!), code: expect.any(String) })
        expect(jobs).toEqual([])
      } else if (hostile.expect === 'failed') {
        expect(res.status, JSON.stringify(res.body)).toBeGreaterThanOrEqual(400)
        expect(res.status).toBeLessThan(500)
        expect(res.body).toMatchObject({
          message: expect.stringMatching(hostile.reason!),
          code: 'CONVERSION_FAILED',
          job: expect.any(String),
        })
        expect(jobs).toMatchObject([{ status: 'failed' }])
        // The failed step left nothing: no child record, no object beyond the original's.
        expect((await callJson('GET', `/files/${source._id}`, { token: user.token })).body).toMatchObject({ files: [] })
        expect(await objectsOf(user.id)).toEqual(before)
      } else if (hostile.expect === 'done') {
        expect(res.status, JSON.stringify(res.body)).toBe(200)
        expect(jobs).toMatchObject([{ status: 'done' }])
      } else {
        // Bounded either way: a reason when it fails.
        expect([200, 422], JSON.stringify(res.body)).toContain(res.status)
        if (res.status !== 200) expect(res.body.message).toMatch(hostile.reason ?? /.+/)
      }
      const original = await call('GET', `/files/${source._id}/download`, { token: user.token })
      expect(new Uint8Array(await original.arrayBuffer())).toEqual(bytes)
    },
  )
})
