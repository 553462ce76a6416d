// The Worker's Office conversions when the sidecar fails under them, through the real Queue: LibreOffice killed
// mid-conversion (the sidecar answers 503, the step is retried and the job completes), and the sidecar out of
// reach (every attempt fails as transient until it answers again, then the job completes). Faults are injected
// for this test's job only (test/setup/sidecar.ts): the sidecar other test files convert with stays up.
import { describe, expect, inject, it } from 'vitest'
import { callJson } from '../support/api'
import { signUp } from '../support/accounts'
import { uploaded } from '../support/files'
import { pollJob } from '../support/jobs'
import { until } from '../support/until'

async function control(
  action: 'kill-office' | 'unreachable' | 'reachable' | 'refused',
  query: Record<string, string>,
): Promise<string> {
  const response = await fetch(`${inject('sidecarControlUrl')}/${action}?${new URLSearchParams(query)}`, {
    method: action === 'refused' ? 'GET' : 'POST',
  })
  const text = await response.text()
  if (!response.ok) throw new Error(`sidecar control ${action}: ${response.status} ${text}`)
  return text
}

describe('Office conversions when the sidecar fails', () => {
  it('retries the step when LibreOffice is killed mid-conversion, and completes the job', async () => {
    const user = await signUp()
    // Enough rows to keep LibreOffice busy for seconds, even on a fast machine; only the first page is exported.
    const rows = [
      'name,amount,note',
      ...Array.from({ length: 60_000 }, (_, i) => `item ${i},${i * 3},a longer note for row ${i}`),
    ]
    const csv = await uploaded(user, 'ledger.csv', rows.join('\n'))
    const started = await callJson('POST', `/files/${csv._id}/convert`, {
      token: user.token,
      headers: { prefer: 'respond-async' },
      json: { options: { nativePageRanges: '1' } },
    })
    expect(started.status).toBe(202)
    // The LibreOffice working for this job (its id is the Gotenberg-Trace), not one converting another file's.
    expect(await control('kill-office', { trace: started.body._id })).toBe('killed')
    const view = await pollJob(started.body._id, user)
    expect(view.status).toBe('done')
    const office = view.steps.find((step) => step.converter === 'office-to-pdf')
    expect(office?.attempts).toBeGreaterThanOrEqual(2)
    expect(view.files.map((file) => file.name)).toEqual(['ledger (1 of 1)', 'ledger (1 of 1)'])
  })

  it('keeps retrying while the sidecar is out of reach, and completes once it answers again', async () => {
    const user = await signUp()
    // The marker in the document is what the sidecar's front recognises: this job's requests go unanswered from
    // the first attempt on, before the test knows the job's id.
    const marker = `unreachable-${crypto.randomUUID()}`
    await control('unreachable', { marker })
    try {
      const csv = await uploaded(user, 'memo.csv', `name,note\nmemo,${marker}\n`)
      const started = await callJson('POST', `/files/${csv._id}/convert`, {
        token: user.token,
        headers: { prefer: 'respond-async' },
      })
      expect(started.status).toBe(202)
      const failing = await pollJob(started.body._id, user, (view) =>
        /cannot be reached/.test(view.steps[0]?.error ?? ''),
      )
      expect(failing.status).not.toBe('failed')
      expect(failing.steps[0]?.error).toBe('retrying: the document converter cannot be reached')
      // Every request dropped was this job's.
      const refused: string[] = JSON.parse(
        await until(
          'a request of the job dropped',
          () => control('refused', { marker }),
          (text) => text !== '[]',
        ),
      )
      expect(new Set(refused)).toEqual(new Set([started.body._id]))
      await control('reachable', { marker })
      const view = await pollJob(started.body._id, user)
      expect(view.status).toBe('done')
      expect(view.files.map((file) => file.name)).toEqual(['memo (1 of 1)', 'memo (1 of 1)'])
    } finally {
      await control('reachable', { marker })
    }
  })
})
