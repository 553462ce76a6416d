// Admin endpoints: what an account with the role `admin` needs beyond the rules-based /users routes (which list,
// change and delete accounts): finding users by part of their email or name, and one user's files, jobs and
// sessions, with ending a session. Everyone else is answered 403 naming the rule, before anything is looked up.
// The views carry no signed links: an admin sees another user's records, not their bytes.
import { z, type RouteConfig } from '@hono/zod-openapi'
import type { Context } from 'hono'
import { errorResponse, Id, jsonResponse, newRouter, securedRoute, type AppEnv } from '../api'
import { authorizedBatch, requireAuth } from '../auth/middleware'
import { SessionView, UserFields } from '../auth/routes'
import { endSession, listSessions, sessionView } from '../auth/sessions'
import { searchUsersQuery, userExistsQuery, userFields } from '../auth/users'
import { ApiError } from '../errors'
import { FileMetadataSchema, filesPage, listFilesQuery, toFileMetadata } from '../files/records'
import { JobSummarySchema, toJobSummary, userJobsQueries } from '../pipeline/jobs'

const tags = ['Admin']
/** The role these routes need: the rule the /users routes use for admins (worker/models/resources.ts). */
const ADMIN_RULE = '@user.role=admin'
const PAGE_MAX = 100

const UserParams = z.object({ id: Id.openapi({ description: "the user's _id" }) })
const Page = {
  limit: z.coerce.number().int().min(1).max(PAGE_MAX).default(50),
  cursor: Id.optional().openapi({ description: 'the last _id of the previous page (see the Link header)' }),
}

const AdminUser = z.object(UserFields).openapi('AdminUser')

const AdminSession = SessionView.omit({ current: true }).openapi('AdminSession')

const forbidden = () =>
  new ApiError('FORBIDDEN', { message: 'only an admin may do this', details: { rule: ADMIN_RULE } })
const refusals = {
  403: errorResponse('The caller is not an admin (`rule` names the rule), or an API key (no key may call it)'),
}

const route = <const R extends RouteConfig>(config: R) =>
  securedRoute(tags, { middleware: [requireAuth({ sharesRoundTrip: true })] as const, ...config })

const searchRoute = route({
  method: 'get',
  path: '/admin/users',
  summary: 'Find users by part of their email or name (case-insensitive), newest first',
  request: {
    query: z.object({
      q: z
        .string()
        .max(254)
        .optional()
        .openapi({ description: 'part of the email or name; none: every user', example: 'ada' }),
      ...Page,
    }),
  },
  responses: {
    200: jsonResponse(z.array(AdminUser), 'One page of users; the next page is in the Link header'),
    ...refusals,
  },
})

const filesRoute = route({
  method: 'get',
  path: '/admin/users/{id}/files',
  summary: "A user's files, newest first, without their signed links",
  request: {
    params: UserParams,
    query: z.object({
      root: z.enum(['true', 'false']).optional().openapi({ description: 'true: only uploads, not converted files' }),
      ...Page,
    }),
  },
  responses: {
    200: jsonResponse(z.array(FileMetadataSchema), 'One page of files; the next page is in the Link header'),
    404: errorResponse('No such user'),
    ...refusals,
  },
})

const jobsRoute = route({
  method: 'get',
  path: '/admin/users/{id}/jobs',
  summary: "A user's conversion jobs, newest first: state, steps, error code and message",
  request: { params: UserParams, query: z.object(Page) },
  responses: {
    200: jsonResponse(z.array(JobSummarySchema), 'One page of jobs; the next page is in the Link header'),
    404: errorResponse('No such user'),
    ...refusals,
  },
})

const sessionsRoute = route({
  method: 'get',
  path: '/admin/users/{id}/sessions',
  summary: "A user's live sessions, most recently used first",
  request: { params: UserParams },
  responses: {
    200: jsonResponse(z.array(AdminSession), 'The sessions'),
    404: errorResponse('No such user'),
    ...refusals,
  },
})

const endSessionRoute = securedRoute(tags, {
  method: 'delete',
  path: '/admin/users/{id}/sessions/{sessionId}',
  summary: "End one of a user's sessions: its refresh token and access tokens stop working at once",
  middleware: [requireAuth()] as const,
  request: { params: UserParams.extend({ sessionId: Id.openapi({ description: "the session's _id" }) }) },
  responses: {
    200: jsonResponse(z.object({ message: z.string() }), 'Ended'),
    404: errorResponse('Not a live session of this user'),
    ...refusals,
  },
})

/** 403 unless the caller (known once the route's first batch settled the session check) is an admin. */
function requireAdmin(c: Context<AppEnv>): void {
  if (c.var.user.role !== 'admin') throw forbidden()
}

/** The Link header of the next page, when there is one. */
function linkNext(c: Context<AppEnv>, next: string | undefined, limit: number): void {
  if (!next) return
  const url = new URL(c.req.url)
  url.searchParams.set('cursor', next)
  url.searchParams.set('limit', String(limit))
  c.header('link', `<${url.pathname}${url.search}>; rel="next"`)
}

export function adminRoutes() {
  return newRouter()
    .openapi(searchRoute, async (c) => {
      const { q, limit, cursor } = c.req.valid('query')
      const query = searchUsersQuery(c.var.db, { text: q?.trim(), cursor, limit: limit + 1 })
      const [rows] = await authorizedBatch(c, [query])
      requireAdmin(c)
      const page = rows.slice(0, limit)
      linkNext(c, rows.length > limit ? page.at(-1)!.id : undefined, limit)
      return c.json(
        page.map((row) => userFields(row)),
        200,
      )
    })
    .openapi(filesRoute, async (c) => {
      const { id } = c.req.valid('param')
      const { limit, cursor, root } = c.req.valid('query')
      const [found, rows] = await authorizedBatch(c, [
        userExistsQuery(c.var.db, id),
        listFilesQuery(c.var.db, id, { limit, cursor, rootOnly: root === 'true' }),
      ])
      requireAdmin(c)
      if (found.length === 0) throw new ApiError('USER_NOT_FOUND')
      const page = filesPage(rows, limit)
      linkNext(c, page.next, limit)
      return c.json(page.rows.map(toFileMetadata), 200)
    })
    .openapi(jobsRoute, async (c) => {
      const { id } = c.req.valid('param')
      const { limit, cursor } = c.req.valid('query')
      const [found, list, steps] = await authorizedBatch(c, [
        userExistsQuery(c.var.db, id),
        ...userJobsQueries(c.var.db, id, limit + 1, cursor),
      ])
      requireAdmin(c)
      if (found.length === 0) throw new ApiError('USER_NOT_FOUND')
      const page = list.slice(0, limit)
      linkNext(c, list.length > limit ? page.at(-1)!.id : undefined, limit)
      return c.json(
        page.map((job) =>
          toJobSummary(
            job,
            steps.filter((step) => step.jobId === job.id),
          ),
        ),
        200,
      )
    })
    .openapi(sessionsRoute, async (c) => {
      const { id } = c.req.valid('param')
      const [found, rows] = await authorizedBatch(c, [
        userExistsQuery(c.var.db, id),
        listSessions(c.var.db, c.var.config, id),
      ])
      requireAdmin(c)
      if (found.length === 0) throw new ApiError('USER_NOT_FOUND')
      return c.json(rows.map(sessionView), 200)
    })
    .openapi(endSessionRoute, async (c) => {
      requireAdmin(c)
      const { id, sessionId } = c.req.valid('param')
      if (!(await endSession(c.var.db, id, sessionId))) throw new ApiError('SESSION_NOT_FOUND')
      return c.json({ message: 'session ended' }, 200)
    })
}
