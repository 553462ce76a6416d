// One LibreOffice run per document content (issue 32): a DOCX's preview is drawn from its PDF, and its conversion
// continues from the same PDF, whichever comes first; after both the DOCX has one PDF child. Runs are counted where
// they happen, at the sidecar (test/setup/sidecar.ts counts POST /forms/libreoffice/convert per Gotenberg-Trace,
// which is the job id).
import { describe, expect, inject, it } from 'vitest'
import { call, callJson } from '../support/api'
import { signUp, type TestUser } from '../support/accounts'
import { uploaded } from '../support/files'
import { pollJob } from '../support/jobs'
import { officeDocument } from '../support/office-documents'
import { until } from '../support/until'

/** LibreOffice runs the sidecar made for any job of this file. */
async function libreOfficeRuns(user: TestUser, fileId: string): Promise<number> {
  const jobs = (await callJson('GET', `/files/${fileId}/jobs`, { token: user.token })).body
  const response = await fetch(`${inject('sidecarControlUrl')}/runs?trace=${jobs.map((job) => job._id).join(',')}`)
  return Number(await response.text())
}

/** The preview, asked again while it answers 202 (the PDF being made, then the drawing). */
async function previewed(user: TestUser, fileId: string): Promise<number> {
  const answer = await until(
    'the preview',
    () => call('GET', `/files/${fileId}/preview?w=128`, { token: user.token }),
    (res) => res.status !== 202,
    { intervalMs: 250 },
  )
  await answer.arrayBuffer()
  return answer.status
}

/** The default chain (DOCX → PDF → PNG pages), followed to its end; answers the job's files. */
async function converted(user: TestUser, fileId: string) {
  const started = await callJson('POST', `/files/${fileId}/convert`, {
    token: user.token,
    headers: { prefer: 'respond-async' },
    json: {},
  })
  expect(started.status).toBe(202)
  const job = await pollJob(started.body._id, user)
  expect(job).toMatchObject({ status: 'done', error: null })
  return job.files
}

const children = async (user: TestUser, fileId: string) =>
  (await callJson('GET', `/files/${fileId}/files`, { token: user.token })).body

describe('an Office document previewed and converted', { timeout: 240_000 }, () => {
  it("previewed first: the conversion continues from the preview's PDF (one LibreOffice run, one PDF child)", async () => {
    const user = await signUp()
    const docx = await uploaded(user, 'hello.docx', officeDocument('hello.docx'))
    expect(await previewed(user, docx._id)).toBe(200)
    const [pdf] = await children(user, docx._id)
    expect(pdf).toMatchObject({ extension: '.pdf' })

    const made = await converted(user, docx._id)
    // The job's answer names the PDF it continued from, then the pages it made from it.
    expect(made.map((file) => [file.extension, file.parent_file])).toEqual([
      ['.pdf', docx._id],
      ...made.slice(1).map(() => ['.png', pdf!._id]),
    ])
    expect(made[0]!._id).toBe(pdf!._id)
    expect(made.length).toBeGreaterThan(1)
    expect((await children(user, docx._id)).map((child) => child._id)).toEqual([pdf!._id])
    expect(await libreOfficeRuns(user, docx._id)).toBe(1)
    // The jobs listing shows the reused PDF in both jobs.
    const jobs = (await callJson('GET', `/files/${docx._id}/jobs`, { token: user.token })).body
    expect(jobs.map((job) => job.files[0]?._id)).toEqual([pdf!._id, pdf!._id])
  })

  it("converted first: the preview is drawn from the conversion's PDF (one LibreOffice run, one PDF child)", async () => {
    const user = await signUp()
    const docx = await uploaded(user, 'hello.docx', officeDocument('hello.docx'))
    const made = await converted(user, docx._id)
    expect(await previewed(user, docx._id)).toBe(200)
    expect((await children(user, docx._id)).map((child) => child._id)).toEqual([made[0]!._id])
    expect(await libreOfficeRuns(user, docx._id)).toBe(1)
  })

  it("previewed and converted at once: the second waits for the first's PDF instead of converting again", async () => {
    const user = await signUp()
    const docx = await uploaded(user, 'hello.docx', officeDocument('hello.docx'))
    const pending = await call('GET', `/files/${docx._id}/preview?w=128`, {
      token: user.token,
      headers: { prefer: 'respond-async' },
    })
    expect(pending.status).toBe(202)
    await pending.arrayBuffer()
    const made = await converted(user, docx._id)
    expect(await previewed(user, docx._id)).toBe(200)
    expect((await children(user, docx._id)).map((child) => child._id)).toEqual([made[0]!._id])
    expect(await libreOfficeRuns(user, docx._id)).toBe(1)
  })
})
