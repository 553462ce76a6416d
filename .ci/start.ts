// `npm start`: sets up what is missing on this machine and serves Edgefloor locally — the sidecar on
// 127.0.0.1:3000 and the two Workers in one `wrangler dev --local`: the API Worker (wrangler.toml) on 127.0.0.1:8787
// and the consumer Worker (wrangler.consumer.toml) running the queue, sharing the local D1, R2 and Queues.
// Environment variables named like a wrangler [vars] entry (or a secret) override it for this run; PORT and
// SIDECAR_PORT move the two servers (and the APP_URL and GOTENBERG_URL that name them, unless those are given).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { configSchema } from '../worker/config.ts'
import { serviceConfigArgs, writeLocalConsumerConfig } from './local-consumer.ts'
import { localPorts, type LocalPorts } from './local-ports.ts'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const say = (line: string) => console.log(`edgefloor: ${line}`)
process.env.WRANGLER_SEND_METRICS = 'false'

function installSystemPackages(): boolean {
  const result = spawnSync('bash', [join(root, '.ci/install-system.sh')], { stdio: 'inherit' })
  if (result.status === 0) return true
  say('system packages are missing (see above): the Office → PDF sidecar will not start until they are installed.')
  return false
}

/** .dev.vars holds local secrets; made once with a random JWT secret and never committed. */
function ensureDevVars(): Record<string, string> {
  const path = join(root, '.dev.vars')
  if (!existsSync(path)) {
    writeFileSync(path, `JWT_SECRET=${randomBytes(32).toString('base64url')}\n`, { mode: 0o600 })
    say('created .dev.vars with a random JWT_SECRET')
  }
  return parseEnvFile(readFileSync(path, 'utf8'))
}

function parseEnvFile(text: string): Record<string, string> {
  const entries: Record<string, string> = {}
  for (const line of text.split('\n')) {
    const match = /^\s*([A-Z0-9_]+)\s*=\s*(.*?)\s*$/.exec(line)
    if (match) entries[match[1]!] = match[2]!.replace(/^"(.*)"$/, '$1')
  }
  return entries
}

/** The [vars] table of wrangler.toml (flat string entries only, which is all it holds). */
function wranglerVars(): Record<string, string> {
  const toml = readFileSync(join(root, 'wrangler.toml'), 'utf8')
  const section = toml.split(/^\[vars\]\s*$/m)[1]?.split(/^\[/m)[0] ?? ''
  return parseEnvFile(section)
}

/** Settings given in this process's environment, for every name the config schema knows. */
function environmentOverrides(): Record<string, string> {
  const names = Object.keys(configSchema.shape)
  return Object.fromEntries(
    names.filter((name) => process.env[name] !== undefined).map((name) => [name, process.env[name]!]),
  )
}

function validateSettings(settings: Record<string, string>): void {
  const result = configSchema.safeParse(settings)
  if (result.success) return
  for (const issue of result.error.issues) say(`invalid setting ${issue.path.join('.')}: ${issue.message}`)
  process.exit(1)
}

function run(command: string, args: string[]): void {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', env: process.env })
  if (result.status !== 0) {
    say(`${command} ${args.join(' ')} failed`)
    process.exit(result.status ?? 1)
  }
}

const children: ChildProcess[] = []

function serve(name: string, command: string, args: string[], env: NodeJS.ProcessEnv = process.env): void {
  // Own process group, so stopping kills the whole tree (wrangler's workerd, LibreOffice processes).
  const child = spawn(command, args, { cwd: root, stdio: 'inherit', env, detached: true })
  children.push(child)
  child.on('exit', (code, signal) => {
    say(`${name} stopped (${signal ?? code}); stopping the rest`)
    stopAll(code ?? 1)
  })
}

let stopping = false
function stopAll(code: number): void {
  if (stopping) return
  stopping = true
  for (const child of children) {
    if (child.pid && child.exitCode === null) {
      try {
        process.kill(-child.pid, 'SIGTERM')
      } catch {}
    }
  }
  setTimeout(() => process.exit(code), 1500).unref()
}
process.on('SIGINT', () => stopAll(0))
process.on('SIGTERM', () => stopAll(0))

let ports: LocalPorts
try {
  ports = localPorts(process.env)
} catch (error) {
  say((error as Error).message)
  process.exit(1)
}
const { apiPort, sidecarPort } = ports
const hasLibreOffice = installSystemPackages()
const secrets = ensureDevVars()
const overrides = environmentOverrides()
Object.assign(overrides, ports.settings)
validateSettings({ ...wranglerVars(), ...secrets, ...overrides })

// Overrides reach wrangler through an env file (not --var: secrets would show in the process list).
mkdirSync(join(root, '.wrangler'), { recursive: true })
const overridesFile = join(root, '.wrangler/start-overrides.env')
writeFileSync(
  overridesFile,
  Object.entries(overrides)
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .join('\n') + '\n',
  { mode: 0o600 },
)
chmodSync(overridesFile, 0o600)
if (Object.keys(overrides).length > 0) say(`settings from the environment: ${Object.keys(overrides).join(', ')}`)

// The consumer Worker reads its secrets and overrides from the .dev.vars beside its config (.ci/local-consumer.ts).
const consumerConfig = writeLocalConsumerConfig(join(root, '.wrangler/consumer'), { ...secrets, ...overrides })

say('applying D1 migrations (local)')
run('wrangler', ['d1', 'migrations', 'apply', 'DB', '--local'])

const sidecarEntry = join(root, 'sidecar/server.ts')
if (hasLibreOffice && existsSync(sidecarEntry)) {
  say(`starting the sidecar on http://127.0.0.1:${sidecarPort}`)
  serve('sidecar', process.execPath, [sidecarEntry], {
    ...process.env,
    SIDECAR_HOST: '127.0.0.1',
    SIDECAR_PORT: String(sidecarPort),
  })
}

say(`starting the API Worker on http://127.0.0.1:${apiPort}, and the consumer, passkey and engine Workers beside it`)
serve('worker', 'wrangler', [
  'dev',
  '-c',
  'wrangler.toml',
  '-c',
  consumerConfig,
  ...serviceConfigArgs(),
  '--local',
  '--ip',
  '127.0.0.1',
  '--port',
  String(apiPort),
  '--show-interactive-dev-session=false',
  '--env-file',
  join(root, '.dev.vars'),
  '--env-file',
  overridesFile,
])
