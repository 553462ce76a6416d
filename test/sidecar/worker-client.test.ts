// The Worker's Gotenberg client (worker/engines/gotenberg.ts) against the real sidecar guarded by basic auth with
// a non-ASCII password: both sides read the credentials as UTF-8, so the conversion goes through.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { convertOfficeToPdf, type GotenbergSettings } from '../../worker/engines/gotenberg'
import { optionsFromEnv, startSidecar, type RunningSidecar } from '../../sidecar/server'

const PASSWORD = 'пароль-密码-🔑'
const document = () => ({
  filename: 'hello.rtf',
  bytes: readFileSync(join(inject('officeDocumentsDir'), 'hello.rtf')),
  contentType: 'application/rtf',
})

let sidecar: RunningSidecar
beforeAll(async () => {
  sidecar = await startSidecar({ ...optionsFromEnv({}), port: 0, processes: 1, username: 'José', password: PASSWORD })
})
afterAll(() => sidecar.close())

describe("the Worker's Gotenberg client against the sidecar with basic auth", () => {
  const settings = (password: string): GotenbergSettings => ({
    url: sidecar.url,
    username: 'José',
    password,
    timeoutMs: 60_000,
  })

  it('converts with a non-ASCII password', async () => {
    const pdf = new Uint8Array(
      await new Response(await convertOfficeToPdf(settings(PASSWORD), document(), {}, 'job-utf8')).arrayBuffer(),
    )
    expect(Buffer.from(pdf.subarray(0, 5)).toString()).toBe('%PDF-')
  })

  it('is refused with another password, as a configuration fault (the converter retries it and tells the client nothing internal)', async () => {
    const failure = await convertOfficeToPdf(settings('пароль'), document(), {}, 'job-wrong').catch((error) => error)
    expect(failure).toMatchObject({ name: 'GotenbergError', kind: 'credentials', status: 401 })
    expect(failure.message).toContain('refused our credentials (401)')
  })
})
