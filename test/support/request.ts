// The one way tests build a request to the API (a client address, the bearer token, a JSON body) and read its JSON
// answer. It imports no workerd module: Node-side tests (e2e, against wrangler dev) use it too.
import { expect } from 'vitest'
import type { Answer, AnswersByStatus } from './answers'

export const BASE = 'http://edgefloor.test'

export interface CallOptions {
  token?: string
  json?: unknown
  body?: BodyInit
  headers?: Record<string, string>
  /** Client address as Cloudflare reports it; a fresh one per call unless given (rate limits are per IP). */
  ip?: string
}

export function randomIp(): string {
  const octet = () => Math.floor(Math.random() * 254) + 1
  return `10.${octet()}.${octet()}.${octet()}`
}

/**
 * The Request a call sends. Redirects stay answers (a fetch would follow them: provider sign-in answers 302).
 * `base` is the API's origin: the Worker under test in workerd unless given.
 */
export function requestFor(method: string, path: string, options: CallOptions = {}, base = BASE): Request {
  const headers = new Headers(options.headers)
  headers.set('cf-connecting-ip', options.ip ?? randomIp())
  if (options.token) headers.set('authorization', `Bearer ${options.token}`)
  let body = options.body
  if (options.json !== undefined) {
    headers.set('content-type', 'application/json')
    body = JSON.stringify(options.json)
  }
  return new Request(`${base}${path}`, { method, headers, body, redirect: 'manual' })
}

/**
 * A parsed answer: the status, the JSON body (undefined when there is none) and the headers. `ByStatus` is the
 * body of each status the route declares, for `bodyAt`; it exists in types only.
 */
export interface JsonAnswer<Body, ByStatus = Record<number, unknown>> {
  status: number
  body: Body
  headers: Headers
  readonly byStatus?: ByStatus
}

/** Asserts the answer's status and gives its body as the route declares it for that status. */
export function bodyAt<ByStatus, Status extends keyof ByStatus & number>(
  answer: JsonAnswer<unknown, ByStatus>,
  status: Status,
): ByStatus[Status] {
  expect(answer.status, JSON.stringify(answer.body)).toBe(status)
  return answer.body as ByStatus[Status]
}

export async function readJson(response: Response): Promise<JsonAnswer<unknown>> {
  const text = await response.text()
  return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers }
}

/** callJson for a Worker reached over HTTP at `base` (wrangler dev in the e2e tests). */
export async function fetchJson<Method extends string, Path extends string>(
  base: string,
  method: Method,
  path: Path,
  options?: CallOptions,
): Promise<JsonAnswer<Answer<Method, Path>, AnswersByStatus<Method, Path>>>
export async function fetchJson<Body>(
  base: string,
  method: string,
  path: string,
  options?: CallOptions,
): Promise<JsonAnswer<Body>>
export async function fetchJson(
  base: string,
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<JsonAnswer<unknown>> {
  return readJson(await fetch(requestFor(method, path, options, base)))
}
