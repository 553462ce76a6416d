// FILES_QUOTA_BYTES under parallel writers: bytes are reserved in D1 before they are written (worker/files/quota.ts),
// so simultaneous uploads cannot pass the quota together, and a failed write gives its reservation back.
import { env } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { openDatabase } from '../../worker/db/client'
import { holdQuota, sweepExpiredReservations, usedBytes } from '../../worker/files/quota'
import { callWithSettings } from '../support/api'
import { signUp, type TestUser } from '../support/accounts'
import { multipartBody } from '../support/files'

const MB = 1_000_000
const QUOTA = { FILES_QUOTA_BYTES: String(2 * MB) }

async function storedState(user: TestUser) {
  const objects = await env.BUCKET.list({ prefix: `u/${user.id}/` })
  const stored = await env.DB.prepare(
    'SELECT count(*) AS n, COALESCE(SUM(size), 0) AS bytes FROM files WHERE user_id = ?',
  )
    .bind(user.id)
    .first<{ n: number; bytes: number }>()
  const reservations = await env.DB.prepare('SELECT count(*) AS n FROM storage_reservations WHERE user_id = ?')
    .bind(user.id)
    .first<number>('n')
  return { objects: objects.objects.length, rows: stored!.n, bytes: stored!.bytes, reservations }
}

const upload = (user: TestUser, index: number, headers: Record<string, string>) =>
  callWithSettings(QUOTA, 'POST', '/files', {
    token: user.token,
    body: multipartBody(`part-${index}.bin`, new Uint8Array(1.5 * MB).fill(index)),
    headers,
  })

describe('the storage quota under parallel uploads', { timeout: 120_000 }, () => {
  it('lets exactly one of six simultaneous 1.5 MB uploads with declared sizes through a 2 MB quota', async () => {
    const user = await signUp()
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, index) => upload(user, index, { 'x-edgefloor-size': String(1.5 * MB) })),
    )
    const statuses = answers.map((res) => res.status).sort()
    expect(statuses).toEqual([201, 413, 413, 413, 413, 413])
    for (const res of answers.filter((answer) => answer.status === 413)) {
      expect(await res.json()).toMatchObject({
        code: 'QUOTA_EXCEEDED',
        message: expect.stringMatching(/^storage quota exceeded: /),
        quota: 2 * MB,
      })
    }
    expect(await storedState(user)).toEqual({ objects: 1, rows: 1, bytes: 1.5 * MB, reservations: 0 })
  })

  it('never stores more than the quota from six simultaneous uploads of unknown size, and leaves nothing of the refused', async () => {
    const user = await signUp()
    const answers = await Promise.all(Array.from({ length: 6 }, (_, index) => upload(user, index, {})))
    const accepted = answers.filter((res) => res.status === 201).length
    // Holds grow as the bytes arrive, so two half-way uploads can refuse each other: at most one fits.
    expect(accepted).toBeLessThanOrEqual(1)
    for (const res of answers.filter((answer) => answer.status !== 201)) {
      expect(res.status).toBe(413)
      expect(await res.json()).toMatchObject({
        code: 'QUOTA_EXCEEDED',
        message: expect.stringMatching(/^storage quota exceeded: /),
      })
    }
    expect(await storedState(user)).toEqual({
      objects: accepted,
      rows: accepted,
      bytes: accepted * 1.5 * MB,
      reservations: 0,
    })
  })

  it("counts a held reservation until it is committed or released, and a dead holder's only until it expires", async () => {
    const user = await signUp()
    const db = openDatabase(env.DB)
    const hold = await holdQuota(db, 100, user.id, { bytes: 60 })
    await expect(holdQuota(db, 100, user.id, { bytes: 41 })).rejects.toMatchObject({
      status: 413,
      code: 'QUOTA_EXCEEDED',
      details: { used: 60, quota: 100 },
    })
    await hold.ensure(90)
    expect(await usedBytes(db, user.id)).toBeGreaterThanOrEqual(90)
    await expect(hold.ensure(101)).rejects.toMatchObject({ status: 413 })
    await hold.release()
    expect(await usedBytes(db, user.id)).toBe(0)
    // A holder that died: its reservation stops counting at expiry, and the sweep removes the row.
    await holdQuota(db, 100, user.id, { bytes: 100, ttlMs: -1 })
    expect(await usedBytes(db, user.id)).toBe(0)
    await holdQuota(db, 100, user.id, { bytes: 100 }).then((fresh) => fresh.release())
    expect(await sweepExpiredReservations(db)).toBeGreaterThanOrEqual(1)
    expect((await storedState(user)).reservations).toBe(0)
  })

  it("resizes one reservation across requests when given a stable id (a resumable upload's parts)", async () => {
    const user = await signUp()
    const db = openDatabase(env.DB)
    await holdQuota(db, 100, user.id, { id: 'upload-1', bytes: 40 })
    await holdQuota(db, 100, user.id, { id: 'upload-1', bytes: 80 })
    expect(await usedBytes(db, user.id)).toBe(80)
    await expect(holdQuota(db, 100, user.id, { id: 'upload-1', bytes: 101 })).rejects.toMatchObject({ status: 413 })
    await (await holdQuota(db, 100, user.id, { id: 'upload-1', bytes: 80 })).release()
    expect(await usedBytes(db, user.id)).toBe(0)
  })
})
