// The self-description of the API: GET /openapi.json (generated from the zod schemas of every route), and the
// two pages the Worker serves from its static assets (public/): the API reference at /docs and the console.
import { type OpenAPIHono, type RouteHandler, z } from '@hono/zod-openapi'
import type { AppEnv } from '../api'
import { describeRoute, errorResponse } from '../api'
import { ApiError } from '../errors'
import { BOOKMARK_COMPONENTS, polishOperations } from './document'
import packageJson from '../../package.json'
import { serviceStatusBody } from './status'

const tags = ['Documentation']

/** Same-origin only: the pages load their own scripts and styles and talk to this API, nothing else. */
const PAGE_SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
}

const STATIC_FILE = /^[a-z0-9-]+\.(js|css|png|svg)$/

const openApiRoute = describeRoute({
  method: 'get',
  path: '/openapi.json',
  tags,
  summary: 'This OpenAPI 3.1 document',
  responses: {
    200: {
      description: 'The document, generated from the zod schemas that validate each route',
      content: {
        'application/json': {
          schema: z.looseObject({
            openapi: z.string(),
            info: z.looseObject({}),
            paths: z.record(z.string(), z.unknown()),
          }),
        },
      },
    },
  },
})

const html = (summary: string) => ({ description: summary, content: { 'text/html': { schema: z.string() } } })

const pageMissing = errorResponse("The page is not in this deployment's static assets (public/)", 'NOT_FOUND')
const docsPageRoute = describeRoute({
  method: 'get',
  path: '/docs',
  tags,
  summary: 'API reference page (renders /openapi.json)',
  responses: { 200: html('HTML page'), 404: pageMissing },
})
const consolePageRoute = describeRoute({
  method: 'get',
  path: '/console',
  tags,
  summary: 'Web console: sign in, upload, convert, watch the job, download',
  responses: { 200: html('HTML page'), 404: pageMissing },
})
const staticFileRoute = describeRoute({
  method: 'get',
  path: '/static/{file}',
  tags,
  summary: 'Scripts, styles and images of the /docs and /console pages',
  request: { params: z.object({ file: z.string().regex(STATIC_FILE).openapi({ example: 'console.js' }) }) },
  responses: {
    200: {
      description: 'The file, typed by its extension',
      content: {
        'text/javascript': { schema: z.string() },
        'text/css': { schema: z.string() },
        'image/png': { schema: z.string().openapi({ format: 'binary' }) },
        'image/svg+xml': { schema: z.string() },
      },
    },
    400: errorResponse('Not a file name'),
    404: errorResponse('No such file', 'NOT_FOUND'),
  },
})

export interface DocumentInfo {
  title: string
  description: string
}

const documents = new WeakMap<object, unknown>()

/**
 * The OpenAPI 3.1 document of `app`, built once per app. Hono routes may be written `/files/:id`; OpenAPI wants
 * `/files/{id}`, so path keys are rewritten here and no route module has to care.
 */
export function openApiDocument(app: OpenAPIHono<AppEnv>, info: DocumentInfo) {
  const cached = documents.get(app)
  if (cached) return cached as ReturnType<typeof app.getOpenAPI31Document>
  const generated = app.getOpenAPI31Document({
    openapi: '3.1.0',
    info: { title: info.title, version: packageJson.version, description: info.description },
  })
  const paths = Object.fromEntries(
    Object.entries(generated.paths ?? {}).map(([path, item]) => [toOpenApiPath(path), item]),
  )
  polishOperations(paths as Parameters<typeof polishOperations>[0])
  const components = {
    ...generated.components,
    parameters: { ...generated.components?.parameters, ...BOOKMARK_COMPONENTS.parameters },
    headers: { ...generated.components?.headers, ...BOOKMARK_COMPONENTS.headers },
  }
  const document = { ...generated, components, paths }
  documents.set(app, document)
  return document
}

/** `/files/:id{[0-9a-z]+}/download` → `/files/{id}/download` */
export function toOpenApiPath(honoPath: string): string {
  return honoPath.replace(/:([A-Za-z_][A-Za-z0-9_]*)(\{[^}]*\})?/g, '{$1}')
}

/** Mounts /openapi.json, /docs, /console and their static files on the app (call it after every other route). */
export function mountDocs(app: OpenAPIHono<AppEnv>, info: DocumentInfo) {
  app.openAPIRegistry.registerComponent('securitySchemes', 'bearer', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: "a session's access token (a JWT) or an API key (efk_…), whose scopes name the routes it may call",
  })
  // The server is the origin the document was fetched from: a generated client calls the deployment it read.
  app.openapi(openApiRoute, (c) =>
    c.json(
      {
        ...openApiDocument(app, info),
        servers: [{ url: new URL(c.req.url).origin, description: 'This deployment' }],
      } as never,
      200,
    ),
  )
  mountPages(app)
}

/** The two pages and their files, from the static assets (public/). */
export function mountPages(app: OpenAPIHono<AppEnv>) {
  app.openapi(docsPageRoute, (c) => servePage(c.env.ASSETS, c.req.url, '/docs'))
  app.openapi(consolePageRoute, (c) => servePage(c.env.ASSETS, c.req.url, '/console'))
  app.openapi(
    staticFileRoute,
    (c) => servePage(c.env.ASSETS, c.req.url, `/static/${c.req.valid('param').file}`) as never,
  )
}

async function servePage(assets: Fetcher, requestUrl: string, assetPath: string): Promise<Response> {
  const asset = await assets.fetch(new Request(new URL(assetPath, requestUrl)))
  if (asset.status !== 200) throw new ApiError('NOT_FOUND')
  const response = new Response(asset.body, asset)
  for (const [name, value] of Object.entries(PAGE_SECURITY_HEADERS)) response.headers.set(name, value)
  response.headers.set('cache-control', 'no-cache')
  return response
}

export const serviceStatusRoute = describeRoute({
  method: 'get',
  path: '/',
  tags,
  summary: 'Service name, version and status',
  responses: {
    200: {
      description: 'The service is up',
      content: {
        'application/json': { schema: z.object({ name: z.string(), version: z.string(), status: z.literal('ok') }) },
      },
    },
  },
})

/** GET /: the service's name, version and status. */
export const serviceStatus: RouteHandler<typeof serviceStatusRoute, AppEnv> = (c) => c.json(serviceStatusBody(), 200)
