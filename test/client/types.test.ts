// The typed client (`hono/client` over the app's route types) against the real app in workerd: typed calls
// reach the routes and their answers carry the records' types; a misspelt path or a wrong body does not compile
// (the @ts-expect-error lines fail `npm run typecheck` the day the types stop catching them).
import { exports } from 'cloudflare:workers'
import { hc } from 'hono/client'
import { describe, expect, expectTypeOf, it } from 'vitest'
import type { z } from '@hono/zod-openapi'
import {
  ERROR_CODES as PACKAGE_ERROR_CODES,
  type ConversionTargets as PackageConversionTargets,
  type ErrorCode as PackageErrorCode,
  type FileRecord as PackageFile,
  type Job as PackageJob,
} from '../../client/index.ts'
import type { App } from '../../worker/app'
import { ERROR_CODES, type ErrorCode } from '../../worker/errors'
import type { FileResponse } from '../../worker/files/records'
import type { JobView } from '../../worker/pipeline/jobs'
import type { ConvertInfo } from '../../worker/pipeline/routes'
import { signUp } from '../support/accounts'
import { uploaded } from '../support/files'

const client = (token?: string) =>
  hc<App>('http://edgefloor.test', {
    fetch: (input: RequestInfo | URL, init?: RequestInit) => exports.default.fetch(new Request(input, init)),
    headers: token ? { authorization: `Bearer ${token}` } : {},
  })

describe('hc<App>: the typed client', () => {
  it('logs in, reads a file with its children, and lists the conversions of an extension, all typed', async () => {
    const user = await signUp()
    const login = await client().auth.login.$post({ json: { email: user.email, password: user.password } })
    expect(login.status).toBe(200)
    if (login.status !== 200) throw new Error(`login answered ${login.status}`) // narrows the type
    const session = await login.json()
    expectTypeOf(session.token).toEqualTypeOf<string>()

    const file = await uploaded(user, 'notes.txt', 'hello')
    const read = await client(session.token).files[':id'].$get({ param: { id: file._id } })
    expect(read.status).toBe(200)
    if (read.status !== 200) throw new Error(`GET /files/:id answered ${read.status}`)
    const record = await read.json()
    expectTypeOf(record._id).toEqualTypeOf<string>()
    expectTypeOf(record.parent_file).toEqualTypeOf<string | null>()
    expect(record).toMatchObject({ _id: file._id, name: 'notes.txt', files: [] })

    const info = await client(session.token).convert[':extension'].$get({ param: { extension: 'docx' } })
    if (info.status !== 200) throw new Error(`unexpected ${info.status}`)
    const answer = await info.json()
    expectTypeOf(answer.accepted).toEqualTypeOf<boolean>()
    expect(answer).toEqual({ extension: '.docx', accepted: true, to: '.pdf', targets: ['.pdf', '.png', '.txt'] })
  })

  it('answers the declared error statuses with the { message } shape', async () => {
    const user = await signUp()
    const missing = await client(user.token).files[':id'].$get({ param: { id: '0'.repeat(24) } })
    expect(missing.status).toBe(404)
    if (missing.status === 404) expectTypeOf((await missing.json()).message).toEqualTypeOf<string>()
  })

  it('does not compile a misspelt path or a wrong body', () => {
    const typeChecksOnly = () => {
      const api = client()
      // @ts-expect-error: there is no /filez
      void api.filez.$get()
      // @ts-expect-error: the password is a string
      void api.auth.login.$post({ json: { email: 'ada@example.com', password: 42 } })
      // @ts-expect-error: the file id is required
      void api.files[':id'].$get({ param: {} })
    }
    expect(typeof typeChecksOnly).toBe('function')
  })
})

// @edgefloor/client writes the wire types out (its declarations must stand alone); these hold them to the Worker's
// response schemas and error table, so the package cannot drift from the API it calls.
describe("@edgefloor/client's standalone types", () => {
  it("are the Worker's file, job and conversion-target answers field for field, and its error codes in order", () => {
    // Checked by `npm run typecheck` (expectTypeOf does nothing at run time).
    expectTypeOf<PackageFile>().toEqualTypeOf<FileResponse>()
    expectTypeOf<Omit<PackageJob, 'webhook_secret'>>().toEqualTypeOf<JobView>()
    expectTypeOf<PackageConversionTargets>().toEqualTypeOf<z.infer<typeof ConvertInfo>>()
    expectTypeOf<PackageErrorCode>().toEqualTypeOf<ErrorCode>()
    expect([...PACKAGE_ERROR_CODES]).toEqual(ERROR_CODES)
  })
})
