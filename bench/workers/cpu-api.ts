// `npm run bench:cpu`'s API Worker entry: the API Worker (its default export, so the bundle is its code) plus the
// CPU-heavy work of its longest requests, alone: one argon2id password hash (sign-up, login, password change), a
// login's check against an imported bcrypt hash, and
// SHA-256 over N MiB streamed through a DigestStream, as completing a resumable upload hashes its parts back from R2
// (worker/files/resumable.ts digestOf). The bytes are one 1 MiB chunk written again and again, so the figure is the
// hashing's and not the making of the bytes'.
import { hashPassword, verifyPassword } from '../../worker/auth/passwords'
import worker from '../../worker/index'

const MiB = 1024 * 1024

/** SHA-256 of `mib` MiB through a DigestStream, as digestOf pipes an R2 object's body into one. */
async function digestMiB(mib: number): Promise<string> {
  const chunk = new Uint8Array(MiB).map((_, i) => (i * 31) & 255)
  let sent = 0
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent++ < mib) controller.enqueue(chunk)
      else controller.close()
    },
  })
  const digest = new crypto.DigestStream('SHA-256')
  await body.pipeTo(digest)
  return new Uint8Array(await digest.digest).toHex()
}

export default {
  async fetch(request, env, ctx) {
    const url = new URL(request.url)
    if (url.pathname === '/__bench/empty') return new Response(null, { status: 204 })
    if (url.pathname === '/__bench/hash') {
      await hashPassword('a benchmark password')
      return new Response(null, { status: 204 })
    }
    // A login against an imported bcrypt hash (checked with its own cost, then rehashed to argon2id).
    if (url.pathname === '/__bench/bcrypt') {
      await verifyPassword(url.searchParams.get('hash') ?? '', 'a benchmark password')
      return new Response(null, { status: 204 })
    }
    if (url.pathname === '/__bench/digest')
      return Response.json({ sha256: await digestMiB(Number(url.searchParams.get('mib') ?? 1)) })
    return worker.fetch(request, env, ctx)
  },
} satisfies ExportedHandler<Env>

export { RateLimiter } from '../../worker/index'
