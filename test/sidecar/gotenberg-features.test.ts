// Replays Gotenberg 8.34's own feature files (gotenberg/gotenberg, test/integration/features/*.feature, with its
// test/integration/testdata) against the sidecar: a small Gherkin reader and the step vocabulary of Gotenberg's
// test/integration/scenario/scenario.go, each step checked as scenario.go checks it (pdfinfo, pdftotext, pdfimages,
// qpdf, exiftool on the answer's files). Gotenberg's container settings map to the sidecar's (API_ROOT_PATH →
// rootPath, …); a scenario whose setting has no equivalent here, or whose step needs a tool Debian lacks (veraPDF
// is replaced by the conformance the PDF declares in its XMP), is skipped with the reason, and the count printed.
//
// Gotenberg's files are not part of this repository: point GOTENBERG_INTEGRATION_DIR at a checkout's
// test/integration folder (features/ and testdata/ inside); without it the replay is skipped. The hand-written
// scenario tests beside this file (gotenberg-scenarios.test.ts, gotenberg-routes.test.ts) run everywhere.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import {
  GOTENBERG_VERSION,
  optionsFromEnv,
  type RunningSidecar,
  type SidecarOptions,
  startSidecar,
} from '../../sidecar/server'

const ROOT = process.env.GOTENBERG_INTEGRATION_DIR ?? ''
const FEATURES = (
  process.env.GOTENBERG_FEATURES ??
  'libreoffice_convert,pdfengines_*,chromium_*,health,version,root,prometheus_metrics,webhook,output_filename'
).split(',')
const SLOW = 300_000

interface Step {
  keyword: string
  text: string
  table?: string[][]
  doc?: string
}
interface Scenario {
  feature: string
  name: string
  steps: Step[]
}

/** Gherkin as Gotenberg writes it: Scenario blocks of steps, each with an optional table or doc string. */
function parseFeature(feature: string, text: string): Scenario[] {
  const scenarios: Scenario[] = []
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim()
    if (line.startsWith('Scenario:'))
      scenarios.push({ feature, name: line.slice('Scenario:'.length).trim(), steps: [] })
    else if (/^(Given|When|Then|And|But) /.test(line) && scenarios.length > 0) {
      const [keyword, ...rest] = line.split(' ')
      scenarios.at(-1)!.steps.push({ keyword: keyword!, text: rest.join(' ') })
    } else if (line.startsWith('|') && scenarios.at(-1)?.steps.length) {
      const step = scenarios.at(-1)!.steps.at(-1)!
      const cells = line
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim().replace(/\\\|/g, '|').replace(/\\\\/g, '\\'))
      ;(step.table ??= []).push(cells)
    } else if (line === '"""' && scenarios.at(-1)?.steps.length) {
      const indent = lines[i]!.indexOf('"""')
      const body: string[] = []
      for (i++; lines[i]!.trim() !== '"""'; i++) body.push(lines[i]!.slice(indent))
      scenarios.at(-1)!.steps.at(-1)!.doc = body.join('\n')
    }
  }
  return scenarios
}

/** The sidecar's setting for each of Gotenberg's container variables; a string is why there is none. */
function settingsFor(env: Record<string, string>): Partial<SidecarOptions> | string {
  const out: Record<string, unknown> = {}
  // The test servers Gotenberg's container reaches at host.docker.internal are on loopback here: listed by name.
  const vars: Record<string, string> = { SIDECAR_ALLOWED_PRIVATE_HOSTS: '127.0.0.1,localhost' }
  for (const [name, value] of Object.entries(env)) {
    if (/_(ROUTE_)?TELEMETRY$|_ROUTE_LOGGING$/.test(name) && value === 'false') continue
    if (
      name === 'API_ENABLE_BASIC_AUTH' ||
      name === 'GOTENBERG_API_BASIC_AUTH_USERNAME' ||
      name === 'GOTENBERG_API_BASIC_AUTH_PASSWORD'
    )
      continue
    // The debug route is not served (its scenarios are skipped by their step); enabling it changes nothing else.
    if (name === 'API_ENABLE_DEBUG_ROUTE') continue
    // One engine does each PDF operation here: qpdf (merge, split, rotate, encrypt, stamp, watermark, flatten, embed)
    // and exiftool (metadata), which do what Gotenberg's qpdf and pdfcpu engines do; pdftk's refusals are not reproduced.
    if (/^PDFENGINES_\w+_ENGINES$/.test(name) && /^(qpdf|pdfcpu|exiftool)$/.test(value)) continue
    if (name === 'API_ROOT_PATH') vars.SIDECAR_ROOT_PATH = value
    else if (name === 'API_DISABLE_HEALTH_CHECK_ROUTE_TELEMETRY' && value === 'true') out.healthLogging = false
    else if (name === 'CHROMIUM_DISABLE_ROUTES' && value === 'true') vars.SIDECAR_CHROMIUM_DISABLE = 'true'
    else if (name === 'PDFENGINES_DISABLE_ROUTES' && value === 'true') vars.SIDECAR_PDFENGINES_DISABLE = 'true'
    else if (name === 'CHROMIUM_ALLOW_LIST' && !value.startsWith('^file')) vars.SIDECAR_CHROMIUM_ALLOW_LIST = value
    else if (name === 'CHROMIUM_DENY_LIST' && !value.startsWith('^file')) vars.SIDECAR_CHROMIUM_DENY_LIST = value
    else if (name === 'CHROMIUM_DENY_PRIVATE_IPS' && value === 'true') vars.SIDECAR_CHROMIUM_DENY_PRIVATE = 'true'
    else if (name === 'CHROMIUM_MAX_CONCURRENCY') vars.SIDECAR_CHROMIUM_PAGES = value
    else return `${name}=${value} has no equivalent in the sidecar`
  }
  if (env.API_ENABLE_BASIC_AUTH === 'true')
    Object.assign(out, {
      username: env.GOTENBERG_API_BASIC_AUTH_USERNAME,
      password: env.GOTENBERG_API_BASIC_AUTH_PASSWORD,
    })
  return { ...optionsFromEnv(vars), ...out } as Partial<SidecarOptions>
}

/** Steps whose meaning the sidecar does not have, and why (scenario.go's steps outside the conversion API). */
const UNSUPPORTED_STEPS: ReadonlyArray<[RegExp, string]> = [
  [/carry trace id/, 'OpenTelemetry trace propagation (traceparent) is not implemented'],
  [
    /webhook event should match JSON/,
    'the Gotenberg-Webhook-Events-Url header (8.34 webhook events) is not implemented',
  ],
  [/at the "(\/foo)?\/debug" endpoint/, "Gotenberg's /debug route (its build and module details) is not served"],
  [/PDFENGINES_\w+_ENGINES|bookmarks/, ''],
]

const logs: Record<string, unknown>[] = []
const sidecars = new Map<string, RunningSidecar>()
let base: RunningSidecar | undefined

/** One sidecar per distinct setting, all on the first one's LibreOffice (and Chromium, when its settings agree). */
async function sidecarFor(options: Partial<SidecarOptions>): Promise<RunningSidecar> {
  const key = JSON.stringify(options, (_, value) => (value instanceof RegExp ? value.source : value))
  let sidecar = sidecars.get(key)
  if (!sidecar) {
    const full = {
      ...(options as SidecarOptions),
      port: 0,
      processes: 1,
      queueSize: 32,
      log: (entry: Record<string, unknown>) => void logs.push(entry),
    }
    const sameChromium =
      base &&
      JSON.stringify(full.chromium, (_, value) => (value instanceof RegExp ? value.source : value)) === baseChromium
    sidecar = base
      ? await startSidecar(full, base.pool, sameChromium ? base.chromium : undefined)
      : await startSidecar(full)
    if (!base) {
      base = sidecar
      baseChromium = JSON.stringify(full.chromium, (_, value) => (value instanceof RegExp ? value.source : value))
    }
    sidecars.set(key, sidecar)
  }
  return sidecar
}
let baseChromium = ''

afterAll(async () => {
  for (const sidecar of [...sidecars.values()].reverse()) await sidecar.close()
})

/** Gotenberg's test servers: /static/<path> and /html/<path> from its integration folder, and the webhook. */
class TestServer {
  readonly server: Server
  port = 0
  request: { headers: IncomingMessage['headers']; body: Buffer } | undefined
  private arrived: () => void = () => {}
  readonly delivered = new Promise<void>((resolve) => (this.arrived = resolve))
  constructor(workdir: string) {
    this.server = createServer(async (request, response) => {
      const chunks: Buffer[] = []
      for await (const chunk of request) chunks.push(chunk as Buffer)
      const body = Buffer.concat(chunks)
      const path = decodeURIComponent(new URL(request.url ?? '/', 'http://x').pathname)
      this.request = { headers: request.headers, body }
      if (path === '/webhook' || path === '/webhook/error') {
        if (path === '/webhook') {
          const disposition = request.headers['content-disposition'] ?? ''
          const name =
            /filename="?([^";]+)"?/.exec(disposition)?.[1] ??
            `${crypto.randomUUID()}.${request.headers['content-type'] === 'application/zip' ? 'zip' : 'pdf'}`
          saveAnswer(
            join(workdir, String(request.headers['gotenberg-trace'])),
            name,
            body,
            String(request.headers['content-type']),
          )
        }
        response.end('OK')
        this.arrived()
        return
      }
      const [, kind, ...rest] = path.split('/')
      const file = join(ROOT, ...rest)
      if ((kind !== 'static' && kind !== 'html') || !existsSync(file)) return void response.writeHead(404).end()
      response.writeHead(
        200,
        kind === 'html'
          ? { 'content-type': 'text/html; charset=UTF-8' }
          : { 'content-disposition': `attachment; filename="${basename(file)}"` },
      )
      response.end(readFileSync(file))
    })
  }
  async start(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve))
    this.port = (this.server.address() as { port: number }).port
    return this.port
  }
}

function saveAnswer(folder: string, name: string, body: Buffer, type: string): void {
  mkdirSync(folder, { recursive: true })
  const path = join(folder, basename(name))
  writeFileSync(path, body)
  if (type === 'application/zip') execFileSync('unzip', ['-q', '-o', path, '-d', folder])
}

const run = (command: string, args: string[]) => {
  try {
    return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  } catch (error) {
    return `${(error as { stdout?: string }).stdout ?? ''}${(error as { stderr?: string }).stderr ?? ''}`
  }
}
const walk = (folder: string): string[] =>
  existsSync(folder)
    ? readdirSync(folder, { recursive: true })
        .map(String)
        .map((entry) => join(folder, entry))
        .filter((path) => statSync(path).isFile())
    : []

/** scenario.go's compareJson: every expected key present and equal, "ignore" skipping a value. */
function compareJson(expected: unknown, actual: unknown, at = '$'): void {
  if (expected && typeof expected === 'object' && !Array.isArray(expected)) {
    expect(actual, at).toBeTypeOf('object')
    for (const [key, value] of Object.entries(expected)) {
      if (value === 'ignore') continue
      expect(actual as object, `${at}.${key}`).toHaveProperty([key])
      compareJson(value, (actual as Record<string, unknown>)[key], `${at}.${key}`)
    }
  } else if (Array.isArray(expected)) {
    expect(actual, at).toHaveLength(expected.length)
    for (const [i, value] of expected.entries()) compareJson(value, (actual as unknown[])[i], `${at}[${i}]`)
  } else expect(actual, at).toEqual(expected)
}

/** The conformance a PDF declares (veraPDF, which Gotenberg validates with, is not in Debian). */
function declaredConformance(path: string): string {
  const xmp = run('pdfinfo', ['-meta', path])
  const part = /pdfaid:part(?:="|>)(\d)/.exec(xmp)?.[1]
  const conformance = /pdfaid:conformance(?:="|>)(\w)/.exec(xmp)?.[1]?.toLowerCase()
  const ua = /pdfuaid:part(?:="|>)(\d)/.exec(xmp)?.[1]
  return [part ? `PDF/A-${part}${conformance}` : '', ua ? `PDF/UA-${ua}` : ''].join(' ')
}

async function replay(scenario: Scenario): Promise<void> {
  const workdir = mkdtempSync(join(tmpdir(), 'gotenberg-feature-'))
  let env: Record<string, string> = {}
  let sidecar: RunningSidecar | undefined
  let server: TestServer | undefined
  let response: { status: number; headers: Headers; body: Buffer } | undefined
  let concurrent: { status: number; trace: string }[] = []
  let store = ''
  let logsFrom = 0
  const need = async () => {
    if (sidecar) return sidecar
    const settings = settingsFor(env)
    if (typeof settings === 'string') throw new Error(`unexpected: ${settings}`)
    sidecar = await sidecarFor(settings)
    logsFrom = logs.length
    return sidecar
  }
  const port = () => String(server?.port ?? 0)
  const local = (value: string) => value.replace(/host\.docker\.internal/g, '127.0.0.1').replace(/%d/g, port())
  const pdfs = () => walk(store).filter((path) => path.toLowerCase().endsWith('.pdf'))
  const pdfNamed = (name: string) =>
    (name.startsWith('*_') ? walk(store).find((path) => basename(path).includes(name.slice(2))) : join(store, name))!
  const request = async (method: string, endpoint: string, table: string[][]) => {
    const running = await need()
    const form = new FormData()
    const headers: Record<string, string> = {}
    for (const [name, value, kind] of table) {
      if (kind === 'field') form.append(name!, local(value!))
      else if (kind === 'header') headers[name!] = local(value!)
      else {
        const path = value!.startsWith('teststore/')
          ? join(store, value!.slice('teststore/'.length))
          : join(ROOT, value!)
        form.append(name!, new Blob([readFileSync(path)]), basename(path))
      }
    }
    const res = await fetch(`${running.url}${endpoint}`, {
      method,
      body: method === 'POST' ? form : undefined,
      headers,
    })
    return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) }
  }
  for (const step of scenario.steps) {
    const text = step.text
    let match: RegExpExecArray | null
    if (text === 'I have a default Gotenberg container') env = {}
    else if (text.startsWith('I have a Gotenberg container with the following environment variable(s):'))
      env = Object.fromEntries(step.table!.map(([name, value]) => [name!, value ?? '']))
    else if ((match = /^I have a (webhook|static) server$/.exec(text))) {
      server = new TestServer(workdir)
      await server.start()
    } else if (
      (match =
        /^I make a "(GET|HEAD)" request to Gotenberg at the "([^"]*)" endpoint( with the following header\(s\):)?$/.exec(
          text,
        ))
    ) {
      const running = await need()
      const res = await fetch(`${running.url}${match[2]}`, {
        method: match[1],
        headers: Object.fromEntries(step.table ?? []),
      })
      response = { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) }
    } else if (
      (match =
        /^I make a "(POST)" request to Gotenberg at the "([^"]*)" endpoint with the following form data and header\(s\):$/.exec(
          text,
        ))
    ) {
      response = await request(match[1]!, match[2]!, step.table!)
      const trace = response.headers.get('gotenberg-trace') ?? ''
      if (response.status === 204) store = join(workdir, trace)
      const disposition = response.headers.get('content-disposition')
      if (response.status === 200 && disposition) {
        store = join(workdir, trace)
        const name = decodeURIComponent(
          /filename\*=UTF-8''([^;]+)/.exec(disposition)?.[1] ?? /filename="([^"]+)"/.exec(disposition)![1]!,
        )
        saveAnswer(store, name, response.body, response.headers.get('content-type') ?? '')
      }
    } else if (
      (match =
        /^I make (\d+) concurrent "(POST)" requests to Gotenberg at the "([^"]*)" endpoint with the following form data and header\(s\):$/.exec(
          text,
        ))
    ) {
      const answers = await Promise.all(
        Array.from({ length: Number(match[1]) }, () => request(match![2]!, match![3]!, step.table!)),
      )
      concurrent = answers.map((answer) => {
        const trace = answer.headers.get('gotenberg-trace') ?? ''
        if (answer.status === 200)
          saveAnswer(join(workdir, trace), 'answer.pdf', answer.body, answer.headers.get('content-type') ?? '')
        return { status: answer.status, trace }
      })
    } else if (text === 'I wait for the asynchronous request to the webhook') await server!.delivered
    else if ((match = /^the Gotenberg container (should|should NOT) log the following entries:$/.exec(text))) {
      // The log line must be written after the answer: a moment for the 'finish' event.
      await new Promise((resolve) => setTimeout(resolve, 200))
      const written = logs
        .slice(logsFrom)
        .map((entry) => JSON.stringify(entry))
        .join('\n')
      for (const [entry] of step.table!) {
        if (match[1] === 'should') expect(written).toContain(entry)
        else expect(written).not.toContain(entry)
      }
    } else if ((match = /^the response status code should be (\d+)$/.exec(text)))
      expect(response!.status, response!.body.toString().slice(0, 500)).toBe(Number(match[1]))
    else if ((match = /^all concurrent response status codes should be (\d+)$/.exec(text)))
      expect(concurrent.map((answer) => answer.status)).toEqual(concurrent.map(() => Number(match![1])))
    else if ((match = /^all concurrent responses should have (\d+) PDF\(s\)$/.exec(text)))
      for (const answer of concurrent)
        expect(walk(join(workdir, answer.trace)).filter((path) => path.endsWith('.pdf'))).toHaveLength(Number(match[1]))
    else if (
      (match = /^the (response|webhook request|file request|server request) header "([^"]*)" should be "([^"]*)"$/.exec(
        text,
      ))
    ) {
      const actual =
        match[1] === 'response'
          ? (response!.headers.get(match[2]!) ?? '')
          : String(server!.request?.headers[match[2]!.toLowerCase()] ?? '')
      expect(actual).toBe(match[3])
    } else if (
      (match = /^the (response|webhook request|file request|server request) cookie "([^"]*)" should be "([^"]*)"$/.exec(
        text,
      ))
    ) {
      const cookies = String(server!.request?.headers.cookie ?? '')
        .split(/;\s*/)
        .map((pair) => pair.split('='))
      expect(cookies.find(([name]) => name === match![2])?.[1] ?? '').toBe(match[3])
    } else if ((match = /^the (response|webhook request) body should (match|contain) string:$/.exec(text))) {
      const actual = (match[1] === 'response' ? response!.body : server!.request!.body).toString()
      const expected = step.doc!.replace(/\{version\}/g, GOTENBERG_VERSION)
      if (match[2] === 'match') expect(actual).toBe(expected)
      else expect(actual).toContain(expected)
    } else if ((match = /^the (response|webhook request) body should match JSON:$/.exec(text))) {
      const actual = (match[1] === 'response' ? response!.body : server!.request!.body).toString()
      compareJson(JSON.parse(step.doc!.replace(/\{version\}/g, GOTENBERG_VERSION)), JSON.parse(actual))
    } else if ((match = /^there should be (\d+) PDF\(s\) in the (response|webhook request)$/.exec(text)))
      expect(pdfs().map((path) => basename(path))).toHaveLength(Number(match[1]))
    else if ((match = /^there should be the following file\(s\) in the (response|webhook request):$/.exec(text))) {
      const names = walk(store).map((path) => basename(path).toLowerCase())
      for (const [expected] of step.table!)
        expect(
          names.some(
            (name) =>
              name === expected!.toLowerCase() ||
              (expected!.startsWith('*_') && name.includes(expected!.slice(2).toLowerCase())),
          ),
          `${expected} among ${names}`,
        ).toBe(true)
    } else if (
      (match =
        /^the (response|webhook request) PDF\(s\) should be valid "([^"]*)" with a tolerance of (\d+) failed rule\(s\)$/.exec(
          text,
        ))
    ) {
      // veraPDF's "b" (basic) rules hold for a PDF that declares "a" or "u" of the same part, which add to them.
      const wanted = match[2]!.startsWith('PDF/A')
        ? new RegExp(`PDF/A-${match[2]!.slice(6, 7)}[abu]`)
        : new RegExp(match[2]!.replace('/', '\\/'))
      for (const path of pdfs()) expect(declaredConformance(path)).toMatch(wanted)
    } else if ((match = /^the (response|webhook request) PDF\(s\) (should|should NOT) be flatten$/.exec(text))) {
      for (const path of pdfs()) {
        const json = run('qpdf', ['--json', '--json-key=acroform', path])
        const fields = (JSON.parse(json).acroform?.fields ?? []).length
        expect(fields === 0, path).toBe(match[2] === 'should')
      }
    } else if ((match = /^the (response|webhook request) PDF\(s\) (should|should NOT) be encrypted$/.exec(text))) {
      for (const path of pdfs())
        expect(run('pdfinfo', [path]).replace(/\s/g, '').includes('CommandLineError:Incorrectpassword')).toBe(
          match[2] === 'should',
        )
    } else if ((match = /^the (response|webhook request) PDF\(s\) (should|should NOT) allow "([^"]*)"$/.exec(text))) {
      const flag = { printing: 'print', copying: 'copy', modifying: 'change', annotating: 'addNotes' }[match[3]!]!
      for (const path of pdfs())
        expect(run('pdfinfo', [path]).replace(/\s/g, '')).toContain(`${flag}:${match[2] === 'should' ? 'yes' : 'no'}`)
    } else if (
      (match = /^the (response|webhook request) PDF\(s\) (should|should NOT) have the "([^"]*)" file embedded$/.exec(
        text,
      ))
    ) {
      for (const path of pdfs())
        expect(run('qpdf', ['--list-attachments', path]).includes(`${match[3]} ->`)).toBe(match[2] === 'should')
    } else if (
      (match =
        /^the (response|webhook request) PDF\(s\) should have the "([^"]*)" file embedded with relationship "([^"]*)"$/.exec(
          text,
        ))
    ) {
      for (const path of pdfs()) {
        const objects = Object.values(
          JSON.parse(run('qpdf', ['--json-output=2', '--json-key=qpdf', path])).qpdf[1],
        ) as { value?: Record<string, unknown> }[]
        const spec = objects.find(
          (object) =>
            object.value?.['/Type'] === '/Filespec' &&
            String(object.value?.['/UF'] ?? object.value?.['/F']).endsWith(match![2]!),
        )
        expect(spec?.value?.['/AFRelationship']).toBe(`/${match[3]}`)
      }
    } else if (
      (match =
        /^the (response|webhook request) PDF\(s\) should declare Factur-X XMP with conformance level "([^"]*)"$/.exec(
          text,
        ))
    ) {
      for (const path of pdfs())
        expect(run('pdfinfo', ['-meta', path])).toContain(`<fx:ConformanceLevel>${match[2]}</fx:ConformanceLevel>`)
    } else if ((match = /^the "([^"]*)" PDF should have (\d+) page\(s\)$/.exec(text)))
      expect(Number(/Pages:\s+(\d+)/.exec(run('pdfinfo', [pdfNamed(match[1]!)]))?.[1])).toBe(Number(match[2]))
    else if ((match = /^the "([^"]*)" PDF (should|should NOT) be set to landscape orientation$/.exec(text))) {
      const [, width, height] = /Page size:\s+([\d.]+) x ([\d.]+)/.exec(run('pdfinfo', [pdfNamed(match[1]!)]))!
      expect(Number(width) > Number(height)).toBe(match[2] === 'should')
    } else if (
      (match = /^the "([^"]*)" PDF (should|should NOT) have the following content at page (\d+):$/.exec(text))
    ) {
      const page = run('pdftotext', ['-f', match[3]!, '-l', match[3]!, pdfNamed(match[1]!), '-'])
      if (match[2] === 'should') expect(page).toContain(step.doc)
      else expect(page).not.toContain(step.doc)
    } else if (
      (match = /^the "([^"]*)" PDF (should|should NOT) have content matching "([^"]*)" at page (\d+)$/.exec(text))
    ) {
      const page = run('pdftotext', ['-f', match[4]!, '-l', match[4]!, pdfNamed(match[1]!), '-'])
      expect(new RegExp(match[3]!).test(page)).toBe(match[2] === 'should')
    } else if ((match = /^the "([^"]*)" PDF should have (\d+) image\(s\)$/.exec(text)))
      expect(
        run('pdfimages', ['-list', pdfNamed(match[1]!)])
          .trim()
          .split('\n').length - 2,
      ).toBe(Number(match[2]))
    else throw new Error(`no step matches "${text}"`)
  }
}

/** Why a scenario does not apply here, or undefined. */
function skipReason(scenario: Scenario): string | undefined {
  for (const step of scenario.steps) {
    if (step.text.startsWith('I have a Gotenberg container with')) {
      const settings = settingsFor(Object.fromEntries(step.table!.map(([name, value]) => [name!, value ?? ''])))
      if (typeof settings === 'string') return settings
    }
    const table = JSON.stringify(step.table ?? [])
    for (const [pattern, why] of UNSUPPORTED_STEPS)
      if (why && (pattern.test(step.text) || pattern.test(table))) return why
    if (/bookmarks\//.test(step.text) || /"(bookmarks|autoIndexBookmarks)"/.test(table))
      return 'PDF bookmarks (/forms/pdfengines/bookmarks/*, bookmarks and autoIndexBookmarks) are not implemented'
  }
  return KNOWN[`${scenario.feature}: ${scenario.name}`]
}

/** Scenarios that do not pass here, each with its reason (docs/gotenberg.md lists them too). */
const INTERNET = 'needs the internet (a page loads https://gethttpstatus.com), which this machine and CI do not have'
const FILE_FROM_HTTP =
  'pages are served from an http origin here (never file://), where Chromium refuses a file:// subresource before any request: nothing reaches the deny list to be logged'
const LOADING_FAILED =
  "a missing form file fails as net::ERR_FAILED, not Gotenberg's net::ERR_FILE_NOT_FOUND: the page is served by the sidecar, not from disk, and the DevTools protocol has no file-not-found reason"
const KNOWN: Readonly<Record<string, string>> = {
  'chromium_convert_html: POST /forms/chromium/convert/html (Fail On Resource HTTP Status Codes)': INTERNET,
  'chromium_convert_html: POST /forms/chromium/convert/html (Fail On Resource HTTP Status Codes - Ignore Domains)':
    INTERNET,
  'chromium_convert_markdown: POST /forms/chromium/convert/markdown (Fail On Resource HTTP Status Codes)': INTERNET,
  'chromium_convert_url: POST /forms/chromium/convert/url (Fail On Resource HTTP Status Codes)': INTERNET,
  'chromium_convert_html: POST /forms/chromium/convert/html (Default Allow / Deny Lists)': FILE_FROM_HTTP,
  'chromium_convert_markdown: POST /forms/chromium/convert/markdown (Default Allow / Deny Lists)': FILE_FROM_HTTP,
  'chromium_convert_html: POST /forms/chromium/convert/html (Fail On Resource Loading Failed)': LOADING_FAILED,
  'chromium_convert_markdown: POST /forms/chromium/convert/markdown (Fail On Resource Loading Failed)': LOADING_FAILED,
  'prometheus_metrics: GET /prometheus/metrics (Enabled)':
    "the replay shares one LibreOffice across scenarios, which has recycled (SIDECAR_RESTART_AFTER) by then: the restarts gauge is not 0 as on Gotenberg's fresh container",
  'chromium_convert_url: POST /forms/chromium/convert/url (Custom HTTP Headers)':
    "its scoped header's expression names host.docker.internal, which the replay reaches as 127.0.0.1",
  'chromium_convert_url: POST /forms/chromium/convert/url (Main URL resolves to a non-public IP, deny-private-ips on with allow-list bypass)':
    'an allow-list expression never opens loopback or private addresses here: only the hosts SIDECAR_ALLOWED_PRIVATE_HOSTS names reach them',
}

const featureFiles =
  ROOT && existsSync(join(ROOT, 'features'))
    ? readdirSync(join(ROOT, 'features')).filter(
        (name) =>
          name.endsWith('.feature') &&
          FEATURES.some((pattern) => new RegExp(`^${pattern.replace('*', '.*')}\\.feature$`).test(name)),
      )
    : []
const counts = { passed: 0, failed: 0, skipped: 0 }

describe.skipIf(featureFiles.length === 0)('Gotenberg 8 feature files', () => {
  for (const file of featureFiles.sort()) {
    const feature = file.replace(/\.feature$/, '')
    describe(file, () => {
      for (const scenario of parseFeature(feature, readFileSync(join(ROOT, 'features', file), 'utf8'))) {
        const reason = skipReason(scenario)
        if (reason) {
          counts.skipped++
          it.skip(`${scenario.name} — ${reason}`, () => {})
          continue
        }
        it(
          scenario.name,
          async () => {
            try {
              await replay(scenario)
              counts.passed++
            } catch (error) {
              counts.failed++
              throw error
            }
          },
          SLOW,
        )
      }
    })
  }
  afterAll(() =>
    console.log(
      `Gotenberg feature replay: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`,
    ),
  )
})
