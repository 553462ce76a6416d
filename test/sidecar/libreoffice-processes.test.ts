// The sidecar's LibreOffice processes for real: what happens when a conversion passes the timeout, when LibreOffice
// is killed mid-conversion, and after `restartAfter` conversions (its warm standby). A file of its own, beside
// libreoffice.test.ts: these tests wait on whole LibreOffice starts, so the two files run side by side.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningSidecar } from '../../sidecar/server'
import { busyOffice, signalOffice, until } from '../support/office-pool'
import { convert, fixture, isRunning, start, text } from '../support/sidecar-runs'

// One LibreOffice for the test that kills it (the others start their own with the options they need).
let shared: RunningSidecar
beforeAll(async () => {
  shared = await start()
})
afterAll(() => shared?.close())

describe('sidecar: LibreOffice processes', () => {
  // 300,000 rows (14 MB): seconds of LibreOffice work, so the tests below find it still converting when they freeze
  // or kill it; the 10 s timeout leaves room for the next small document on a freshly started LibreOffice under
  // load (the timeout applies to that document too).
  const slowCsv = text(
    [
      'name,amount,note',
      ...Array.from({ length: 300_000 }, (_, i) => `item ${i},${i * 3},a longer note for row ${i}`),
    ].join('\n'),
  )

  it('answers 503 when a conversion passes the timeout, kills that LibreOffice and converts the next document', async () => {
    const hurried = await start({ timeoutMs: 10_000 })
    try {
      const first = hurried.pool.stats.processes[0]!.pid
      const pending = convert(hurried, 'slow.csv', slowCsv)
      // Frozen, the conversion passes the timeout whatever the machine's speed.
      signalOffice(await busyOffice(hurried), 'STOP')
      const slow = await pending
      expect(slow.status).toBe(503)
      expect(new TextDecoder().decode(slow.body)).toContain('longer than 10000 ms')
      const next = await convert(hurried, 'hello.rtf', fixture('hello.rtf'))
      expect(next.status, new TextDecoder().decode(next.body).slice(0, 300)).toBe(200)
      expect(hurried.pool.stats.processes[0]!.pid).not.toBe(first)
    } finally {
      await hurried.close()
    }
  }, 180_000)

  it('answers 503 when LibreOffice is killed mid-conversion, restarts it, and converts the retry', async () => {
    const pending = convert(shared, 'slow.csv', slowCsv)
    signalOffice(await busyOffice(shared), 'KILL')
    const killed = await pending
    expect(killed.status).toBe(503)
    expect(new TextDecoder().decode(killed.body)).toContain('LibreOffice stopped during the conversion')
    const retry = await convert(shared, 'hello.docx', fixture('hello.docx'))
    expect(retry.status).toBe(200)
  }, 180_000)

  it('retires each LibreOffice after restartAfter conversions: its warm standby takes over, and it quits', async () => {
    const sidecar = await start({ restartAfter: 2 })
    try {
      const first = sidecar.pool.stats.processes[0]!.pid!
      for (let i = 0; i < 2; i++) expect((await convert(sidecar, 'hello.rtf', fixture('hello.rtf'))).status).toBe(200)
      // The standby warms up beside the first process, and replaces it once it is ready (under load: seconds).
      await until(() => sidecar.pool.stats.processes[0]!.pid !== first, 'the standby taking over', 120_000)
      expect((await convert(sidecar, 'hello.rtf', fixture('hello.rtf'))).status).toBe(200)
      await until(() => !isRunning(first), 'the retired LibreOffice quitting', 30_000)
    } finally {
      await sidecar.close()
    }
  }, 180_000)
})
