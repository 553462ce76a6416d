// worker/config.ts validates the settings with plain functions, not zod, so that a cold start loads no zod
// (docs/platform-limits.md, Startup), and keeps zod's behaviour: the settings were a zod schema, and a bad value must
// read as it did. The reference is zod itself: each kind of setting against the zod schema it replaced, on the same
// values (zod's docs, "Coercion": `z.coerce.number()` is `Number(input)`; "URLs": `z.url()` is what `new URL()` takes).
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { configSchema, loadConfig } from '../../worker/config.ts'

const secret = { JWT_SECRET: 'x'.repeat(32) }

/** What the settings answer for one value: the value the Worker reads, or the messages of the setting's problems. */
function ours(name: string, value: string, others: Record<string, string> = {}): unknown {
  const result = configSchema.safeParse({ ...secret, ...others, [name]: value })
  if (result.success) return { value: (result.data as Record<string, unknown>)[name] }
  return { problems: result.error.issues.map((issue) => issue.message) }
}

/** The same for the zod schema the setting was. */
function zods(schema: z.ZodType, value: string): unknown {
  const result = schema.safeParse(value)
  return result.success ? { value: result.data } : { problems: result.error.issues.map((issue) => issue.message) }
}

const numbers = ['', ' ', '12', ' 7 ', 'abc', '1.5', '-1', '0', '1e3', '0x10', 'Infinity', '99999999999999999', '6e9']

describe('the settings, against the zod schemas they were', () => {
  it.each(numbers)('reads an integer with a minimum: AUTH_RATE_LIMIT_PER_MINUTE=%j', (value) => {
    expect(ours('AUTH_RATE_LIMIT_PER_MINUTE', value)).toEqual(zods(z.coerce.number().int().min(0), value))
  })

  // Past the safe integers a part fits no request body either, a check of its own (test/config/platform-limits.test.ts).
  it.each(numbers.filter((value) => value !== '99999999999999999'))(
    'reads an integer with a range: FILES_MAX_PART_BYTES=%j',
    (value) => {
      const MiB = 1024 * 1024
      // A request body as large as any safe integer, so that only the part's own range speaks.
      expect(ours('FILES_MAX_PART_BYTES', value, { REQUEST_MAX_BYTES: String(Number.MAX_SAFE_INTEGER) })).toEqual(
        zods(
          z.coerce
            .number()
            .int()
            .min(5 * MiB)
            .max(5 * 1024 * MiB),
          value,
        ),
      )
    },
  )

  it.each(['', 'e', 'edgefloor'])('reads a text with a minimum length: JWT_ISSUER=%j', (value) => {
    expect(ours('JWT_ISSUER', value)).toEqual(zods(z.string().min(1), value))
  })

  it.each(['https://a.example/x', ' https://a.example/x ', 'http://a\tb.example', 'nope', '', 'mailto:a@b'])(
    'reads a URL: MAILCHANNELS_API_URL=%j',
    (value) => {
      expect(ours('MAILCHANNELS_API_URL', value)).toEqual(zods(z.url(), value))
    },
  )

  it.each(['', 'https://dns.example/q', 'dns'])('reads a URL or nothing: WEBHOOK_DNS_URL=%j', (value) => {
    expect(ours('WEBHOOK_DNS_URL', value)).toEqual(zods(z.union([z.literal(''), z.url()]), value))
  })

  it.each(['console', 'mailchannels', 'smtp', ''])('reads a choice: EMAIL_PROVIDER=%j', (value) => {
    expect(ours('EMAIL_PROVIDER', value)).toEqual(zods(z.enum(['console', 'mailchannels']), value))
  })

  it.each(['true', 'off', '1', 'TRUE', ''])('reads a flag: FILES_AUTO_CONVERT=%j', (value) => {
    const flag = z
      .enum(['true', 'false', '1', '0', 'yes', 'no', 'on', 'off'])
      .transform((choice) => ['true', '1', 'yes', 'on'].includes(choice))
    expect(ours('FILES_AUTO_CONVERT', value)).toEqual(zods(flag, value))
  })

  it('names a missing secret as zod did', () => {
    expect(() => loadConfig({})).toThrow(
      'invalid configuration: JWT_SECRET: Invalid input: expected string, received undefined',
    )
  })

  it("names a sign-in provider's problems by their place in the JSON", () => {
    expect(() =>
      loadConfig({
        ...secret,
        AUTH_OAUTH_PROVIDERS: JSON.stringify([{ id: 'Google', client_id: '', issuer: 'nope', extra: 1 }]),
      }),
    ).toThrow(
      'invalid configuration: AUTH_OAUTH_PROVIDERS: 0.id: lower-case letters, digits and dashes; ' +
        'AUTH_OAUTH_PROVIDERS: 0.issuer: Invalid URL; ' +
        'AUTH_OAUTH_PROVIDERS: 0.client_id: Too small: expected string to have >=1 characters; ' +
        'AUTH_OAUTH_PROVIDERS: 0: Unrecognized key: "extra"',
    )
  })

  it('runs the checks across settings beside a value out of range, as zod ran its refinement', () => {
    expect(() => loadConfig({ ...secret, PDF_DPI: '1', FILES_MAX_BYTES: String(100 * 1024 * 1024) })).toThrow(
      /PDF_DPI: Too small: expected number to be >=10; FILES_MAX_BYTES: 104857600 and 262144 bytes/,
    )
  })

  it('refuses a GOTENBERG_URL that is no URL with its own problem, not an exception', () => {
    expect(() => loadConfig({ ...secret, GOTENBERG_URL: 'gotenberg' })).toThrow(
      'invalid configuration: GOTENBERG_URL: Invalid URL',
    )
  })
})
