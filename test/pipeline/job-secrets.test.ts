// A document's password (options.password) through the real Worker and queue: never in an answer, sealed in D1
// while the job runs, gone from the row once it ends.
import { env } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { callJson } from '../support/api'
import { signUp } from '../support/accounts'
import { uploaded } from '../support/files'
import { pollJob } from '../support/jobs'
import { encrypted } from '../fixtures/pdf/pdfs'

const storedOptions = async (jobId: string) => {
  const row = await env.DB.prepare('SELECT options FROM jobs WHERE id = ?').bind(jobId).first<{ options: string }>()
  return JSON.parse(row!.options) as Record<string, unknown>
}

describe('document passwords', () => {
  it('are never returned, are sealed at rest, open the document, and are wiped when the job ends', async () => {
    const user = await signUp()
    const pdf = await uploaded(user, 'locked.pdf', encrypted)
    const started = await callJson('POST', `/files/${pdf._id}/convert`, {
      token: user.token,
      headers: { prefer: 'respond-async' },
      json: { options: { password: 's3cret', landscape: true } },
    })
    expect(started.status).toBe(202)
    expect(started.body.options).toEqual({ landscape: true })
    expect(JSON.stringify(started.body)).not.toContain('s3cret')
    const atRest = await storedOptions(started.body._id)
    expect(JSON.stringify(atRest)).not.toContain('s3cret')
    if ('password' in atRest) expect(atRest.password).toMatch(/^sealed:v1:/)
    const view = await pollJob(started.body._id, user)
    expect(view.status).toBe('done')
    expect(view.files.length).toBeGreaterThan(0)
    expect(JSON.stringify(view)).not.toContain('s3cret')
    expect(await storedOptions(started.body._id)).toEqual({ landscape: true })
  })
})
