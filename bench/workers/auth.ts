// Bench entry: the real Worker, plus two routes in the same isolate — an empty Hono route (the baseline) and
// one argon2id hash — so both are measured through the same workerd and HTTP path.
import { Hono } from 'hono'
import { hashPassword } from '../../worker/auth/passwords'
import worker from '../../worker/index'

const bench = new Hono()
bench.get('/__bench/empty', (c) => c.body(null, 204))
bench.get('/__bench/hash', async (c) => {
  await hashPassword('a benchmark password')
  return c.body(null, 204)
})

export default {
  fetch(request, env, ctx) {
    return new URL(request.url).pathname.startsWith('/__bench/')
      ? bench.fetch(request, env, ctx)
      : worker.fetch(request, env, ctx)
  },
} satisfies ExportedHandler<Env>

export { RateLimiter } from '../../worker/index'
