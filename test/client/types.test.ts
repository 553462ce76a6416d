// The typed client (`hono/client` over the app's route types) against the real app in workerd: typed calls
// reach the routes and their answers carry the records' types; a misspelt path or a wrong body does not compile
// (the @ts-expect-error lines fail `npm run typecheck` the day the types stop catching them).
import { exports } from 'cloudflare:workers'
import { hc } from 'hono/client'
import { describe, expect, expectTypeOf, it } from 'vitest'
import type { z } from '@hono/zod-openapi'
import {
  ERROR_CODES as PACKAGE_ERROR_CODES,
  EdgefloorError,
  type ConversionTargets as PackageConversionTargets,
  type ErrorCode as PackageErrorCode,
  type ErrorDetails as PackageErrorDetails,
  type FileRecord as PackageFile,
  type Job as PackageJob,
} from '../../client/index.ts'
import type { ErrorDetails } from '../../worker/api'
import type { App } from '../../worker/app'
import { ERROR_CODES, type ErrorCode } from '../../worker/errors'
import type { FileResponse } from '../../worker/files/records'
import type { JobView } from '../../worker/pipeline/jobs'
import type { ConvertInfo } from '../../worker/pipeline/routes'
import { type Answer, bodyAt, callJson } from '../support/api'
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

  it("carry the details the Worker's Error schema declares, field for field", async () => {
    expectTypeOf<PackageErrorDetails>().toEqualTypeOf<ErrorDetails>()
    const user = await signUp()
    const res = await exports.default.fetch(
      new Request('http://edgefloor.test/files', {
        method: 'PATCH',
        headers: { authorization: `Bearer ${user.token}` },
      }),
    )
    const error = new EdgefloorError(res.status, await res.json(), res.headers)
    expect(error.code).toBe('METHOD_NOT_ALLOWED')
    expect(error.details).toEqual({ allow: ['GET', 'HEAD', 'POST'] })
  })
})

// The tests' own calls (test/support/api.ts) read bodies with the same route types, found from the method and path.
describe('callJson: bodies typed by the route a method and path name', () => {
  it('types a literal or template path by its route, and anything else as unknown until named', async () => {
    const user = await signUp()
    const file = await uploaded(user, 'typed.txt', 'typed')
    const read = await callJson('GET', `/files/${file._id}`, { token: user.token })
    expectTypeOf(read.body._id).toEqualTypeOf<string>()
    expectTypeOf(read.body.parent_file).toEqualTypeOf<string | null>()
    // An error answer's fields sit beside the record's: a test asserts the status, then reads either.
    expectTypeOf(read.body.code).toEqualTypeOf<ErrorCode | undefined>()
    expect(read.body).toMatchObject({ _id: file._id, name: 'typed.txt', files: [] })

    // `/files/uploads` is its own route, not `/files/:id`; a query string does not change the route.
    expectTypeOf<Answer<'POST', '/files/uploads'>>().not.toEqualTypeOf<Answer<'GET', `/files/${string}`>>()
    expectTypeOf<Answer<'GET', '/files?limit=2'>>().toEqualTypeOf<Answer<'GET', '/files'>>()
    expectTypeOf<Answer<'GET', `/jobs/${string}`>>().toHaveProperty('steps')
    // A path TypeScript only knows as a string, or a route mounted by statement (resource routes), is unknown.
    expectTypeOf<Answer<'GET', string>>().toBeUnknown()
    expectTypeOf<Answer<'GET', `/users/${string}`>>().toBeUnknown()

    // Two success answers (200 with the files, 202 with the job): bodyAt asserts the status and gives its type.
    const started = await callJson('POST', `/files/${file._id}/convert`, {
      token: user.token,
      headers: { prefer: 'respond-async' },
    })
    const job = bodyAt(started, 202)
    expectTypeOf(job.file_id).toEqualTypeOf<string>()
    expectTypeOf(job.steps).toEqualTypeOf<JobView['steps']>()
    expect(job.file_id).toBe(file._id)
  })
})
