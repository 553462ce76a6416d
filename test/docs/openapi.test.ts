// The OpenAPI document: valid against the official OpenAPI 3.1 JSON schema, and complete: every route the app
// mounts is in it with its method, path parameters declared, protected operations documenting their errors.
import openApi31Schema from '@seriousme/openapi-schema-validator/schemas/v3.1/schema.json'
import Ajv2020 from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import { inspectRoutes } from 'hono/dev'
import { describe, expect, it } from 'vitest'
import { createApp } from '../../worker/app'
import { toOpenApiPath } from '../../worker/docs/routes'
import { ERRORS, type ErrorCode } from '../../worker/errors'
import { signUp } from '../support/accounts'
import { call, callJson } from '../support/api'

interface Operation {
  parameters?: Array<{ name: string; in: string; required?: boolean }>
  security?: Array<Record<string, string[]>>
  requestBody?: unknown
  responses: Record<string, { content?: Record<string, { schema?: { $ref?: string } }> }>
}
type Document = {
  openapi: string
  paths: Record<string, Record<string, Operation>>
  components: { securitySchemes: Record<string, unknown> }
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options']
/** HEAD answers carry no body (RFC 9110 §9.3.2: "the server MUST NOT send content in the response"), so no error shape. */
const hasBody = ({ key }: { key: string }) => !key.startsWith('HEAD ')

async function fetchDocument(): Promise<Document> {
  const { status, body, headers } = await callJson<Document>('GET', '/openapi.json')
  expect(status).toBe(200)
  expect(headers.get('content-type')).toContain('application/json')
  return body
}

function operationsOf(document: Document) {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, operation]) => ({ key: `${method.toUpperCase()} ${path}`, path, operation })),
  )
}

describe('GET /openapi.json', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const document = await fetchDocument()
    const ajv = new Ajv2020({ strict: false, allErrors: true })
    ;(addFormats as unknown as (ajv: Ajv2020) => void)(ajv)
    ajv.addFormat('media-range', true)
    const validate = ajv.compile(openApi31Schema)
    const valid = validate(document)
    expect(validate.errors ?? []).toEqual([])
    expect(valid).toBe(true)
    expect(document.openapi).toBe('3.1.0')
  })

  it('declares bearer JWT as its security scheme', async () => {
    const document = await fetchDocument()
    expect(document.components.securitySchemes).toMatchObject({
      bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
    })
  })

  it('describes every mounted route with its method', async () => {
    const document = await fetchDocument()
    const documented = new Set(operationsOf(document).map(({ key }) => key))
    const mounted = inspectRoutes(createApp())
      .filter((route) => !route.isMiddleware && route.method !== 'ALL')
      .map((route) => `${route.method} ${toOpenApiPath(route.path)}`)
    const missing = [...new Set(mounted)].filter((key) => !documented.has(key))
    expect(missing).toEqual([])
  })

  it('writes path parameters as {name} and declares each one', async () => {
    const document = await fetchDocument()
    for (const { key, path, operation } of operationsOf(document)) {
      expect(path, key).not.toContain(':')
      const inPath = [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]).sort()
      const declared = (operation.parameters ?? [])
        .filter((parameter) => parameter.in === 'path')
        .map((parameter) => parameter.name)
        .sort()
      expect(declared, key).toEqual(inPath)
    }
  })

  it('documents 401 with the { message } error shape on every operation that needs a token', async () => {
    const document = await fetchDocument()
    const secured = operationsOf(document)
      .filter(hasBody)
      .filter(({ operation }) => operation.security?.some((scheme) => 'bearer' in scheme))
    expect(secured.length).toBeGreaterThan(5)
    for (const { key, operation } of secured) {
      expect(operation.responses['401']?.content?.['application/json']?.schema, key).toEqual({
        $ref: '#/components/schemas/Error',
      })
    }
  })

  it('documents 400 with the { message } error shape on every operation that takes input', async () => {
    const document = await fetchDocument()
    const withoutInput: string[] = []
    for (const { key, operation } of operationsOf(document).filter(hasBody)) {
      // X-D1-Bookmark, on every operation, says its own 400 in its description (BOOKMARK_COMPONENTS).
      const ownParameters = (operation.parameters ?? []).filter((parameter) => !('$ref' in parameter))
      const takesInput = ownParameters.length > 0 || operation.requestBody !== undefined
      if (!takesInput) {
        withoutInput.push(key)
        continue
      }
      expect(operation.responses['400']?.content?.['application/json']?.schema, key).toEqual({
        $ref: '#/components/schemas/Error',
      })
    }
    // Nothing to validate, so nothing can answer 400: the pages, the health document, and routes that read only
    // the bearer token.
    expect(withoutInput.sort()).toEqual(
      [
        'GET /',
        'GET /openapi.json',
        'GET /docs',
        'GET /console',
        'GET /auth/user',
        'GET /user',
        'POST /auth/verify/resend',
        'POST /user/verify/email',
        'OPTIONS /files/tus',
        'GET /auth/sessions',
        'GET /auth/api-keys',
        'GET /auth/totp',
        'POST /auth/totp',
        'GET /auth/oauth',
        'GET /auth/identities',
        'POST /auth/passkeys/register/options',
        'POST /auth/passkeys/login/options',
        'GET /auth/passkeys',
      ].sort(),
    )
  })

  it('documents 404 with the { message } error shape on every operation with path parameters', async () => {
    const document = await fetchDocument()
    const addressed = operationsOf(document)
      .filter(hasBody)
      .filter(({ path }) => path.includes('{'))
    expect(addressed.length).toBeGreaterThan(10)
    for (const { key, operation } of addressed) {
      expect(operation.responses['404']?.content?.['application/json']?.schema, key).toEqual({
        $ref: '#/components/schemas/Error',
      })
    }
  })

  it('answers an invalid path parameter with the documented 400 and an unknown id with the documented 404', async () => {
    const { token } = await signUp()
    const invalid = await callJson('GET', '/jobs/not-an-id', { token })
    expect(invalid.status).toBe(400)
    expect(invalid.body.message).toContain('must be a 24-character hex id')
    const unknown = await callJson('GET', `/jobs/${'0'.repeat(24)}`, { token })
    expect(unknown.status).toBe(404)
    expect(unknown.body).toMatchObject({ message: 'job not found' })
  })

  it("describes the convert request's variables (an object of strings or lists of rows) and the Factur-X options with the sidecar's enums", async () => {
    const document = (await fetchDocument()) as unknown as { components: { schemas: Record<string, any> } }
    const options = document.components.schemas.ConvertRequest?.properties?.options
    const properties = options?.properties ?? options?.anyOf?.find((schema: any) => schema.properties)?.properties
    expect(properties?.variables).toMatchObject({
      type: 'object',
      additionalProperties: { anyOf: [{ type: 'string' }, { type: 'array' }] },
    })
    expect(properties?.facturxXml).toMatchObject({ type: 'string', maxLength: 384 * 1024 })
    expect(properties?.facturxConformanceLevel?.enum).toEqual([
      'MINIMUM',
      'BASIC WL',
      'BASIC',
      'EN 16931',
      'EXTENDED',
      'XRECHNUNG',
    ])
    expect(properties?.facturxDocumentType?.enum).toEqual(['INVOICE', 'ORDER', 'ORDER_RESPONSE', 'ORDER_CHANGE'])
  })

  it('describes the job events as text/event-stream and the static files with every type they are served as', async () => {
    const document = (await fetchDocument()) as unknown as { paths: Record<string, Record<string, any>> }
    const events = document.paths['/jobs/{id}/events']?.get?.responses?.['200']?.content
    expect(Object.keys(events ?? {})).toEqual(['text/event-stream'])
    const statics = document.paths['/static/{file}']?.get?.responses?.['200']?.content
    expect(Object.keys(statics ?? {}).sort()).toEqual(['image/png', 'image/svg+xml', 'text/css', 'text/javascript'])
  })

  it('describes the upload as multipart with a binary file or the raw binary body, its X-Edgefloor headers, the download as binary', async () => {
    const document = (await fetchDocument()) as unknown as { paths: Record<string, Record<string, any>> }
    const upload = document.paths['/files']?.post
    expect(upload?.requestBody?.content?.['multipart/form-data']?.schema).toMatchObject({
      type: 'object',
      properties: { file: { type: 'string', format: 'binary' } },
      required: ['file'],
    })
    expect(upload?.requestBody?.content?.['application/octet-stream']?.schema).toEqual({
      type: 'string',
      format: 'binary',
    })
    const headers = (upload?.parameters ?? [])
      .filter((parameter: { in: string }) => parameter.in === 'header')
      .map((parameter: { name: string }) => parameter.name)
    expect(headers).toEqual(
      expect.arrayContaining([
        'x-edgefloor-name',
        'x-edgefloor-size',
        'x-edgefloor-type',
        'x-edgefloor-modified',
        'x-edgefloor-prefix',
      ]),
    )
    const download = document.paths['/files/{id}/download']?.get
    const binary = Object.values(download?.responses?.['200']?.content ?? {}).map((media: any) => media.schema)
    expect(binary).toContainEqual({ type: 'string', format: 'binary' })
  })

  it("declares the download's range and conditional headers and every status they lead to", async () => {
    const document = (await fetchDocument()) as unknown as { paths: Record<string, Record<string, any>> }
    const download = document.paths['/files/{id}/download']?.get
    const headers = (download?.parameters ?? [])
      .filter((parameter: { in: string }) => parameter.in === 'header')
      .map((parameter: { name: string }) => parameter.name)
    expect(headers.sort()).toEqual([
      'if-match',
      'if-modified-since',
      'if-none-match',
      'if-range',
      'if-unmodified-since',
      'range',
    ])
    expect(Object.keys(download?.responses ?? {})).toEqual(expect.arrayContaining(['200', '206', '304', '412', '416']))
    expect(Object.keys(download.responses['206'].headers)).toEqual(expect.arrayContaining(['content-range', 'etag']))
    expect(Object.keys(download.responses['416'].headers)).toEqual(['content-range', 'X-D1-Bookmark'])
    expect(download.responses['412'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' })
  })

  it('names every operation with a unique operationId that generators can use as a method name', async () => {
    const document = await fetchDocument()
    const operations = operationsOf(document) as Array<{ key: string; operation: Operation & { operationId?: string } }>
    const ids = operations.map(({ operation }) => operation.operationId)
    for (const [index, id] of ids.entries()) expect(id, operations[index]!.key).toMatch(/^[a-z][A-Za-z0-9]*$/)
    expect(new Set(ids).size).toBe(ids.length)
    const byKey = Object.fromEntries(operations.map(({ key, operation }) => [key, operation.operationId]))
    expect(byKey).toMatchObject({
      'GET /files/{id}/download': 'getFilesByIdDownload',
      'POST /auth/login': 'postAuthLogin',
      'GET /': 'getRoot',
      'HEAD /files/tus/{id}': 'headFilesTusById',
    })
  })

  it('declares a security requirement on every operation: bearer, or none (`security: []`) on the public ones', async () => {
    const document = await fetchDocument()
    const operations = operationsOf(document)
    for (const { key, operation } of operations) expect(Array.isArray(operation.security), key).toBe(true)
    const open = operations.filter(({ operation }) => operation.security?.length === 0).map(({ key }) => key)
    expect(open).toEqual(
      expect.arrayContaining([
        'GET /',
        'POST /auth/login',
        'POST /auth/register',
        'POST /auth/refresh',
        'GET /openapi.json',
        'OPTIONS /files/tus',
      ]),
    )
    expect(open).not.toContain('GET /files/{id}')
  })

  // Cloudflare's read-replication guide: the client sends back the bookmark of its last answer in X-D1-Bookmark.
  it('documents X-D1-Bookmark on every operation, as a request header and on every answer, in the shape the API sends', async () => {
    const document = (await fetchDocument()) as unknown as Document & {
      components: {
        parameters: Record<string, { name: string; in: string; required: boolean; schema: { pattern: string } }>
        headers: Record<string, unknown>
      }
    }
    const refs = (operation: Operation) => (operation.parameters ?? []) as Array<{ $ref?: string }>
    const responses = (operation: Operation) =>
      Object.values(operation.responses) as Array<{ headers?: Record<string, { $ref?: string }> }>
    const operations = operationsOf(document)
    expect(operations.length).toBeGreaterThan(50)
    for (const { key, operation } of operations) {
      expect(refs(operation), key).toContainEqual({ $ref: '#/components/parameters/D1Bookmark' })
      for (const response of responses(operation))
        expect(response.headers?.['X-D1-Bookmark'], key).toEqual({ $ref: '#/components/headers/D1Bookmark' })
    }
    const parameter = document.components.parameters.D1Bookmark!
    expect(parameter).toMatchObject({ name: 'X-D1-Bookmark', in: 'header', required: false })
    expect(document.components.headers.D1Bookmark).toBeDefined()
    // The API's own answer fits the documented pattern, and is accepted back.
    const { token } = await signUp()
    const written = await call('POST', '/files', {
      token,
      headers: { 'x-edgefloor-name': 'a.txt', 'content-type': 'text/plain' },
      body: 'hello',
    })
    const bookmark = written.headers.get('x-d1-bookmark')
    expect(bookmark).toMatch(new RegExp(parameter.schema.pattern))
    const read = await call('GET', '/files', { token, headers: { 'x-d1-bookmark': bookmark! } })
    expect(read.status).toBe(200)
  })

  it('names the server it was fetched from', async () => {
    const { body } = await callJson<{ servers: Array<{ url: string }> }>('GET', '/openapi.json')
    expect(body.servers).toEqual([{ url: 'http://edgefloor.test', description: 'This deployment' }])
  })

  it("documents tus's HEAD as HEAD, with the headers it answers and no body", async () => {
    const document = (await fetchDocument()) as unknown as { paths: Record<string, Record<string, any>> }
    const head = document.paths['/files/tus/{id}']?.head
    expect(head?.security).toEqual([{ bearer: [] }])
    expect(Object.keys(head?.responses?.['200']?.headers ?? {})).toEqual(
      expect.arrayContaining(['Upload-Offset', 'Upload-Length', 'X-Edgefloor-File-Id']),
    )
    for (const response of Object.values<{ content?: unknown }>(head?.responses ?? {}))
      expect(response.content).toBeUndefined()
  })

  it('gives every error answer an example of its status from the error table', async () => {
    const document = await fetchDocument()
    let examples = 0
    for (const { key, operation } of operationsOf(document)) {
      for (const [status, response] of Object.entries(operation.responses)) {
        const media = response.content?.['application/json'] as
          | { schema?: { $ref?: string }; examples?: Record<string, { value: { code: string; message: string } }> }
          | undefined
        if (media?.schema?.$ref !== '#/components/schemas/Error') continue
        const [code, example] = Object.entries(media.examples ?? {})[0] ?? []
        expect(code, `${key} ${status}`).toBeDefined()
        expect(ERRORS[example!.value.code as ErrorCode].status, `${key} ${status}`).toBe(Number(status))
        examples += 1
      }
    }
    expect(examples).toBeGreaterThan(100)
    const missing = document.paths['/files/{id}']?.get?.responses['404']?.content?.['application/json'] as {
      examples?: object
    }
    expect(missing.examples).toEqual({
      FILE_NOT_FOUND: { summary: 'file not found', value: { message: 'file not found', code: 'FILE_NOT_FOUND' } },
    })
  })

  it('generates the document once and serves the same bytes on every request', async () => {
    const first = await (await call('GET', '/openapi.json')).text()
    const second = await (await call('GET', '/openapi.json')).text()
    expect(second).toBe(first)
  })
})

describe('toOpenApiPath', () => {
  it.each([
    ['/files/:id', '/files/{id}'],
    ['/files/:id/download', '/files/{id}/download'],
    ['/files/uploads/:uploadId/:part', '/files/uploads/{uploadId}/{part}'],
    ['/files/:id{[0-9a-z]+}/files', '/files/{id}/files'],
    ['/convert/{extension}', '/convert/{extension}'],
    ['/', '/'],
  ])('%s → %s', (hono, openApi) => {
    expect(toOpenApiPath(hono)).toBe(openApi)
  })
})
