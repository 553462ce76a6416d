// A reference of `npm run check:deploy`: one route of @hono/zod-openapi with a zod response schema, built as the API
// Worker is. Its ratio to the minimal Hono Worker is what zod and the OpenAPI registry cost before any route of ours.
import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi'

const app = new OpenAPIHono()
const status = createRoute({
  method: 'get',
  path: '/',
  responses: {
    200: { description: 'ok', content: { 'application/json': { schema: z.object({ status: z.literal('ok') }) } } },
  },
})
app.openapi(status, (c) => c.json({ status: 'ok' as const }, 200))

export default app
