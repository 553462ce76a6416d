// Every setting of the Worker, validated once per env object. A setting lives in exactly three places:
// wrangler.toml [vars] (or a secret), the table of settings below, and the settings table of docs/configuration.md.
// The table is plain functions, not zod: every request reads the settings, and zod's first use and a 65-setting
// schema cost a cold start more than the rest of GET / (docs/platform-limits.md, Startup). Defaults, coercions,
// ranges and messages are zod's, as the settings were once a zod schema: a bad value reads the same.

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

/** One setting: its value (a string, or undefined when not set) to what the Worker reads; a problem goes to `fail`,
 * `continues` when it is a value out of range, which still lets the checks across settings run (as zod's did). */
type Setting<T> = (value: string | undefined, fail: Fail) => T
type Fail = (message: string, continues?: boolean) => void

/** A value of the wrong type, in zod's words. */
const expected = (type: string, received: string) => `Invalid input: expected ${type}, received ${received}`
/** A refused setting's value: never read, since the whole configuration is refused. */
const REFUSED = undefined as never

const text =
  (fallback?: string, min = 0, tooShort = `Too small: expected string to have >=${min} characters`): Setting<string> =>
  (value, fail) => {
    if (value === undefined) {
      if (fallback === undefined) fail(expected('string', 'undefined'))
      return fallback ?? REFUSED
    }
    if (value.length < min) fail(tooShort, true)
    return value
  }

const optionalText: Setting<string | undefined> = (value) => (value ? value : undefined)

/** zod's z.url(): what URL.canParse takes once trimmed, kept trimmed and without tabs and newlines. */
function checkedUrl(value: string, fail: Fail): string {
  const trimmed = value.trim()
  if (!URL.canParse(trimmed)) fail('Invalid URL', true)
  return trimmed.replace(/[\t\n\r]/g, '')
}

const url =
  (fallback: string): Setting<string> =>
  (value, fail) =>
    value === undefined ? fallback : checkedUrl(value, fail)

const duration =
  (fallback: string): Setting<number> =>
  (value = fallback, fail) => {
    const seconds = parseDurationSeconds(value)
    if (seconds === undefined || seconds <= 0) fail(`expected a duration like 7d, 24h, 15m or 90s, got "${value}"`)
    return seconds ?? REFUSED
  }

const oneOf = <const T extends readonly string[]>(options: T, fallback: T[number]): Setting<T[number]> => {
  const message = `Invalid option: expected one of ${options.map((option) => `"${option}"`).join('|')}`
  return (value = fallback, fail) => {
    if (!options.includes(value)) fail(message)
    return value
  }
}

/** In the order zod named them (an enum's object keys: the integer-like first). */
const FLAG_VALUES = ['0', '1', 'true', 'false', 'yes', 'no', 'on', 'off'] as const
const flag = (fallback: boolean): Setting<boolean> => {
  const choice = oneOf(FLAG_VALUES, fallback ? 'true' : 'false')
  return (value, fail) => ['true', '1', 'yes', 'on'].includes(choice(value, fail))
}

/** zod's z.coerce.number().int().min(min).max(max): Number() of the string, an integer, in range. */
const integer =
  (fallback: number, min = 0, max = Number.POSITIVE_INFINITY): Setting<number> =>
  (value, fail) => {
    if (value === undefined) return fallback
    const number = Number(value)
    if (!Number.isFinite(number)) {
      fail(expected('number', String(number)))
      return REFUSED
    }
    if (!Number.isInteger(number)) {
      fail(expected('int', 'number'))
      return REFUSED
    }
    if (number > Number.MAX_SAFE_INTEGER) fail(`Too big: expected int to be <=${Number.MAX_SAFE_INTEGER}`, true)
    else if (number < Number.MIN_SAFE_INTEGER) fail(`Too small: expected int to be >=${Number.MIN_SAFE_INTEGER}`, true)
    if (number < min) fail(`Too small: expected number to be >=${min}`, true)
    if (number > max) fail(`Too big: expected number to be <=${max}`, true)
    return number
  }

/** A comma-separated list, items trimmed, empty ones dropped. */
const items = (value: string) =>
  value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean)

const urlList: Setting<string[]> = (value = '', fail) => {
  const urls = items(value)
  for (const url of urls) if (!URL.canParse(url)) fail(`not a URL: ${url}`)
  return urls
}

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
export interface OAuthProviderSettings {
  id: string
  name?: string
  preset?: 'google' | 'microsoft' | 'apple' | 'github'
  issuer?: string
  authorization_endpoint?: string
  token_endpoint?: string
  userinfo_endpoint?: string
  /** GitHub's: the list of the user's addresses with their verified flags. */
  emails_endpoint?: string
  client_id: string
  client_secret?: string
  scopes?: string[]
  /** Microsoft's directory: a tenant id, or `consumers` for personal accounts. */
  tenant?: string
  /** For a provider on loopback in tests and local development only: plain-http endpoints. */
  allow_insecure_http?: boolean
}

/** A JSON value's type as zod names it. */
const jsonType = (value: unknown) => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value)

/** A field of a provider: its JSON value checked, problems reported with their path; undefined only if optional. */
type Field = (value: unknown, fail: (message: string, path?: string) => void) => void

const jsonText =
  (min = 0, max = Number.POSITIVE_INFINITY): Field =>
  (value, fail) => {
    if (typeof value !== 'string') return fail(expected('string', jsonType(value)))
    if (value.length < min) fail(`Too small: expected string to have >=${min} characters`)
    if (value.length > max) fail(`Too big: expected string to have <=${max} characters`)
  }

const jsonUrl: Field = (value, fail) => {
  if (typeof value !== 'string') return fail(expected('string', jsonType(value)))
  checkedUrl(value, (message) => fail(message))
}

const PROVIDER_ID = /^[a-z0-9][a-z0-9-]{0,31}$/
const PRESETS = ['google', 'microsoft', 'apple', 'github']
const REQUIRED_FIELDS = new Set(['id', 'client_id'])
const PROVIDER_FIELDS: Record<keyof OAuthProviderSettings, Field> = {
  id: (value, fail) => {
    if (typeof value !== 'string') return fail(expected('string', jsonType(value)))
    if (!PROVIDER_ID.test(value)) fail('lower-case letters, digits and dashes')
  },
  name: jsonText(1, 60),
  preset: (value, fail) => {
    if (!PRESETS.includes(value as string))
      fail(`Invalid option: expected one of ${PRESETS.map((preset) => `"${preset}"`).join('|')}`)
  },
  issuer: jsonUrl,
  authorization_endpoint: jsonUrl,
  token_endpoint: jsonUrl,
  userinfo_endpoint: jsonUrl,
  emails_endpoint: jsonUrl,
  client_id: jsonText(1),
  client_secret: jsonText(1),
  scopes: (value, fail) => {
    if (!Array.isArray(value)) return fail(expected('array', jsonType(value)))
    for (const [index, scope] of value.entries()) jsonText(1)(scope, (message) => fail(message, String(index)))
  },
  tenant: jsonText(1),
  allow_insecure_http: (value, fail) => {
    if (typeof value !== 'boolean') fail(expected('boolean', jsonType(value)))
  },
}

/** A provider as zod's strict object took it: every field checked, no other field, URLs trimmed. */
function checkProvider(value: unknown, fail: (message: string, path?: string) => void): OAuthProviderSettings {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    fail(expected('object', jsonType(value)))
    return REFUSED
  }
  const provider = { ...value } as Record<string, unknown>
  for (const [name, check] of Object.entries(PROVIDER_FIELDS)) {
    const field = provider[name]
    if (field === undefined && !REQUIRED_FIELDS.has(name)) continue
    check(field, (message, path) => fail(message, path === undefined ? name : `${name}.${path}`))
    if (check === jsonUrl && typeof field === 'string') provider[name] = field.trim().replace(/[\t\n\r]/g, '')
  }
  const unknown = Object.keys(provider).filter((name) => !(name in PROVIDER_FIELDS))
  if (unknown.length > 0)
    fail(`Unrecognized key${unknown.length > 1 ? 's' : ''}: ${unknown.map((name) => `"${name}"`).join(', ')}`)
  return provider as unknown as OAuthProviderSettings
}

const oauthProviders: Setting<OAuthProviderSettings[]> = (value, fail) => {
  if (!value?.trim()) return []
  let json: unknown
  try {
    json = JSON.parse(value)
  } catch {
    fail('expected a JSON array of providers')
    return REFUSED
  }
  if (!Array.isArray(json)) {
    fail(`: ${expected('array', jsonType(json))}`)
    return REFUSED
  }
  if (json.length > 20) {
    fail(': Too big: expected array to have <=20 items')
    return REFUSED
  }
  let valid = true
  const providers = json.map((item, index) =>
    checkProvider(item, (message, path) => {
      valid = false
      fail(`${index}${path === undefined ? '' : `.${path}`}: ${message}`)
    }),
  )
  if (!valid) return REFUSED
  const ids = providers.map((provider) => provider.id)
  if (new Set(ids).size !== ids.length) fail('two providers share an id')
  return providers
}

/** Every setting, by name, in the order the configuration names its problems. */
const SETTINGS = {
  APP_URL: url('http://127.0.0.1:8787'),

  // auth
  JWT_SECRET: text(undefined, 32, 'must be at least 32 characters'),
  JWT_ISSUER: text('edgefloor', 1),
  JWT_AUDIENCE: text('edgefloor', 1),
  AUTH_JWT_EXPIRATION_AUTH: duration('7d'),
  AUTH_JWT_EXPIRATION_VERIFY: duration('24h'),
  AUTH_JWT_EXPIRATION_RESET: duration('1h'),
  AUTH_REFRESH_TTL: duration('30d'),
  AUTH_REGISTRATION_ENABLED: flag(true),
  AUTH_REQUIRE_EMAIL_VERIFICATION: flag(false),
  AUTH_DEFAULT_ROLE: text('user', 1),
  AUTH_RATE_LIMIT_PER_MINUTE: integer(10),
  AUTH_TRUST_CF_CONNECTING_IP: flag(false),
  AUTH_OAUTH_PROVIDERS: oauthProviders,
  AUTH_OAUTH_REDIRECT_URLS: urlList,
  AUTH_PASSKEY_ORIGINS: urlList,

  // browsers and proxies
  /** Origins a browser app may call from (comma-separated `scheme://host[:port]`); empty: any (`*`). */
  CORS_ORIGINS: (value = '', fail) => {
    const origins = items(value)
    const wrong = origins.find((origin) => !URL.canParse(origin) || new URL(origin).origin !== origin)
    if (wrong !== undefined) fail(`expected origins like https://app.example.com, got "${wrong}"`)
    return origins
  },
  /** Build the URLs the API answers (tus Location) from X-Forwarded-Host/-Proto or Forwarded: only behind a proxy that sets them. */
  TRUST_FORWARDED_HOST: flag(false),

  // email
  EMAIL_PROVIDER: oneOf(['console', 'mailchannels'], 'console'),
  EMAIL_FROM: text('Edgefloor <no-reply@edgefloor.local>', 3),
  MAILCHANNELS_API_URL: url('https://api.mailchannels.net/tx/v1/send'),
  MAILCHANNELS_API_KEY: optionalText,

  // files
  // The largest request body Cloudflare passes to a Worker on the zone's plan: 100 MB on Free and Pro, 200 MB on
  // Business, 500 MB on Enterprise (Workers limits, "Request limits"); read as decimal megabytes, the smaller reading.
  REQUEST_MAX_BYTES: integer(100_000_000, 1),
  FILES_MAX_BYTES: integer(95 * MiB, 1),
  FILES_MAX_RESUMABLE_BYTES: integer(5 * 1024 * MiB, 1),
  // R2 wants every part but the last to have at least 5 MiB, and none more than 5 GiB; one part is one request.
  FILES_MAX_PART_BYTES: integer(95 * MiB, 5 * MiB, 5 * 1024 * MiB),
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
  WEBHOOK_ALLOWED_HOSTS: (value = '') => items(value.toLowerCase()),
  /** The DNS-over-HTTPS JSON endpoint callback_url names are resolved with, to refuse special-use addresses; empty: not resolved. */
  WEBHOOK_DNS_URL: (value = 'https://cloudflare-dns.com/dns-query', fail) =>
    value === '' ? value : checkedUrl(value, fail),

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
  TEXT_FONTS_PREFIX: text('fonts/'),

  // Office → PDF (Gotenberg-compatible sidecar)
  GOTENBERG_URL: url('http://127.0.0.1:3000'),
  GOTENBERG_USERNAME: optionalText,
  GOTENBERG_PASSWORD: optionalText,
  // A Cloudflare Access service token, for a sidecar behind Cloudflare Tunnel (the secret as a secret).
  GOTENBERG_ACCESS_CLIENT_ID: optionalText,
  GOTENBERG_ACCESS_CLIENT_SECRET: optionalText,
  GOTENBERG_TIMEOUT_MS: integer(120_000, 1),
  OFFICE_MAX_BYTES: integer(50 * MiB, 1),

  // audio → text
  TRANSCRIBE_PROVIDER: oneOf(['auto', 'workers-ai', 'openai'], 'auto'),
  TRANSCRIBE_MODEL: text('@cf/openai/whisper-large-v3-turbo'),
  TRANSCRIBE_URL: optionalText,
  TRANSCRIBE_API_KEY: optionalText,
  AUDIO_MAX_BYTES: integer(32 * MiB, 1),
  AUDIO_CHUNK_BYTES: integer(0),
  AUDIO_MAX_SECONDS: integer(4 * 3600, 1),
} satisfies Record<string, Setting<unknown>>

export type Config = { [Name in keyof typeof SETTINGS]: ReturnType<(typeof SETTINGS)[Name]> }

/** A problem of the configuration: the setting it is about (none for the whole), and what is wrong. */
export interface ConfigIssue {
  path: string[]
  message: string
}

/** Limits the platform cannot serve, refused at start-up rather than met by a client as the edge's HTML 413. */
function platformProblems(config: Config, known: readonly ConfigIssue[]): ConfigIssue[] {
  const issues: ConfigIssue[] = []
  const { REQUEST_MAX_BYTES, FILES_MAX_BYTES, FILES_MAX_PART_BYTES } = config
  if (FILES_MAX_BYTES + MULTIPART_OVERHEAD_BYTES > REQUEST_MAX_BYTES) {
    issues.push({
      path: ['FILES_MAX_BYTES'],
      message: `${FILES_MAX_BYTES} and ${MULTIPART_OVERHEAD_BYTES} bytes of multipart overhead do not fit one request body (REQUEST_MAX_BYTES ${REQUEST_MAX_BYTES})`,
    })
  }
  if (FILES_MAX_PART_BYTES > REQUEST_MAX_BYTES) {
    issues.push({
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
    issues.push({
      path: [path],
      message: `${work}: ${seconds(ms)}, more than a ${CPU_MARGIN}× margin leaves of ${worker}'s ${limitMs} ms ([limits] cpu_ms)`,
    })
  }
  const problem = known.some((issue) => issue.path[0] === 'GOTENBERG_URL') ? undefined : gotenbergUrlProblem(config)
  if (problem) issues.push({ path: ['GOTENBERG_URL'], message: problem })
  return issues
}

/** The settings as the Worker reads them, or every problem of them. */
function parseSettings(
  vars: Record<string, string>,
): { success: true; data: Config } | { success: false; error: { issues: ConfigIssue[] } } {
  const issues: ConfigIssue[] = []
  const config: Record<string, unknown> = {}
  /** Whether a value is of no use (not a number, not a choice): the checks across settings do not run. */
  let unusable = false
  for (const [name, setting] of Object.entries(SETTINGS) as [string, Setting<unknown>][]) {
    const value = Object.hasOwn(vars, name) ? vars[name] : undefined
    config[name] = setting(value, (message, continues) => {
      issues.push({ path: [name], message })
      if (!continues) unusable = true
    })
  }
  if (!unusable) issues.push(...platformProblems(config as Config, issues))
  return issues.length === 0 ? { success: true, data: config as Config } : { success: false, error: { issues } }
}

/** The settings' names (`shape`) and their validation (`safeParse`), for `npm start` and the docs' tests. */
export const configSchema = { shape: SETTINGS, safeParse: parseSettings }

/** Whether a URL's host is this machine (127.0.0.0/8, ::1, localhost): on Cloudflare, nothing of the deployer's. */
export function isLoopbackUrl(url: string): boolean {
  const host = new URL(url).hostname.toLowerCase().replace(/^\[|\]$/g, '')
  return host === 'localhost' || host.endsWith('.localhost') || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host)
}

/**
 * Why GOTENBERG_URL cannot be used as set: a sidecar off this machine is reached over HTTPS only (documents and
 * credentials cross the internet), and with credentials (basic auth or an Access service token, whole) so that no
 * one else converts on it. Loopback stays open: the local sidecar, and a Container reached through its binding.
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
  const result = parseSettings(stringVars(env))
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
