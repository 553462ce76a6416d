// Bench entry: the real Worker, plus a route that runs one converter on the POSTed bytes in this isolate and
// answers how many outputs and bytes it made, so converters are timed through real workerd by the client.
import { Hono } from 'hono'
import { loadConfig } from '../../worker/config'
import { converterNamed } from '../../worker/converters/registry'
import worker from '../../worker/index'
import type { StepMessage } from '../../worker/pipeline/jobs'

const bench = new Hono<{ Bindings: Env }>()
bench.post('/__bench/convert/:converter', async (c) => {
  const converter = converterNamed(c.req.param('converter'))
  if (!converter) return c.json({ message: 'no such converter' }, 404)
  const bytes = new Uint8Array(await c.req.arrayBuffer())
  const name = c.req.query('name') ?? 'input'
  const extension = name.slice(name.lastIndexOf('.')).toLowerCase()
  const input = {
    name,
    extension,
    contentType: 'application/octet-stream',
    size: bytes.byteLength,
    stream: () => new Blob([bytes]).stream(),
    bytes: async () => bytes,
  }
  const context = { jobId: 'bench', config: loadConfig(c.env), options: {} }
  const plan = converter.plan ? await converter.plan(input, context) : undefined
  let outputs = 0
  let outputBytes = 0
  for (const part of plan?.parts ?? [undefined]) {
    for (const output of await converter.convert(input, { ...context, part })) {
      outputs++
      outputBytes += output.body instanceof Uint8Array ? output.body.byteLength : (await new Response(output.body).arrayBuffer()).byteLength
    }
  }
  return c.json({ outputs, bytes: outputBytes })
})

export default {
  fetch(request, env, ctx) {
    return new URL(request.url).pathname.startsWith('/__bench/') ? bench.fetch(request, env, ctx) : worker.fetch(request, env, ctx)
  },
  queue: worker.queue,
} satisfies ExportedHandler<Env, StepMessage>

export { RateLimiter } from '../../worker/index'
