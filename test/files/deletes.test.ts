// Deleting bytes: one batched delete (R2 takes "up to 1000 keys" a call), nothing a committed record points at is
// ever deleted, and keys that fail to delete are recorded and retried by the scheduled sweep.
import { createScheduledController, env } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { consumerHandlers } from '../../worker/consumer'
import { localEngines } from '../../worker/engine-workers/local'
import { openDatabase } from '../../worker/db/client'
import { deleteObjects, R2_DELETE_MAX_KEYS } from '../../worker/files/objects'
import { findOwnedFile } from '../../worker/files/records'
import { replaceFileContent } from '../../worker/files/store'
import { call } from '../support/api'
import { signUp } from '../support/accounts'
import { uploaded } from '../support/files'

const consumer = consumerHandlers(() => localEngines)

/** The real local bucket, with deletes that fail for the keys `isRefused` picks, and every delete call counted. */
function bucketRefusingDeletes(isRefused: (key: string) => boolean) {
  const calls: string[][] = []
  const bucket = new Proxy(env.BUCKET, {
    get(target, property) {
      if (property === 'delete') {
        return async (keys: string | string[]) => {
          const list = Array.isArray(keys) ? keys : [keys]
          calls.push(list)
          if (list.some(isRefused)) throw new Error('R2 is unavailable (test)')
          return target.delete(list)
        }
      }
      const value = Reflect.get(target, property)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
  return { bucket, calls }
}

const pendingKeys = async () =>
  (await env.DB.prepare('SELECT key FROM pending_deletes ORDER BY key').all<{ key: string }>()).results.map(
    (row) => row.key,
  )

/** The Worker's scheduled export, as the Cron Trigger calls it. */
async function runScheduled() {
  await consumer.scheduled(createScheduledController({ cron: '*/15 * * * *' }), env)
}

describe('deleting objects', { timeout: 120_000 }, () => {
  it('keeps the new object of a replace whose old-object delete fails, and the sweep deletes the old one later', async () => {
    const user = await signUp()
    const file = await uploaded(user, 'notes.txt', 'old content')
    const db = openDatabase(env.DB)
    const row = await findOwnedFile(db, user.id, file._id)
    const { bucket } = bucketRefusingDeletes((key) => key === row.key)
    const updated = await replaceFileContent({ db, bucket }, row, {
      name: 'notes.txt',
      extension: '.txt',
      contentType: 'text/plain',
      body: new TextEncoder().encode('new content'),
    })
    expect(updated.key).not.toBe(row.key)
    // The committed record's object is there, and the download answers the new bytes.
    expect(await (await env.BUCKET.get(updated.key))?.text()).toBe('new content')
    expect(await (await call('GET', `/files/${file._id}/download`, { token: user.token })).text()).toBe('new content')
    // The old object outlived its record: recorded, not lost track of.
    expect(await env.BUCKET.head(row.key)).not.toBeNull()
    expect(await pendingKeys()).toContain(row.key)
    await runScheduled()
    expect(await env.BUCKET.head(row.key)).toBeNull()
    expect(await pendingKeys()).not.toContain(row.key)
    expect(await (await env.BUCKET.get(updated.key))?.text()).toBe('new content')
  })

  it('deletes 2,500 keys in calls of at most 1000, and records only the keys of the call that failed', async () => {
    const keys = Array.from({ length: 2500 }, (_, index) => `test/deletes/${String(index).padStart(4, '0')}`)
    const { bucket, calls } = bucketRefusingDeletes((key) => key === 'test/deletes/1500')
    const failed = await deleteObjects(openDatabase(env.DB), bucket, keys)
    expect(calls.map((batch) => batch.length)).toEqual([R2_DELETE_MAX_KEYS, R2_DELETE_MAX_KEYS, 500])
    expect(failed).toBe(R2_DELETE_MAX_KEYS)
    const pending = await pendingKeys()
    expect(pending.filter((key) => key.startsWith('test/deletes/'))).toEqual(keys.slice(1000, 2000))
    await runScheduled()
    expect((await pendingKeys()).filter((key) => key.startsWith('test/deletes/'))).toEqual([])
  })

  it('never sweeps a key that a record points at again', async () => {
    const user = await signUp()
    const file = await uploaded(user, 'kept.txt', 'still here')
    const row = await findOwnedFile(openDatabase(env.DB), user.id, file._id)
    await env.DB.prepare('INSERT INTO pending_deletes (key, attempts, created_at) VALUES (?, 1, 0)').bind(row.key).run()
    await runScheduled()
    expect(await (await env.BUCKET.get(row.key))?.text()).toBe('still here')
    expect(await pendingKeys()).not.toContain(row.key)
  })
})
