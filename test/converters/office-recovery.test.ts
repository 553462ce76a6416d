// The Worker's Office conversions when the sidecar fails under them, through the real Queue: LibreOffice killed
// mid-conversion (the sidecar answers 503, the step is retried and the job completes), and the sidecar down
// altogether (every attempt fails as transient until it listens again, then the job completes).
import { describe, expect, inject, it } from 'vitest'
import type { JobView } from '../../worker/pipeline/jobs'
import { callJson } from '../support/api'
import { officeDocument } from '../support/office-documents'
import { signUp, type TestUser } from '../support/accounts'
import { uploaded } from '../support/files'

const control = (action: 'kill-office' | 'stop' | 'start', trace = '') => fetch(`${inject('sidecarControlUrl')}/${action}${trace && `?trace=${trace}`}`, { method: 'POST' })

async function job(owner: TestUser, id: string): Promise<JobView> {
  return (await callJson<JobView>('GET', `/jobs/${id}`, { token: owner.token })).body
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await read()
    if (done(value) || Date.now() > deadline) return value
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

const finished = (view: JobView) => view.status === 'done' || view.status === 'failed'

describe('Office conversions when the sidecar fails', () => {
  it('retries the step when LibreOffice is killed mid-conversion, and completes the job', async () => {
    const user = await signUp()
    // Enough rows to keep LibreOffice busy for seconds, even on a fast machine; only the first page is exported.
    const rows = ['name,amount,note', ...Array.from({ length: 60_000 }, (_, i) => `item ${i},${i * 3},a longer note for row ${i}`)]
    const csv = await uploaded(user, 'ledger.csv', rows.join('\n'))
    const started = await callJson('POST', `/files/${csv._id}/convert`, { token: user.token, headers: { prefer: 'respond-async' }, json: { options: { nativePageRanges: '1' } } })
    expect(started.status).toBe(202)
    // The LibreOffice working for this job (its id is the Gotenberg-Trace), not one converting another file's.
    expect(await (await control('kill-office', started.body._id)).text()).toBe('killed')
    const view = await until(() => job(user, started.body._id), finished)
    expect(view.status).toBe('done')
    const office = view.steps.find((step) => step.converter === 'office-to-pdf')
    expect(office?.attempts).toBeGreaterThanOrEqual(2)
    expect(view.files.map((file) => file.name)).toEqual(['ledger (1 of 1)', 'ledger (1 of 1)'])
  }, 120_000)

  it('keeps retrying while the sidecar is down, and completes once it is back', async () => {
    const user = await signUp()
    const docx = await uploaded(user, 'memo.docx', officeDocument('hello.docx'))
    await control('stop')
    try {
      const started = await callJson('POST', `/files/${docx._id}/convert`, { token: user.token, headers: { prefer: 'respond-async' } })
      expect(started.status).toBe(202)
      const failing = await until(
        () => job(user, started.body._id),
        (view) => (view.steps[0]?.attempts ?? 0) >= 1 && /cannot be reached/.test(view.steps[0]?.error ?? ''),
      )
      expect(failing.status).not.toBe('failed')
      expect(failing.steps[0]?.error).toBe('retrying: the document converter cannot be reached')
      await control('start')
      const view = await until(() => job(user, started.body._id), finished)
      expect(view.status).toBe('done')
      expect(view.files.map((file) => file.name)).toEqual(['memo (1 of 1)', 'memo (1 of 1)'])
    } finally {
      await control('start')
    }
  }, 120_000)
})
