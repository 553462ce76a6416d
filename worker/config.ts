// Every setting of the Worker, validated once per env object. A setting lives in exactly three places:
// wrangler.toml [vars] (or a secret), this schema, and the settings table of docs/configuration.md.
import { z } from 'zod'

const DURATION = /^(\d+)\s*(ms|s|m|h|d|w)$/
const UNIT_SECONDS = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400, w: 604800 } as const

/** "7d", "24h", "90s" → seconds. Plain numbers are seconds too. */
export function parseDurationSeconds(value: string): number | undefined {
  const trimmed = value.trim()
  if (/^\d+$/.test(trimmed)) return Number(trimmed)
  const match = DURATION.exec(trimmed)
  if (!match) return undefined
  return Math.floor(Number(match[1]) * UNIT_SECONDS[match[2] as keyof typeof UNIT_SECONDS])
}

const duration = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((value, ctx) => {
      const seconds = parseDurationSeconds(value)
      if (seconds === undefined || seconds <= 0) {
        ctx.addIssue({ code: 'custom', message: `expected a duration like 7d, 24h, 15m or 90s, got "${value}"` })
        return z.NEVER
      }
      return seconds
    })

const flag = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0', 'yes', 'no', 'on', 'off'])
    .default(fallback ? 'true' : 'false')
    .transform((value) => ['true', '1', 'yes', 'on'].includes(value))

const integer = (fallback: number, min = 0) => z.coerce.number().int().min(min).default(fallback)
const optionalText = z
  .string()
  .optional()
  .transform((value) => (value ? value : undefined))

const MiB = 1024 * 1024

/**
 * Room for what a one-request upload sends besides the file (multipart boundaries and headers, the other fields):
 * FILES_MAX_BYTES plus this must fit REQUEST_MAX_BYTES, or the edge answers its own HTML 413 before the Worker runs.
 */
export const MULTIPART_OVERHEAD_BYTES = 256 * 1024

/**
 * The CPU one conversion step and one API request may use: wrangler.consumer.toml's and wrangler.toml's `[limits]
 * cpu_ms`, which a Worker cannot read (test/config/platform-limits.test.ts holds them equal).
 */
export const CPU_STEP_LIMIT_MS = 60_000
export const CPU_REQUEST_LIMIT_MS = 30_000
/** How far below its limit the measured worst of a step or request must stay: other hardware, inputs not measured. */
export const CPU_MARGIN = 3
/**
 * CPU ms of the costliest unit of each piece of work the settings bound, measured as deployed (`npm run bench:cpu`,
 * docs/platform-limits.md "CPU per invocation"): a MiB of text laid out (a text step lays the whole text out twice at
 * most: its plan, then its part), a text page drawn at 150 dpi of the densest text taken (three characters a cell),
 * a PDF page's megapixel (a 12 MP JPEG under a dense drawing), and a GiB of a resumable upload hashed back from R2.
 */
export const MEASURED_CPU_MS = {
  textLayoutMiB: 200,
  textPageAt150Dpi: 331,
  pdfPageMegapixel: 880,
  hashedGiB: 570,
} as const

/** The CPU ms of each bounded step or request the settings allow at their worst, from MEASURED_CPU_MS. */
export function worstCpuMs(settings: {
  TEXT_MAX_BYTES: number
  PDF_DPI: number
  CONVERT_PAGES_PER_STEP: number
  PDF_MAX_PAGE_PIXELS: number
  FILES_MAX_RESUMABLE_BYTES: number
}): { textStep: number; pdfStep: number; resumableComplete: number } {
  return {
    textStep:
      2 * (settings.TEXT_MAX_BYTES / MiB) * MEASURED_CPU_MS.textLayoutMiB +
      settings.CONVERT_PAGES_PER_STEP * MEASURED_CPU_MS.textPageAt150Dpi * (settings.PDF_DPI / 150) ** 2,
    pdfStep: settings.CONVERT_PAGES_PER_STEP * (settings.PDF_MAX_PAGE_PIXELS / 1e6) * MEASURED_CPU_MS.pdfPageMegapixel,
    resumableComplete: (settings.FILES_MAX_RESUMABLE_BYTES / (1024 * MiB)) * MEASURED_CPU_MS.hashedGiB,
  }
}
/** One sign-in provider (worker/auth/oidc.ts): a preset (google, microsoft, apple, github), an OpenID Connect issuer
 * (discovery), or the endpoints of a plain OAuth 2.0 provider; its client secret with it. */
const OAuthProviderSchema = z.strictObject({
  id: z.string().regex(/^[a-z0-9][a-z0-9-]{0,31}$/, 'lower-case letters, digits and dashes'),
  name: z.string().min(1).max(60).optional(),
  preset: z.enum(['google', 'microsoft', 'apple', 'github']).optional(),
  issuer: z.url().optional(),
  authorization_endpoint: z.url().optional(),
  token_endpoint: z.url().optional(),
  userinfo_endpoint: z.url().optional(),
  /** GitHub's: the list of the user's addresses with their verified flags. */
  emails_endpoint: z.url().optional(),
  client_id: z.string().min(1),
  client_secret: z.string().min(1).optional(),
  scopes: z.array(z.string().min(1)).optional(),
  /** Microsoft's directory: a tenant id, or `consumers` for personal accounts. */
  tenant: z.string().min(1).optional(),
  /** For a provider on loopback in tests and local development only: plain-http endpoints. */
  allow_insecure_http: z.boolean().optional(),
})
export type OAuthProviderSettings = z.infer<typeof OAuthProviderSchema>

const oauthProviders = z
  .string()
  .optional()
  .transform((value, ctx) => {
    if (!value?.trim()) return []
    let json: unknown
    try {
      json = JSON.parse(value)
    } catch {
      ctx.addIssue({ code: 'custom', message: 'expected a JSON array of providers' })
      return z.NEVER
    }
    const result = z.array(OAuthProviderSchema).max(20).safeParse(json)
    if (!result.success) {
      for (const issue of result.error.issues)
        ctx.addIssue({ code: 'custom', message: `${issue.path.join('.')}: ${issue.message}` })
      return z.NEVER
    }
    const ids = result.data.map((provider) => provider.id)
    if (new Set(ids).size !== ids.length) ctx.addIssue({ code: 'custom', message: 'two providers share an id' })
    return result.data
  })

const urlList = z
  .string()
  .default('')
  .transform((value, ctx) => {
    const urls = value
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean)
    for (const url of urls) if (!URL.canParse(url)) ctx.addIssue({ code: 'custom', message: `not a URL: ${url}` })
    return urls
  })

export const configSchema = z
  .object({
    APP_URL: z.url().default('http://127.0.0.1:8787'),

    // auth
    JWT_SECRET: z.string().min(32, 'must be at least 32 characters'),
    JWT_ISSUER: z.string().min(1).default('edgefloor'),
    JWT_AUDIENCE: z.string().min(1).default('edgefloor'),
    AUTH_JWT_EXPIRATION_AUTH: duration('7d'),
    AUTH_JWT_EXPIRATION_VERIFY: duration('24h'),
    AUTH_JWT_EXPIRATION_RESET: duration('1h'),
    AUTH_REFRESH_TTL: duration('30d'),
    AUTH_REGISTRATION_ENABLED: flag(true),
    AUTH_REQUIRE_EMAIL_VERIFICATION: flag(false),
    AUTH_DEFAULT_ROLE: z.string().min(1).default('user'),
    AUTH_RATE_LIMIT_PER_MINUTE: integer(10),
    AUTH_TRUST_CF_CONNECTING_IP: flag(false),
    AUTH_OAUTH_PROVIDERS: oauthProviders,
    AUTH_OAUTH_REDIRECT_URLS: urlList,
    AUTH_PASSKEY_ORIGINS: urlList,

    // browsers and proxies
    /** Origins a browser app may call from (comma-separated `scheme://host[:port]`); empty: any (`*`). */
    CORS_ORIGINS: z
      .string()
      .default('')
      .transform((value, ctx) => {
        const origins = value
          .split(',')
          .map((origin) => origin.trim())
          .filter(Boolean)
        for (const origin of origins) {
          if (!URL.canParse(origin) || new URL(origin).origin !== origin) {
            ctx.addIssue({ code: 'custom', message: `expected origins like https://app.example.com, got "${origin}"` })
            return z.NEVER
          }
        }
        return origins
      }),
    /**
     * Build the URLs the API answers (tus Location) from X-Forwarded-Host/-Proto or Forwarded: only behind a proxy that
     * sets them.
     */
    TRUST_FORWARDED_HOST: flag(false),

    // email
    EMAIL_PROVIDER: z.enum(['console', 'mailchannels']).default('console'),
    EMAIL_FROM: z.string().min(3).default('Edgefloor <no-reply@edgefloor.local>'),
    MAILCHANNELS_API_URL: z.url().default('https://api.mailchannels.net/tx/v1/send'),
    MAILCHANNELS_API_KEY: optionalText,

    // files
    // The largest request body Cloudflare passes to a Worker on the zone's plan: 100 MB on Free and Pro, 200 MB on
    // Business, 500 MB on Enterprise (Workers limits, "Request limits"). Read as decimal megabytes: the smaller one.
    REQUEST_MAX_BYTES: integer(100_000_000, 1),
    FILES_MAX_BYTES: integer(95 * MiB, 1),
    FILES_MAX_RESUMABLE_BYTES: integer(5 * 1024 * MiB, 1),
    // R2 wants every part but the last to have at least 5 MiB, and none more than 5 GiB; one part is one request.
    FILES_MAX_PART_BYTES: z.coerce
      .number()
      .int()
      .min(5 * MiB)
      .max(5 * 1024 * MiB)
      .default(95 * MiB),
    FILES_URL_TTL: duration('1h'),
    // An unfinished resumable or tus upload is aborted this long after its last bytes arrived (scheduled sweep).
    FILES_UPLOAD_TTL: duration('24h'),
    FILES_QUOTA_BYTES: integer(0),
    FILES_AUTO_CONVERT: flag(false),

    // conversion pipeline
    CONVERT_WAIT_MS: integer(60_000),
    CONVERT_PAGES_PER_STEP: integer(10, 1),
    // previews: drawn by the consumer Worker; a request waits this long for a new one before answering 202, and a
    // preview that failed answers its reason for PREVIEW_FAILURE_TTL before it is drawn again
    PREVIEW_WAIT_MS: integer(10_000),
    PREVIEW_FAILURE_TTL: duration('1h'),
    WEBHOOK_ALLOW_HTTP: flag(false),
    /** Hosts a callback_url may name although they are loopback or private (comma-separated; for tests). */
    WEBHOOK_ALLOWED_HOSTS: z
      .string()
      .default('')
      .transform((value) =>
        value
          .split(',')
          .map((host) => host.trim().toLowerCase())
          .filter(Boolean),
      ),
    /**
     * The DNS-over-HTTPS JSON endpoint callback_url names are resolved with, to refuse special-use addresses; empty:
     * not resolved.
     */
    WEBHOOK_DNS_URL: z.union([z.literal(''), z.url()]).default('https://cloudflare-dns.com/dns-query'),

    // image → PNG
    IMAGE_MAX_BYTES: integer(50 * MiB, 1),
    IMAGE_MAX_PIXELS: integer(12_000_000, 1),
    IMAGE_MAX_SIDE: integer(20_000, 1),
    IMAGE_MAX_DIMENSION: integer(0),

    // PDF → PNG
    PDF_DPI: integer(150, 10),
    PDF_MAX_PAGES: integer(1000, 1),
    PDF_MAX_PAGE_PIXELS: integer(2_200_000, 1),
    PDF_MAX_BYTES: integer(24 * MiB, 1),
    PDF_MAX_IMAGE_PIXELS: integer(12_000_000, 1),

    // text → PNG
    TEXT_MAX_BYTES: integer(5 * MiB, 1),
    TEXT_MAX_PAGES: integer(200, 1),
    TEXT_FONTS_PREFIX: z.string().default('fonts/'),

    // Office → PDF (Gotenberg-compatible sidecar)
    GOTENBERG_URL: z.url().default('http://127.0.0.1:3000'),
    GOTENBERG_USERNAME: optionalText,
    GOTENBERG_PASSWORD: optionalText,
    // A Cloudflare Access service token, for a sidecar behind Cloudflare Tunnel (the secret as a secret).
    GOTENBERG_ACCESS_CLIENT_ID: optionalText,
    GOTENBERG_ACCESS_CLIENT_SECRET: optionalText,
    GOTENBERG_TIMEOUT_MS: integer(120_000, 1),
    OFFICE_MAX_BYTES: integer(50 * MiB, 1),

    // audio → text
    TRANSCRIBE_PROVIDER: z.enum(['auto', 'workers-ai', 'openai']).default('auto'),
    TRANSCRIBE_MODEL: z.string().default('@cf/openai/whisper-large-v3-turbo'),
    TRANSCRIBE_URL: optionalText,
    TRANSCRIBE_API_KEY: optionalText,
    AUDIO_MAX_BYTES: integer(32 * MiB, 1),
    AUDIO_CHUNK_BYTES: integer(0),
    AUDIO_MAX_SECONDS: integer(4 * 3600, 1),
  })
  .superRefine((config, ctx) => {
    // Limits the platform cannot serve are refused at start-up, not met by a client as the edge's HTML 413.
    const { REQUEST_MAX_BYTES, FILES_MAX_BYTES, FILES_MAX_PART_BYTES } = config
    if (FILES_MAX_BYTES + MULTIPART_OVERHEAD_BYTES > REQUEST_MAX_BYTES) {
      ctx.addIssue({
        code: 'custom',
        path: ['FILES_MAX_BYTES'],
        message: `${FILES_MAX_BYTES} and ${MULTIPART_OVERHEAD_BYTES} bytes of multipart overhead do not fit one request body (REQUEST_MAX_BYTES ${REQUEST_MAX_BYTES})`,
      })
    }
    if (FILES_MAX_PART_BYTES > REQUEST_MAX_BYTES) {
      ctx.addIssue({
        code: 'custom',
        path: ['FILES_MAX_PART_BYTES'],
        message: `a part of ${FILES_MAX_PART_BYTES} bytes does not fit one request body (REQUEST_MAX_BYTES ${REQUEST_MAX_BYTES})`,
      })
    }
    const worst = worstCpuMs(config)
    const seconds = (ms: number) => `about ${Math.ceil(ms / 1000)} s of CPU`
    const cpuChecks = [
      [
        'TEXT_MAX_BYTES',
        worst.textStep,
        CPU_STEP_LIMIT_MS,
        `a text step lays out up to ${config.TEXT_MAX_BYTES} bytes (TEXT_MAX_BYTES) twice and draws ${config.CONVERT_PAGES_PER_STEP} pages (CONVERT_PAGES_PER_STEP) at ${config.PDF_DPI} dpi (PDF_DPI)`,
        'the consumer Worker',
      ],
      [
        'CONVERT_PAGES_PER_STEP',
        worst.pdfStep,
        CPU_STEP_LIMIT_MS,
        `a step of ${config.CONVERT_PAGES_PER_STEP} PDF pages of ${config.PDF_MAX_PAGE_PIXELS} pixels (PDF_MAX_PAGE_PIXELS)`,
        'the consumer Worker',
      ],
      [
        'FILES_MAX_RESUMABLE_BYTES',
        worst.resumableComplete,
        CPU_REQUEST_LIMIT_MS,
        `completing a resumable upload of ${config.FILES_MAX_RESUMABLE_BYTES} bytes hashes it back from R2`,
        'the API Worker',
      ],
    ] as const
    for (const [path, ms, limitMs, work, worker] of cpuChecks) {
      if (ms * CPU_MARGIN <= limitMs) continue
      ctx.addIssue({
        code: 'custom',
        path: [path],
        message: `${work}: ${seconds(ms)}, more than a ${CPU_MARGIN}× margin leaves of ${worker}'s ${limitMs} ms ([limits] cpu_ms)`,
      })
    }
    const problem = gotenbergUrlProblem(config)
    if (problem) ctx.addIssue({ code: 'custom', path: ['GOTENBERG_URL'], message: problem })
  })

export type Config = z.output<typeof configSchema>

/** Whether a URL's host is this machine (127.0.0.0/8, ::1, localhost): on Cloudflare, nothing of the deployer's. */
export function isLoopbackUrl(url: string): boolean {
  const host = new URL(url).hostname.toLowerCase().replace(/^\[|\]$/g, '')
  return host === 'localhost' || host.endsWith('.localhost') || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host)
}

/**
 * Why GOTENBERG_URL cannot be used as set. A sidecar off this machine is reached over HTTPS only: documents and
 * credentials cross the internet. It needs credentials too (basic auth or an Access service token, whole), so that
 * no one else converts on it. Loopback stays open: the local sidecar, and a Container reached through its binding.
 */
function gotenbergUrlProblem(config: {
  GOTENBERG_URL: string
  GOTENBERG_USERNAME?: string
  GOTENBERG_ACCESS_CLIENT_ID?: string
  GOTENBERG_ACCESS_CLIENT_SECRET?: string
}): string | undefined {
  const {
    GOTENBERG_URL: url,
    GOTENBERG_USERNAME: username,
    GOTENBERG_ACCESS_CLIENT_ID: id,
    GOTENBERG_ACCESS_CLIENT_SECRET: secret,
  } = config
  if (!id !== !secret)
    return 'GOTENBERG_ACCESS_CLIENT_ID and GOTENBERG_ACCESS_CLIENT_SECRET go together: set both, or neither'
  if (isLoopbackUrl(url)) return undefined
  if (new URL(url).protocol !== 'https:')
    return `must be https:// for a sidecar that is not on this machine (got ${new URL(url).origin}): documents and credentials would cross the network in clear`
  if (!username && !id)
    return 'a sidecar that is not on this machine needs credentials: GOTENBERG_USERNAME and GOTENBERG_PASSWORD, or GOTENBERG_ACCESS_CLIENT_ID and GOTENBERG_ACCESS_CLIENT_SECRET'
  return undefined
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError'
}

const parsed = new WeakMap<object, Config>()

/** Parses the env's vars and secrets once per env object; a bad value names the variable. */
export function loadConfig(env: object): Config {
  const cached = parsed.get(env)
  if (cached) return cached
  const result = configSchema.safeParse(stringVars(env))
  if (!result.success) {
    const problems = result.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`)
    throw new ConfigError(`invalid configuration: ${problems.join('; ')}`)
  }
  parsed.set(env, result.data)
  return result.data
}

function stringVars(env: object): Record<string, string> {
  const vars: Record<string, string> = {}
  for (const [key, value] of Object.entries(env)) {
    if (typeof value === 'string') vars[key] = value
    else if (typeof value === 'number' || typeof value === 'boolean') vars[key] = String(value)
  }
  return vars
}
