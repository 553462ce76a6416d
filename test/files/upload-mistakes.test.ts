// The mistakes a newcomer makes with POST /files, and a wrong method anywhere, answered with what to send instead:
// nothing stored, a 4xx whose message says how to upload, a 415 naming the accepted types, a 405 with Allow.
// RFC 9110 §15.5.6 (405): "The origin server MUST generate an Allow header field in a 405 response containing a
// list of the target resource's currently supported methods." §15.5.16 (415): "If the problem was caused by an
// unsupported content coding, the Accept-Encoding response header field ... ought to be used to indicate which (if
// any) content codings would have been accepted"; for media types we name them in the message and `accepted`.
import { describe, expect, it } from 'vitest'
import { signUp } from '../support/accounts'
import { call, callJson } from '../support/api'

const HOW_TO_SEND =
  'send the file\'s bytes as the body (Content-Type: application/octet-stream or the file\'s own type, its name in X-Edgefloor-Name), or multipart/form-data with the file in the field "file"'

async function filesOf(token: string): Promise<unknown[]> {
  const { body } = await callJson('GET', '/files', { token })
  return body
}

describe('POST /files without a file', () => {
  it('answers 400 FILE_MISSING saying what to send, and stores nothing, when there is no body', async () => {
    const { token } = await signUp()
    const res = await callJson('POST', '/files', { token })
    expect(res.status).toBe(400)
    expect(res.body).toEqual({ code: 'FILE_MISSING', message: `the request has no file: ${HOW_TO_SEND}` })
    expect(await filesOf(token)).toEqual([])
  })

  it('answers 400 for an empty unnamed body too, and stores an empty file the client names', async () => {
    const { token } = await signUp()
    const empty = await callJson('POST', '/files', {
      token,
      headers: { 'content-type': 'application/octet-stream' },
      body: new Uint8Array(0),
    })
    expect(empty.status).toBe(400)
    expect(empty.body.code).toBe('FILE_MISSING')
    const named = await callJson('POST', '/files', {
      token,
      headers: { 'content-type': 'application/octet-stream', 'x-edgefloor-name': 'empty.txt' },
      body: new Uint8Array(0),
    })
    expect(named.status).toBe(201)
    expect(named.body).toMatchObject({ name: 'empty.txt', size: 0 })
    expect(await filesOf(token)).toHaveLength(1)
  })

  it('answers 415 to an unnamed JSON body, naming the accepted types, and stores a JSON file the client names', async () => {
    const { token } = await signUp()
    const json = JSON.stringify({ name: 'report.docx' })
    const refused = await callJson('POST', '/files', {
      token,
      headers: { 'content-type': 'application/json' },
      body: json,
    })
    expect(refused.status).toBe(415)
    expect(refused.body).toEqual({
      code: 'CONTENT_TYPE_UNSUPPORTED',
      message: `a JSON body is taken as a file only when named (X-Edgefloor-Name): ${HOW_TO_SEND}`,
      accepted: [
        "application/octet-stream (or the file's own type) as the raw body",
        'multipart/form-data with the field "file"',
      ],
    })
    expect(await filesOf(token)).toEqual([])
    const named = await callJson('POST', '/files', {
      token,
      headers: { 'content-type': 'application/json', 'x-edgefloor-name': 'data.json' },
      body: json,
    })
    expect(named.status).toBe(201)
    expect(named.body).toMatchObject({ name: 'data.json', size: json.length })
  })

  it('answers 415 to a form-urlencoded body with the accepted types', async () => {
    const { token } = await signUp()
    const res = await callJson('POST', '/files', {
      token,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'a=1',
    })
    expect(res.status).toBe(415)
    expect(res.body.message).toBe(`a form-urlencoded body is not a file: ${HOW_TO_SEND}`)
    expect(res.body.accepted).toHaveLength(2)
  })
})

describe('a method a path does not answer', () => {
  it.each([
    ['DELETE', '/files', 'GET, HEAD, POST'],
    ['GET', '/auth/login', 'POST'],
    ['PUT', '/auth/sessions', 'GET, HEAD'],
    ['PATCH', '/files/0123456789abcdef01234567', 'DELETE, GET, HEAD, PUT'],
    ['DELETE', '/openapi.json', 'GET, HEAD'],
  ])('%s %s answers 405 with Allow: %s', async (method, path, allow) => {
    const res = await call(method, path)
    expect(res.status).toBe(405)
    expect(res.headers.get('allow')).toBe(allow)
    expect(await res.json()).toEqual({
      code: 'METHOD_NOT_ALLOWED',
      message: `${method} is not allowed on ${path}: use ${allow}`,
      allow: allow.split(', '),
    })
  })

  it('answers 404 without Allow on a path nothing answers', async () => {
    const res = await call('GET', '/no/such/path')
    expect(res.status).toBe(404)
    expect(res.headers.get('allow')).toBeNull()
    expect(await res.json()).toEqual({ code: 'NOT_FOUND', message: 'not found' })
  })
})
