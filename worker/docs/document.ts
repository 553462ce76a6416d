// What the generated OpenAPI document gets before it is served, so that client generators and linters (Redocly's
// recommended rules, test/e2e/openapi-lint.test.ts) read it well: an operationId on every operation, `security: []`
// on the public ones, an example on every error answer, X-D1-Bookmark on every operation, and the server it was
// fetched from.
import { ERROR_CODES, ERRORS, type ErrorCode } from '../errors'

interface ResponseObject {
  description?: string
  content?: Record<string, { schema?: { $ref?: string }; examples?: Record<string, unknown> }>
  headers?: Record<string, unknown>
}

interface OperationObject {
  operationId?: string
  security?: unknown[]
  parameters?: unknown[]
  responses?: Record<string, ResponseObject>
}

type PathItem = Record<string, OperationObject>

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']
const ERROR_SCHEMA = '#/components/schemas/Error'

/** The code an error answer of a status shows when nothing in its description or path names a closer one. */
const USUAL_CODE: Partial<Record<number, ErrorCode>> = {
  400: 'VALIDATION_FAILED',
  401: 'TOKEN_MISSING',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  413: 'FILE_TOO_LARGE',
  415: 'UNSUPPORTED_FORMAT',
  422: 'CONVERSION_FAILED',
}

// Every request runs in a D1 session (worker/db/replicas.ts, Cloudflare's read-replication guide names the header).
const BOOKMARK_DESCRIPTION =
  'The D1 bookmark of an earlier answer: the request then reads at least what that answer had written (its own writes, from a replica).'

/** The components the operations' X-D1-Bookmark refer to: the request header and the answer's header. */
export const BOOKMARK_COMPONENTS = {
  parameters: {
    D1Bookmark: {
      name: 'X-D1-Bookmark',
      in: 'header',
      required: false,
      description: `${BOOKMARK_DESCRIPTION} Anything but a bookmark is 400 VALIDATION_FAILED.`,
      schema: { type: 'string', pattern: '^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$' },
      example: '00000085-0000024c-00004f6a-7d1f0c2b9d3e4f5a6b7c8d9e0f1a2b3c',
    },
  },
  headers: {
    D1Bookmark: {
      description:
        "The bookmark of this request's D1 session, when it read or wrote D1 or was sent one: send it back as X-D1-Bookmark to read what this answer wrote.",
      schema: { type: 'string' },
    },
  },
} as const

const BOOKMARK_PARAMETER = { $ref: '#/components/parameters/D1Bookmark' }
const BOOKMARK_HEADER = { $ref: '#/components/headers/D1Bookmark' }

/**
 * The operations of `paths` with an operationId, a security requirement, error examples and X-D1-Bookmark (asked
 * and answered: BOOKMARK_COMPONENTS) each, in place.
 */
export function polishOperations(paths: Record<string, PathItem>): void {
  for (const [path, item] of Object.entries(paths)) {
    for (const method of METHODS) {
      const operation = item[method]
      if (!operation) continue
      operation.operationId ??= operationIdOf(method, path)
      // A public operation says so: with no requirement at all, a reader cannot tell it from a forgotten one.
      operation.security ??= []
      operation.parameters = [...(operation.parameters ?? []), BOOKMARK_PARAMETER]
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        addErrorExample(Number(status), response, path)
        response.headers = { ...response.headers, 'X-D1-Bookmark': BOOKMARK_HEADER }
      }
    }
  }
}

/**
 * `get /files/{id}/download` → `getFilesByIdDownload`: the method, then each path segment in PascalCase, a
 * parameter as `By<Name>`. Unique because (method, path) is, stable because it is read from nothing else.
 */
export function operationIdOf(method: string, path: string): string {
  const words = path
    .split('/')
    .filter(Boolean)
    .map((segment) => {
      const parameter = /^\{(.+)\}$/.exec(segment)?.[1]
      return parameter ? `By${pascal(parameter)}` : pascal(segment)
    })
  return `${method.toLowerCase()}${words.join('') || 'Root'}`
}

function pascal(text: string): string {
  return text
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((word) => word[0]!.toUpperCase() + word.slice(1))
    .join('')
}

function addErrorExample(status: number, response: ResponseObject, path: string): void {
  const media = response.content?.['application/json']
  if (media?.schema?.$ref !== ERROR_SCHEMA || media.examples) return
  const code = exampleCode(status, (response.description ?? '').toLowerCase(), path.toLowerCase())
  if (!code) return
  media.examples = errorExamples(code)
}

/** The `examples` of an error answer: one, named by its code. */
export function errorExamples(code: ErrorCode) {
  const { message } = ERRORS[code]
  const value =
    code === 'VALIDATION_FAILED'
      ? {
          message: 'invalid request: email: Invalid email address',
          code,
          issues: [{ path: 'email', message: 'Invalid email address', code: 'invalid_format' }],
        }
      : { message, code }
  return { [code]: { summary: message, value } }
}

/** Words of a code that say what went wrong rather than what it is about (FILE_NOT_FOUND is about a file). */
const OUTCOME_WORDS = new Set([
  'not',
  'found',
  'invalid',
  'missing',
  'taken',
  'already',
  'mismatch',
  'unsupported',
  'refused',
  'failed',
  'disabled',
  'reused',
  'too',
  'large',
  'exceeded',
  'incomplete',
  'unavailable',
  'timeout',
  'misconfigured',
  'meanwhile',
  'running',
  'satisfiable',
])

/**
 * Of the codes with this status, the one whose subject the answer's description names (3 a word), else its path
 * (2 a word), or whose message it quotes (1); on a tie, the status's usual code.
 */
function exampleCode(status: number, description: string, path: string): ErrorCode | undefined {
  const candidates = ERROR_CODES.filter((code) => ERRORS[code].status === status)
  const score = (code: ErrorCode) =>
    code
      .toLowerCase()
      .split('_')
      .filter((word) => !OUTCOME_WORDS.has(word))
      .reduce((sum, word) => sum + (description.includes(word) ? 3 : 0) + (path.includes(word) ? 2 : 0), 0) +
    (description.includes(ERRORS[code].message) ? 1 : 0)
  let best = USUAL_CODE[status] ?? candidates[0]
  let bestScore = best ? score(best) : -1
  for (const code of candidates) {
    const codeScore = score(code)
    if (codeScore > bestScore) [best, bestScore] = [code, codeScore]
  }
  return best
}
