// Conversion endpoints: what an extension becomes, starting a job (waiting for its chain by default), reading,
// following and retrying jobs. All of it scoped to the caller: someone else's job or file is not found.
import { z, type RouteConfig } from '@hono/zod-openapi'
import type { Context } from 'hono'
import { streamSSE } from 'hono/streaming'
import { errorResponse, jsonBody, jsonResponse, newRouter, securedRoute, type AppEnv, Id } from '../api'
import { authorizedBatch, callerId, deferBearer, requireAuth } from '../auth/middleware'
import { verifyToken, type Owner } from '../files/signed-url'
import {
  converterFor,
  JobOptionsRequest,
  reachableTargets,
  refusalFor,
  storedJobOptions,
  unavailableTargets,
} from '../converters/registry'
import { ApiError } from '../errors'
import { requestOrigin } from '../origin'
import {
  FileResponseSchema,
  ownedFile,
  ownedFileQuery,
  toFileResponse,
  treeQuery,
  type FileRow,
} from '../files/records'
import { callerFile } from '../files/routes'
import { startJobWithView, waitForJob } from './start'
import {
  fileJobsQueries,
  jobViewWithOwnerStamp,
  findOwnedJob,
  jobFailure,
  jobNotFound,
  JobSchema,
  jobFiles,
  jobView,
  jobViewQueries,
  reopenFailedJob,
  shapeJobView,
  treeJobsQueries,
  type JobRow,
  type StepRow,
} from './jobs'
import { checkCallbackUrl, webhookSecret } from './webhooks'
import { enqueueSteps } from '../queue'

/** The job-events stream's pauses between looks at the job: from the first, growing while nothing changes. */
const EVENTS_POLL_MS = { first: 500, most: 5000 }

const tags = ['Conversion']
const auth = requireAuth()
/** For routes whose first reads share the session check's round trip (authorizedBatch). */
const authSharing = requireAuth({ sharesRoundTrip: true })

const route = <const R extends RouteConfig>(config: R) => securedRoute(tags, config)

export const ConvertInfo = z
  .object({
    extension: z.string().openapi({ example: '.docx' }),
    accepted: z.boolean(),
    to: z.string().nullable().openapi({ example: '.pdf', description: 'what the default chain makes first' }),
    targets: z.array(z.string()).openapi({
      example: ['.pdf', '.png', '.txt'],
      description: 'every extension a chain reaches from this one, for `to` in POST /files/:id/convert',
    }),
    reason: z.string().optional().openapi({
      description:
        'why a converter refuses this kind of input (e.g. .wma audio), or why its default target cannot be made here',
    }),
    unavailable: z
      .record(z.string(), z.string())
      .optional()
      .openapi({
        description:
          'targets that cannot be made here, each with what to set (a provider that is not configured); absent when every target can be made',
        example: {
          '.txt':
            'audio → text needs Workers AI (the AI binding, which runs only when deployed) or TRANSCRIBE_URL; set TRANSCRIBE_URL to an OpenAI-compatible server (whisper.cpp, speaches, LocalAI, OpenAI)',
        },
      }),
  })
  .openapi('ConvertInfo')

const convertInfo = route({
  method: 'get',
  path: '/convert/{extension}',
  summary: 'What a file of this extension is converted to',
  middleware: [auth] as const,
  request: { params: z.object({ extension: z.string().min(1).max(20).openapi({ example: 'docx' }) }) },
  responses: {
    200: jsonResponse(
      ConvertInfo,
      'accepted: false and to: null when nothing converts it; accepted: false with `reason` and `unavailable` when its converter is not configured here',
    ),
  },
})

const ConvertBody = z
  .strictObject({
    to: z
      .string()
      .regex(/^\.?[A-Za-z0-9]{1,10}$/, 'must be an extension such as ".txt"')
      .optional()
      .openapi({
        example: '.txt',
        description:
          'the extension the chain ends at (see GET /convert/:extension `targets`); without it, the default chain',
      }),
    options: JobOptionsRequest.optional().openapi({
      description:
        "passed to the converters of the chain, each option declared by the converter that reads it: Gotenberg 8's LibreOffice options for Office documents (docs/conversion-and-previews.md, Office to PDF), password for a protected PDF or Office document; an unknown option is refused",
    }),
    callback_url: z
      .string()
      .max(2000)
      .optional()
      .openapi({ description: 'https URL called when the job finishes (signed, see the job)' }),
  })
  .openapi('ConvertRequest')

const convert = route({
  method: 'post',
  path: '/files/{id}/convert',
  summary: 'Convert a file through every applicable converter in sequence',
  description:
    'Waits for the whole chain (up to CONVERT_WAIT_MS) and answers every created file in chain order. With `Prefer: respond-async`, or when the wait runs out, answers 202 with the job and `Location: /jobs/:id`.',
  middleware: [authSharing] as const,
  request: {
    params: z.object({ id: Id }),
    headers: z.object({ prefer: z.string().optional().openapi({ example: 'respond-async' }) }),
    body: { ...jsonBody(ConvertBody), required: false },
  },
  responses: {
    200: jsonResponse(z.array(FileResponseSchema), 'The chain finished: every file it created, in chain order'),
    202: jsonResponse(JobSchema, 'The job runs on; follow it at Location'),
    404: errorResponse('File not found'),
    415: errorResponse(
      'No converter accepts this file, or the converter of its extension does not read the type sniffed from its bytes',
      'UNSUPPORTED_FORMAT',
    ),
    422: errorResponse(
      'A step failed for good (the message names the step and the reason), or no chain reaches `to` (images to .txt: OCR is not supported)',
    ),
    429: errorResponse('20 of your conversion steps are queued or running already (Retry-After)'),
    503: errorResponse(
      'The conversion needs a provider that is not configured here (CONVERTER_NOT_CONFIGURED: the message names the setting), or a step kept failing for transient reasons',
    ),
  },
})

const JobParams = z.object({ id: Id })

const readJob = route({
  method: 'get',
  path: '/jobs/{id}',
  summary: 'A job: status, steps, files created, errors',
  middleware: [authSharing] as const,
  request: { params: JobParams },
  responses: {
    200: jsonResponse(JobSchema.extend({ webhook_secret: z.string().optional() }), 'The job'),
    404: errorResponse('Job not found'),
  },
})

const jobEvents = route({
  method: 'get',
  path: '/jobs/{id}/events',
  summary:
    "Server-Sent Events: the job each time it changes, until it finishes; the bearer token or the signed ?token= of the job's events_url",
  security: [{ bearer: [] }, { signedUrl: [] }],
  request: {
    params: JobParams,
    query: z.object({
      token: z
        .string()
        .max(200)
        .optional()
        .openapi({ description: "the signed token of the job's events_url (for EventSource, which sends no headers)" }),
    }),
  },
  responses: {
    200: {
      description:
        'A stream of `job` events, one each time the job changes (data: the job as JSON); it ends when the job finishes',
      content: {
        'text/event-stream': {
          schema: z.string().openapi({ example: 'event: job\ndata: {"_id":"…","status":"running",…}\n\n' }),
        },
      },
    },
    401: errorResponse(
      "No bearer token and no valid signed token (EVENTS_LINK_INVALID: another job's, expired, or signed before a password reset)",
    ),
    404: errorResponse('Job not found'),
  },
})

const retryJob = route({
  method: 'post',
  path: '/jobs/{id}/retry',
  summary: 'Run the failed steps of a failed job again, and the steps its failure left unrun',
  middleware: [authSharing] as const,
  request: { params: JobParams },
  responses: {
    202: jsonResponse(JobSchema, 'The job, queued again'),
    404: errorResponse('Job not found'),
    409: errorResponse('The job has not failed'),
    429: errorResponse('20 of your conversion steps are queued or running already (Retry-After)'),
  },
})

const fileJobs = route({
  method: 'get',
  path: '/files/{id}/jobs',
  summary: "A file's conversion jobs, newest first",
  middleware: [authSharing] as const,
  request: { params: z.object({ id: Id }) },
  responses: { 200: jsonResponse(z.array(JobSchema), 'The jobs'), 404: errorResponse('File not found') },
})

/** Files of one tree the answer carries at most: a 1000-page PDF's pages, with their PDF and its upload. */
export const TREE_FILES_MAX = 1002

const FileTree = z
  .object({
    files: z.array(FileResponseSchema).openapi({
      description:
        'the file first, then every file converted from it at any depth, in the order they were made; `parent_file` links them',
    }),
    jobs: z.array(JobSchema).openapi({ description: 'the jobs of any file of the tree, newest first (at most 100)' }),
    truncated: z.boolean().openapi({
      description: `true when the tree has more than ${TREE_FILES_MAX} files: the first ${TREE_FILES_MAX} are listed`,
    }),
  })
  .openapi('FileTree')

const fileTreeRoute = route({
  method: 'get',
  path: '/files/{id}/tree',
  summary:
    "A file's whole conversion tree (every descendant through parent_file, e.g. DOCX → PDF → PNG pages) and the jobs of its files",
  middleware: [authSharing] as const,
  request: { params: z.object({ id: Id }) },
  responses: { 200: jsonResponse(FileTree, 'The tree'), 404: errorResponse('File not found') },
})

/** The caller's file URLs: this API's origin, signed with the caller's security stamp. */
const links = (c: Context<AppEnv>) => ({
  origin: requestOrigin(c.var.config, c.req.raw),
  securityStamp: c.var.user.securityStamp,
})
const pipelineOf = (c: Context<AppEnv>) => ({ db: c.var.db, queue: c.env.CONVERSIONS, ai: c.env.AI })

async function withSecret<V>(c: Context<AppEnv>, job: JobRow, view: V) {
  return job.callbackUrl ? { ...view, webhook_secret: await webhookSecret(c.var.config, job.id) } : view
}

/**
 * The views of jobs read in one batch with their steps and files: each job takes those it made and those a step of it
 * took from an earlier job (a document's PDF).
 */
const jobViews = (c: Context<AppEnv>, list: JobRow[], steps: StepRow[], made: FileRow[]) =>
  Promise.all(
    list.map((job) => {
      const own = steps.filter((step) => step.jobId === job.id)
      const outputs = new Set(own.flatMap((step) => step.outputIds))
      return shapeJobView(
        c.var.config,
        links(c),
        job,
        own,
        made.filter((row) => row.jobId === job.id || outputs.has(row.id)),
      )
    }),
  )

/**
 * The job a stream is for, and its owner: by the signed token of its events_url (EventSource sends no headers), or by
 * the bearer token. A signed token that fails for any reason (another job's, expired, signed before a password reset)
 * answers the same 401.
 */
async function eventsCaller(
  c: Context<AppEnv>,
  id: string,
  signed: string | undefined,
): Promise<{ job: JobRow; owner: Owner; steps: StepRow[]; made: FileRow[] }> {
  if (signed !== undefined && c.req.header('authorization') === undefined) {
    const { found, steps: stepRows, made: madeRows } = await jobViewWithOwnerStamp(c.var.db, id)
    const owner = found && { id: found.job.userId, securityStamp: found.securityStamp }
    if (!found || !owner || !(await verifyToken(c.var.config, 'job events', signed, id, owner)))
      throw new ApiError('EVENTS_LINK_INVALID')
    return { job: found.job, owner, steps: stepRows, made: madeRows }
  }
  await deferBearer(c, { missingTokenMessage: "missing bearer token or the job's signed events_url" })
  const [[job], steps, made] = await authorizedBatch(c, jobViewQueries(c.var.db, callerId(c), id))
  if (!job) throw jobNotFound()
  return { job, owner: c.var.user, steps, made }
}

export function pipelineRoutes() {
  const app = newRouter()

  return app
    .openapi(convertInfo, async (c) => {
      const extension = `.${c.req.valid('param').extension.replace(/^\./, '').toLowerCase()}`
      const converter = converterFor(extension)
      const unavailable = await unavailableTargets(extension, c.var.config, c.env.AI)
      const notHere = converter && unavailable[converter.to]
      const reason = converter ? notHere : refusalFor(extension)
      const body = {
        extension,
        accepted: converter !== undefined && !notHere,
        to: converter?.to ?? null,
        targets: reachableTargets(extension),
      }
      return c.json(
        { ...body, ...(reason ? { reason } : {}), ...(Object.keys(unavailable).length > 0 ? { unavailable } : {}) },
        200,
      )
    })
    .openapi(convert, async (c) => {
      const file = await callerFile(c, c.req.valid('param').id)
      const isJson = c.req.header('content-type')?.includes('application/json')
      const body = isJson ? (c.req.valid as unknown as (target: 'json') => z.infer<typeof ConvertBody>)('json') : {}
      const target = body.to && `.${body.to.replace(/^\./, '').toLowerCase()}`
      // Checked whatever the chain, even when nothing is made (text asked as text).
      if (body.callback_url) await checkCallbackUrl(c.var.config, body.callback_url)
      // Already what was asked for (text stays text): nothing to make, the file itself is the answer.
      if (target && target === file.extension) return c.json([await toFileResponse(file, c.var.config, links(c))], 200)
      const stored = body.options && storedJobOptions(file.extension, body.options)
      if (stored && 'refusal' in stored)
        throw new ApiError('VALIDATION_FAILED', { message: `invalid request: ${stored.refusal}` })
      const { job, steps, made } = await startJobWithView(pipelineOf(c), c.var.config, file, {
        options: stored?.options,
        callbackUrl: body.callback_url,
        target,
      })
      const respondAsync = /\brespond-async\b/i.test(c.req.header('prefer') ?? '')
      const settled = respondAsync ? job : await waitForJob(c.var.db, job.id, c.var.config.CONVERT_WAIT_MS)
      if (settled.status === 'done') {
        const made = await jobFiles(c.var.db, settled)
        return c.json(await Promise.all(made.map((row) => toFileResponse(row, c.var.config, links(c)))), 200)
      }
      if (settled.status === 'failed') {
        throw jobFailure(settled)
      }
      c.header('location', `/jobs/${settled.id}`)
      if (respondAsync) c.header('preference-applied', 'respond-async')
      // Answered at once: the view's rows were read where the job was written (one round trip less).
      const view =
        settled === job
          ? await shapeJobView(c.var.config, links(c), job, steps, made)
          : await jobView(c.var.db, c.var.config, links(c), settled)
      return c.json(await withSecret(c, settled, view), 202)
    })
    .openapi(readJob, async (c) => {
      const [[job], steps, made] = await authorizedBatch(
        c,
        jobViewQueries(c.var.db, callerId(c), c.req.valid('param').id),
      )
      if (!job) throw jobNotFound()
      return c.json(await withSecret(c, job, await shapeJobView(c.var.config, links(c), job, steps, made)), 200)
    })
    .openapi(jobEvents, async (c) => {
      const {
        job: first,
        owner,
        ...firstRows
      } = await eventsCaller(c, c.req.valid('param').id, c.req.valid('query').token)
      const ownerLinks = { origin: requestOrigin(c.var.config, c.req.raw), securityStamp: owner.securityStamp }
      return streamSSE(c, async (stream) => {
        let last = ''
        let job: JobRow | undefined = first
        // The first view's rows were read with the job (one round trip before the stream opens).
        let rows: { steps: StepRow[]; made: FileRow[] } | undefined = firstRows
        let pauseMs = EVENTS_POLL_MS.first
        const deadline = Date.now() + 10 * 60_000
        while (job && Date.now() < deadline && !stream.aborted) {
          const view = rows
            ? await shapeJobView(c.var.config, ownerLinks, job, rows.steps, rows.made)
            : await jobView(c.var.db, c.var.config, ownerLinks, job)
          rows = undefined
          // Compared without the signed URLs (download, preview, events): their expiry moves every second, the job
          // does not.
          const { events_url: _events, ...unsigned } = view
          const state = JSON.stringify({
            ...unsigned,
            files: view.files.map(({ url: _signed, preview_url: _previewSigned, ...file }) => file),
          })
          if (state !== last)
            await stream.writeSSE({ event: 'job', data: JSON.stringify(view), id: String(job.updatedAt) })
          // A quiet job is asked less often (each look is a few D1 reads), a changing one at once again.
          pauseMs = state === last ? Math.min(EVENTS_POLL_MS.most, pauseMs * 1.5) : EVENTS_POLL_MS.first
          last = state
          if (job.status === 'done' || job.status === 'failed') break
          await stream.sleep(pauseMs)
          job = await findOwnedJob(c.var.db, owner.id, first.id).catch(() => undefined)
        }
      })
    })
    .openapi(retryJob, async (c) => {
      const [[job]] = await authorizedBatch(c, [jobViewQueries(c.var.db, callerId(c), c.req.valid('param').id)[0]])
      if (!job) throw jobNotFound()
      if (job.status !== 'failed')
        throw new ApiError('JOB_NOT_FAILED', { message: `the job is ${job.status}; only a failed job can be retried` })
      const { reopened, steps, made } = await reopenFailedJob(c.var.db, job)
      await enqueueSteps(c.env.CONVERSIONS, reopened)
      c.header('location', `/jobs/${job.id}`)
      const view = shapeJobView(c.var.config, links(c), { ...job, status: 'running', error: null }, steps, made)
      return c.json(await view, 202)
    })
    .openapi(fileTreeRoute, async (c) => {
      const id = c.req.valid('param').id
      const db = c.var.db
      const [root, tree, list, steps] = await authorizedBatch(c, [
        ownedFileQuery(db, callerId(c), id),
        treeQuery(db, callerId(c), id, TREE_FILES_MAX + 1),
        ...treeJobsQueries(db, callerId(c), id),
      ])
      const file = ownedFile(root)
      // The file first whatever the clock said: its outputs can share its millisecond.
      const shown = [file, ...tree.filter((row) => row.id !== file.id)].slice(0, TREE_FILES_MAX)
      const files = shown.map((row) => toFileResponse(row, c.var.config, links(c)))
      return c.json(
        {
          files: await Promise.all(files),
          jobs: await jobViews(c, list, steps, tree),
          truncated: tree.length > TREE_FILES_MAX,
        },
        200,
      )
    })
    .openapi(fileJobs, async (c) => {
      const id = c.req.valid('param').id
      const [file, list, steps, made] = await authorizedBatch(c, [
        ownedFileQuery(c.var.db, callerId(c), id),
        ...fileJobsQueries(c.var.db, callerId(c), id),
      ])
      ownedFile(file)
      return c.json(await jobViews(c, list, steps, made), 200)
    })
}
