// The sidecar leaves nothing behind in its temp dir: each job's folder and each merge's folder are removed once
// the answer is sent, whether the conversion worked or failed, and closing removes the rest.
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { optionsFromEnv, startSidecar, type RunningSidecar } from '../../sidecar/server'

// The sidecar makes its folders under os.tmpdir(): a fresh one for this file (each test file runs in its own
// process) so only this sidecar's folders are seen.
const temp = mkdtempSync(join(tmpdir(), 'sidecar-temp-files-'))
process.env.TMPDIR = temp

const fixture = (name: string) => new Blob([readFileSync(join(inject('officeDocumentsDir'), name))])
const broken = () => new Blob([new TextEncoder().encode('PK\u0003\u0004 not really a docx')])

/** Every folder under the temp dir that holds a job's files or a request's PDFs after the conversion. */
function leftovers(): string[] {
  return readdirSync(temp, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isDirectory() && /^(job-\d+|edgefloor-post-.*)$/.test(entry.name))
    .map((entry) => relative(temp, join(entry.parentPath, entry.name)))
}

async function convert(files: Array<[string, Blob]>, fields: Record<string, string> = {}) {
  const body = new FormData()
  for (const [name, blob] of files) body.append('files', blob, name)
  for (const [key, value] of Object.entries(fields)) body.append(key, value)
  const res = await fetch(`${sidecar.url}/forms/libreoffice/convert`, { method: 'POST', body })
  return { status: res.status, type: res.headers.get('content-type'), text: res.ok ? '' : await res.text() }
}

let sidecar: RunningSidecar
beforeAll(async () => {
  sidecar = await startSidecar({ ...optionsFromEnv({}), port: 0, processes: 1, restartAfter: 1000 })
})
afterAll(() => sidecar?.close())

describe('sidecar: temp files', () => {
  it('keeps its LibreOffice folders in the temp dir it was given', () => {
    expect(readdirSync(temp)).toEqual([expect.stringMatching(/^edgefloor-sidecar-/)])
    expect(sidecar.pool.stats.processes[0]?.folder.startsWith(temp)).toBe(true)
  })

  it('removes the job folder after a single conversion', async () => {
    expect(await convert([['hello.rtf', fixture('hello.rtf')]])).toMatchObject({ status: 200, type: 'application/pdf' })
    expect(leftovers()).toEqual([])
  })

  it('removes every job folder after several documents answered as a zip', async () => {
    expect(await convert([['hello.rtf', fixture('hello.rtf')], ['data.csv', fixture('data.csv')]])).toMatchObject({ status: 200, type: 'application/zip' })
    expect(leftovers()).toEqual([])
  })

  it('removes the job folders and the merge folder after a merge', async () => {
    expect(await convert([['hello.rtf', fixture('hello.rtf')], ['data.csv', fixture('data.csv')]], { merge: 'true' })).toMatchObject({ status: 200, type: 'application/pdf' })
    expect(leftovers()).toEqual([])
  })

  it('removes the job folder after a conversion that fails', async () => {
    const failed = await convert([['broken.docx', broken()]])
    expect(failed.status).toBe(400)
    expect(failed.text).toMatch(/^Bad Request: /)
    expect(leftovers()).toEqual([])
  })

  it('answers a request whose first document fails only once its other documents are done, and leaves no folder', async () => {
    const failed = await convert([['broken.docx', broken()], ['hello.rtf', fixture('hello.rtf')], ['data.csv', fixture('data.csv')]], { merge: 'true' })
    expect(failed.status).toBe(400)
    expect(sidecar.pool.stats).toMatchObject({ queued: 0, idle: 1 })
    expect(leftovers()).toEqual([])
  })

  it('removes its whole folder when it closes', async () => {
    await sidecar.close()
    expect(readdirSync(temp)).toEqual([])
  })
})
