// Settings the platform cannot serve are refused at start-up (issue 29, point 4). Cloudflare's Workers limits:
// "Request body size: 100 MB (Free, Pro), 200 MB (Business), 500 MB (Enterprise)" — past it the edge answers its own
// HTML 413 before the Worker runs, so the API's limits must sit below it with room for a multipart body's overhead.
import { describe, expect, it } from 'vitest'
import { unstable_readConfig } from 'wrangler'
import { root } from '../../bench/wrangler-dev.ts'
import { loadConfig, MULTIPART_OVERHEAD_BYTES } from '../../worker/config.ts'

const secret = { JWT_SECRET: 'x'.repeat(32) }
const vars = (file: string) => unstable_readConfig({ config: `${root}/${file}` }).vars as Record<string, string>

describe('request body limits', () => {
  it('defaults let an upload at FILES_MAX_BYTES, sent as multipart/form-data, through a 100 MB body limit', async () => {
    for (const file of ['wrangler.toml', 'wrangler.consumer.toml']) {
      const config = loadConfig({ ...vars(file), ...secret })
      expect(config.REQUEST_MAX_BYTES).toBe(100_000_000)
      // What a browser's FormData adds around the file (boundary, part headers), measured on a 1-byte file.
      const form = new FormData()
      form.set(
        'file',
        new Blob([new Uint8Array(1)], {
          type: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
        }),
        `${'a'.repeat(200)}.docx`,
      )
      const overhead =
        (await new Request('http://127.0.0.1/', { method: 'POST', body: form }).arrayBuffer()).byteLength - 1
      expect(overhead).toBeLessThan(MULTIPART_OVERHEAD_BYTES)
      expect(config.FILES_MAX_BYTES + overhead).toBeLessThanOrEqual(100_000_000)
      expect(config.FILES_MAX_PART_BYTES).toBeLessThanOrEqual(100_000_000)
    }
  })

  it.each([
    [
      'FILES_MAX_BYTES',
      String(100 * 1024 * 1024),
      'FILES_MAX_BYTES: 104857600 and 262144 bytes of multipart overhead do not fit one request body (REQUEST_MAX_BYTES 100000000)',
    ],
    [
      'FILES_MAX_PART_BYTES',
      String(100 * 1024 * 1024),
      'FILES_MAX_PART_BYTES: a part of 104857600 bytes does not fit one request body (REQUEST_MAX_BYTES 100000000)',
    ],
  ])('refuses %s=%s at start-up, naming the setting', (name, value, message) => {
    expect(() => loadConfig({ ...secret, [name]: value })).toThrow(message)
  })

  it('takes larger limits on a plan that passes larger bodies', () => {
    const config = loadConfig({
      ...secret,
      REQUEST_MAX_BYTES: '500000000',
      FILES_MAX_BYTES: String(400 * 1024 * 1024),
      FILES_MAX_PART_BYTES: String(400 * 1024 * 1024),
    })
    expect(config.FILES_MAX_BYTES).toBe(400 * 1024 * 1024)
  })
})

describe('[limits]', () => {
  it('sets each Worker a CPU limit, which only Workers Paid allows (the Free plan has 10 ms)', () => {
    expect(unstable_readConfig({ config: `${root}/wrangler.toml` }).limits).toEqual({ cpu_ms: 30_000 })
    expect(unstable_readConfig({ config: `${root}/wrangler.consumer.toml` }).limits).toEqual({ cpu_ms: 60_000 })
  })
})
