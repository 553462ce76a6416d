// Settings the platform cannot serve are refused at start-up (issue 29, point 4). Cloudflare's Workers limits:
// "Request body size: 100 MB (Free, Pro), 200 MB (Business), 500 MB (Enterprise)" — past it the edge answers its own
// HTML 413 before the Worker runs, so the API's limits must sit below it with room for a multipart body's overhead.
import { describe, expect, it } from 'vitest'
import { unstable_readConfig } from 'wrangler'
import { root } from '../../bench/wrangler-dev.ts'
import {
  CPU_MARGIN,
  CPU_REQUEST_LIMIT_MS,
  CPU_STEP_LIMIT_MS,
  loadConfig,
  MULTIPART_OVERHEAD_BYTES,
  worstCpuMs,
} from '../../worker/config.ts'

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
  const limits = (file: string) => unstable_readConfig({ config: `${root}/${file}` }).limits

  it('sets each Worker a CPU limit, which only Workers Paid allows (the Free plan has 10 ms), the one config.ts checks', () => {
    expect(limits('wrangler.toml')).toEqual({ cpu_ms: CPU_REQUEST_LIMIT_MS })
    expect(limits('wrangler.consumer.toml')).toEqual({ cpu_ms: CPU_STEP_LIMIT_MS })
    // Cloudflare's Workers limits: "CPU time: 5 min" on Workers Paid, `cpu_ms` "up to 300,000".
    expect(CPU_STEP_LIMIT_MS).toBeLessThanOrEqual(300_000)
  })

  it("gives the engine Workers the consumer's limit: a call through a service binding shares its invocation's CPU", () => {
    for (const family of ['pdf', 'image', 'text'])
      expect(limits(`wrangler.engine-${family}.toml`)).toEqual({ cpu_ms: CPU_STEP_LIMIT_MS })
  })

  it('takes the default settings, whose worst steps and requests stay a margin below the limits', () => {
    for (const file of ['wrangler.toml', 'wrangler.consumer.toml']) {
      const worst = worstCpuMs(loadConfig({ ...vars(file), ...secret }))
      expect(worst.textStep * CPU_MARGIN).toBeLessThanOrEqual(CPU_STEP_LIMIT_MS)
      expect(worst.pdfStep * CPU_MARGIN).toBeLessThanOrEqual(CPU_STEP_LIMIT_MS)
      expect(worst.resumableComplete * CPU_MARGIN).toBeLessThanOrEqual(CPU_REQUEST_LIMIT_MS)
    }
  })

  it.each([
    [
      { TEXT_MAX_BYTES: String(100 * 1024 ** 2) },
      /TEXT_MAX_BYTES: a text step lays out up to 104857600 bytes \(TEXT_MAX_BYTES\) twice and draws 10 pages \(CONVERT_PAGES_PER_STEP\) at 150 dpi \(PDF_DPI\): about \d+ s of CPU, more than a 3× margin leaves of the consumer Worker's 60000 ms \(\[limits\] cpu_ms\)/,
    ],
    [{ PDF_DPI: '600' }, /TEXT_MAX_BYTES: a text step .* draws 10 pages \(CONVERT_PAGES_PER_STEP\) at 600 dpi/],
    [{ CONVERT_PAGES_PER_STEP: '20' }, /CONVERT_PAGES_PER_STEP: a step of 20 PDF pages of 2200000 pixels/],
    [
      { FILES_MAX_RESUMABLE_BYTES: String(100 * 1024 ** 3) },
      /FILES_MAX_RESUMABLE_BYTES: completing a resumable upload of 107374182400 bytes hashes it back from R2: about \d+ s of CPU, more than a 3× margin leaves of the API Worker's 30000 ms/,
    ],
  ])('refuses %o at start-up: its worst step or request would pass the CPU limit', (settings, message) => {
    expect(() => loadConfig({ ...secret, ...settings })).toThrow(message)
  })

  it('takes a setting raised where another is lowered to keep the step inside', () => {
    const config = loadConfig({ ...secret, PDF_DPI: '600', CONVERT_PAGES_PER_STEP: '2' })
    expect(config.PDF_DPI).toBe(600)
  })
})
