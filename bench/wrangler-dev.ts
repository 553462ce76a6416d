// Serves a Worker entry with `wrangler dev --local` on a free loopback port, with its own local state under
// .tmp/, for benchmarks that measure through real HTTP. Timing is taken by the client: inside workerd the
// clock does not advance during synchronous work.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { serviceConfigArgs, writeLocalConsumerConfig } from '../.ci/local-consumer.ts'
import { type ProcessGroup, spawnGroup } from './process-group.ts'

export const root = fileURLToPath(new URL('..', import.meta.url))

/** A loopback port free at the time of asking. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      )
    })
  })
}

export interface DevWorker {
  url: string
  /** The process group of wrangler and its workerd (bench/process-group.ts). */
  pid: number
  /** Stops wrangler and its workerd and removes the state; resolves once they have exited. */
  stop(): Promise<void>
}

export interface LaunchedDevWorker {
  url: string
  /** Its local state (`--persist-to`): D1, R2, queues and Durable Objects, removed when it stops. */
  state: string
  /** Resolves with the running Worker once it answers; rejects, everything stopped, when it cannot start. */
  ready: Promise<DevWorker>
  stop(): Promise<void>
}

/** The API Worker's entry. Started as the real Worker: both configs in one `wrangler dev` (`-c wrangler.toml -c
 * wrangler.consumer.toml`), the consumer Worker running the queue and sharing D1, R2 and the queue, as `npm start` does.
 * Any other entry (a bench's `/__bench` routes) runs alone with wrangler.toml, which has no queue consumer. */
export const API_ENTRY = 'worker/index.ts'

export interface LaunchOptions {
  startTimeoutMs?: number
  /** Settings only the consumer Worker gets (after `vars`, which both get). */
  consumerVars?: Record<string, string>
  /** The loopback port to serve on (default: a free one), for settings that must name the Worker's own URL. */
  port?: number
  /** Optional secrets (not [vars]): wrangler dev reads from the env file only [vars] and required secrets, so these
   * go on its command line (`--var NAME:value`). */
  secrets?: Record<string, string>
}

/** Starts `entry` (default: the real Worker) with the project's wrangler.toml and fresh migrated state, kept under
 * `stateParent` (default .tmp/ of the repository). Whatever happens to the caller (a start that times out or throws,
 * an interrupted run), wrangler and workerd end with the process that started them. */
export async function startDevWorker(
  entry = API_ENTRY,
  vars: Record<string, string> = {},
  stateParent = join(root, '.tmp'),
  options: LaunchOptions = {},
): Promise<DevWorker> {
  return (await launchDevWorker(entry, vars, stateParent, options)).ready
}

/** As startDevWorker, but answers the Worker's URL at once (its port is chosen first) and its start as `ready`, so a
 * caller can do other work meanwhile. Nothing here blocks the event loop (a test run's main process calls it). */
export async function launchDevWorker(
  entry = API_ENTRY,
  vars: Record<string, string> = {},
  stateParent = join(root, '.tmp'),
  { startTimeoutMs = 180_000, consumerVars = {}, port: chosenPort, secrets = {} }: LaunchOptions = {},
): Promise<LaunchedDevWorker> {
  mkdirSync(stateParent, { recursive: true }) // a fresh clone has no .tmp/ before its first test run
  const state = mkdtempSync(join(stateParent, 'bench-state-'))
  const envFile = join(state, 'bench.env')
  const settings = {
    JWT_SECRET: 'bench-secret-that-is-long-enough-for-hs256',
    AUTH_RATE_LIMIT_PER_MINUTE: '0',
    ...vars,
  }
  writeFileSync(
    envFile,
    Object.entries(settings)
      .map(([k, v]) => `${k}=${v}`)
      .join('\n'),
  )
  // The consumer Worker shares the state (--persist-to reaches the whole workerd) and the migrations applied below.
  const configs =
    entry === API_ENTRY
      ? [
          '-c',
          'wrangler.toml',
          '-c',
          writeLocalConsumerConfig(join(state, 'consumer'), { ...settings, ...consumerVars }),
          ...serviceConfigArgs(),
        ]
      : [entry]
  const env = { ...process.env, WRANGLER_SEND_METRICS: 'false' }
  const port = chosenPort ?? (await freePort())
  const url = `http://127.0.0.1:${port}`
  let group: ProcessGroup | undefined
  let migration: ChildProcess | undefined
  let isStopped = false
  const stop = async () => {
    isStopped = true
    // The migrations are a child of this process, not of the group: it ends with an interrupt of the run (it is in
    // its foreground group) or by itself once the migrations are applied.
    migration?.kill('SIGTERM')
    await group?.stop()
    rmSync(state, { recursive: true, force: true })
  }
  const start = async (): Promise<DevWorker> => {
    const migrate = await finished(
      'wrangler',
      ['d1', 'migrations', 'apply', 'DB', '--local', '--persist-to', state],
      { cwd: root, env },
      (child) => (migration = child),
    )
    if (migrate.status !== 0) throw new Error(`migrations failed: ${migrate.stderr}`)
    if (isStopped) throw new Error('the worker was stopped before it started')
    const started = spawnGroup(
      'wrangler',
      [
        'dev',
        ...configs,
        '--local',
        '--ip',
        '127.0.0.1',
        '--port',
        String(port),
        '--persist-to',
        state,
        '--env-file',
        envFile,
        ...Object.entries(secrets).flatMap(([name, value]) => ['--var', `${name}:${value}`]),
        '--show-interactive-dev-session=false',
        '--log-level',
        'warn',
      ],
      { cwd: root, env },
    )
    group = started
    let hasExited = false
    void started.exited.then(() => (hasExited = true))
    // wrangler's start-up takes minutes on a loaded 2-core machine
    const deadline = Date.now() + startTimeoutMs
    while (Date.now() < deadline && !hasExited && !isStopped) {
      try {
        if ((await fetch(`${url}/`)).status < 500) return { url, pid: started.pgid, stop }
      } catch {}
      await new Promise((resolve) => setTimeout(resolve, 250))
    }
    throw new Error(
      hasExited
        ? 'the worker stopped before answering'
        : isStopped
          ? 'the worker was stopped before it answered'
          : `the worker did not start within ${startTimeoutMs / 1000} s`,
    )
  }
  const ready = start().catch(async (error: unknown) => {
    await stop()
    throw error
  })
  return { url, state, ready, stop }
}

/** Runs a command to its end without blocking the event loop; answers its status and standard error. */
export function finished(
  command: string,
  args: readonly string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
  started: (child: ChildProcess) => void = () => {},
): Promise<{ status: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'ignore', 'pipe'] })
    started(child)
    let stderr = ''
    child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk).slice(-4000)))
    child.once('error', (error) => resolve({ status: null, stderr: String(error) }))
    child.once('close', (status) => resolve({ status, stderr }))
  })
}

/** Memory of the workerd processes started under a wrangler process group (resident set, MiB). */
export function workerdRssMiB(groupId: number): number {
  return rssMiB(workerdPids(groupId))
}

/** The workerd processes started under a wrangler process group. */
export function workerdPids(groupId: number): number[] {
  const ps = spawnSync('ps', ['-o', 'pid=,comm=', '-g', String(groupId)], { encoding: 'utf8' })
  return ps.stdout
    .split('\n')
    .filter((line) => line.includes('workerd'))
    .map((line) => Number(line.trim().split(/\s+/)[0]))
}

/** Resident memory of some processes (MiB), read from /proc: cheap enough to sample while a request runs. */
function rssMiB(pids: readonly number[]): number {
  let kib = 0
  for (const pid of pids) {
    try {
      kib += Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0)
    } catch {}
  }
  return kib / 1024
}

export interface MemoryDuring<T> {
  result: T
  /** Resident memory when `run` started and the most seen while it ran, MiB. */
  startMiB: number
  peakMiB: number
}

/** Samples the processes' resident memory every `everyMs` while `run` goes. */
export async function memoryDuring<T>(
  pids: readonly number[],
  run: () => Promise<T>,
  everyMs = 20,
): Promise<MemoryDuring<T>> {
  const startMiB = rssMiB(pids)
  let peakMiB = startMiB
  const timer = setInterval(() => {
    peakMiB = Math.max(peakMiB, rssMiB(pids))
  }, everyMs)
  try {
    const result = await run()
    return { result, startMiB, peakMiB: Math.max(peakMiB, rssMiB(pids)) }
  } finally {
    clearInterval(timer)
  }
}

export function formatRatio(
  label: string,
  ours: number,
  baselineLabel: string,
  baseline: number,
  unit: string,
): string {
  return `${label}: ours ${ours.toFixed(2)} ${unit} · ${baselineLabel} ${baseline.toFixed(2)} ${unit} · ratio ${(ours / baseline).toFixed(2)}`
}

/** A fresh account on the real Worker, signed in: the Authorization header of its requests. */
export async function benchLogin(worker: DevWorker): Promise<Record<string, string>> {
  const json = { 'content-type': 'application/json' }
  const email = `bench-${Date.now()}-${Math.random()}@example.com`
  const account = JSON.stringify({ email, password: 'a benchmark password' })
  await fetch(`${worker.url}/auth/register`, { method: 'POST', headers: json, body: account })
  const { token } = (await (
    await fetch(`${worker.url}/auth/login`, { method: 'POST', headers: json, body: account })
  ).json()) as { token: string }
  return { authorization: `Bearer ${token}` }
}
