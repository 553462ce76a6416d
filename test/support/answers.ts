// The body type of an answer, from the app's own route types (the schemas its OpenAPI document is made of): the
// route is found from the method and the path as TypeScript sees it (`/files/${string}/jobs` matches
// `/files/:id/jobs`), the query string aside.
import type { ExtractSchema } from 'hono/types'
import type { SuccessStatusCode } from 'hono/utils/http-status'
import type { adminRoutes } from '../../worker/admin/routes'
import type { App } from '../../worker/app'
import type { ErrorSchema } from '../../worker/api'
import type { z } from '@hono/zod-openapi'

/** Every typed route: the app's chain, plus the admin routes that it mounts by statement (worker/app.ts). */
type Routes = ExtractSchema<App> & ExtractSchema<ReturnType<typeof adminRoutes>>

/**
 * An error answer: `{ message, code }` and the details an error may carry (`issues`, `retry_after`, the failed
 * conversion's `job`, the request id of a 500), as the Worker's Error schema declares them (ERROR_DETAILS, worker/api.ts).
 */
export type ErrorBody = z.infer<typeof ErrorSchema>

type Split<S extends string> = S extends `${infer Head}/${infer Tail}` ? [Head, ...Split<Tail>] : [S]

/** A string literal type, as opposed to `string` or a template with a placeholder (`${string}`, `x-${number}`). */
type IsLiteral<S extends string> = Record<never, never> extends Record<S, 1> ? false : true

/**
 * Whether path segments fit route segments. Strict: a literal segment fits only the same literal, a placeholder
 * only a `:param`; loose: a `:param` takes anything (a literal id).
 */
type Fits<Path extends string[], Route extends string[], Loose extends boolean> = Path extends [
  infer P extends string,
  ...infer PathRest extends string[],
]
  ? Route extends [infer R extends string, ...infer RouteRest extends string[]]
    ? (
        R extends `:${string}`
          ? Loose extends true
            ? true
            : IsLiteral<P> extends true
              ? false
              : true
          : IsLiteral<P> extends true
            ? P extends R
              ? true
              : false
            : false
      ) extends true
      ? Fits<PathRest, RouteRest, Loose>
      : false
    : false
  : Route extends []
    ? true
    : false

/** The routes under the path's first segment (`/files/…`): the only ones worth matching segment by segment. */
type Candidates<Path extends string> = Path extends `/${infer First}/${string}`
  ? IsLiteral<First> extends true
    ? Extract<keyof Routes & string, `/${First}/${string}`>
    : keyof Routes & string
  : keyof Routes & string

type Matching<Path extends string, Loose extends boolean> = {
  [Route in Candidates<Path>]: Fits<Split<Path>, Split<Route>, Loose> extends true ? Route : never
}[Candidates<Path>]

/** The route template a path is for: itself when it is one, else the routes it fits strictly, else loosely. */
export type RouteOf<Path extends string> = Path extends keyof Routes
  ? Path
  : [Matching<Path, false>] extends [never]
    ? Matching<Path, true>
    : Matching<Path, false>

type WithoutQuery<Path extends string> = Path extends `${infer Bare}?${string}` ? Bare : Path

type Endpoint<Route, Method extends string> = Route extends keyof Routes ? EndpointOf<Route, Method> : never

type EndpointOf<Route extends keyof Routes, Method extends string> = `$${Lowercase<Method>}` extends keyof Routes[Route]
  ? Routes[Route][`$${Lowercase<Method>}`]
  : never

/** The JSON body of each status a route declares, as its response schemas say. */
type Outputs<E> = E extends { status: infer Status extends number; output: infer Output; outputFormat: 'json' }
  ? { [S in Status]: S extends SuccessStatusCode ? Output : Output & ErrorAnswer }
  : never

/**
 * The route's success answers. Two (POST /files/:id/convert: 200 with the files, or 202 with the job) are read as
 * one that has both shapes, since a test reads what the status it asserted gives; `bodyAt` gives one exactly.
 */
type SuccessOf<E> = UnionToIntersection<
  E extends { status: SuccessStatusCode; output: infer Output; outputFormat: 'json' } ? Output : never
>

/** A record of a resource route: its fields come from configuration (worker/models/resources.ts). */
export interface ResourceRecord {
  _id: string
  readonly [field: string]: unknown
}

/** An error answer, as a test reads it. */
export type ErrorAnswer = ErrorBody

/**
 * The body a test reads: the route's success answer, with an error answer's fields optional beside it (a test
 * asserts the status, then reads either).
 */
type Readable<Success> = [Success] extends [never]
  ? Partial<ErrorAnswer>
  : Success extends object
    ? Success & Partial<Omit<ErrorAnswer, keyof Success>>
    : Success

type Resolved<Method extends string, Path extends string> = string extends Path
  ? never
  : Endpoint<RouteOf<WithoutQuery<Path>>, Method>

/**
 * The body of a call, by method and path; `unknown` when the path is not a literal or template, or names no
 * typed route (the resource routes come from configuration): the caller then names the type.
 */
export type Answer<Method extends string, Path extends string> = [Resolved<Method, Path>] extends [never]
  ? unknown
  : Readable<SuccessOf<Resolved<Method, Path>>>

/** The body of each declared status of the call's route (types only: `bodyAt` reads it). */
export type AnswersByStatus<Method extends string, Path extends string> = [Resolved<Method, Path>] extends [never]
  ? Record<number, unknown>
  : UnionToIntersection<Outputs<Resolved<Method, Path>>>

type UnionToIntersection<U> = (U extends unknown ? (k: U) => void : never) extends (k: infer I) => void ? I : never
