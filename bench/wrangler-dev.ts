// Serves a Worker entry with `wrangler dev --local` on a free loopback port, with its own local state under
// .tmp/, for benchmarks that measure through real HTTP. Timing is taken by the client: inside workerd the
// clock does not advance during synchronous work.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { spawnGroup } from './process-group.ts'

export const root = fileURLToPath(new URL('..', import.meta.url))

/** A loopback port free at the time of asking. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))))
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

/** Starts `entry` (default: the real Worker) with the project's wrangler.toml and fresh migrated state, kept under
 * `stateParent` (default .tmp/ of the repository). Whatever happens to the caller (a start that times out or throws,
 * an interrupted run), wrangler and workerd end with the process that started them. */
export async function startDevWorker(entry = 'worker/index.ts', vars: Record<string, string> = {}, stateParent = join(root, '.tmp'), { startTimeoutMs = 180_000 } = {}): Promise<DevWorker> {
  const state = mkdtempSync(join(stateParent, 'bench-state-'))
  const envFile = join(state, 'bench.env')
  writeFileSync(envFile, Object.entries({ JWT_SECRET: 'bench-secret-that-is-long-enough-for-hs256', AUTH_RATE_LIMIT_PER_MINUTE: '0', ...vars }).map(([k, v]) => `${k}=${v}`).join('\n'))
  const env = { ...process.env, WRANGLER_SEND_METRICS: 'false' }
  const migrate = spawnSync('wrangler', ['d1', 'migrations', 'apply', 'DB', '--local', '--persist-to', state], { cwd: root, env, encoding: 'utf8' })
  if (migrate.status !== 0) {
    rmSync(state, { recursive: true, force: true })
    throw new Error(`migrations failed: ${migrate.stderr}`)
  }
  const port = await freePort()
  const group = spawnGroup(
    'wrangler',
    ['dev', entry, '--local', '--ip', '127.0.0.1', '--port', String(port), '--persist-to', state, '--env-file', envFile, '--show-interactive-dev-session=false', '--log-level', 'warn'],
    { cwd: root, env },
  )
  const url = `http://127.0.0.1:${port}`
  const stop = async () => {
    await group.stop()
    rmSync(state, { recursive: true, force: true })
  }
  let hasExited = false
  void group.exited.then(() => (hasExited = true))
  // wrangler's start-up takes minutes on a loaded 2-core machine
  const deadline = Date.now() + startTimeoutMs
  while (Date.now() < deadline && !hasExited) {
    try {
      if ((await fetch(`${url}/`)).status < 500) return { url, pid: group.pgid, stop }
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  const reason = hasExited ? 'the worker stopped before answering' : `the worker did not start within ${startTimeoutMs / 1000} s`
  await stop()
  throw new Error(reason)
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
export async function memoryDuring<T>(pids: readonly number[], run: () => Promise<T>, everyMs = 20): Promise<MemoryDuring<T>> {
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

export function formatRatio(label: string, ours: number, baselineLabel: string, baseline: number, unit: string): string {
  return `${label}: ours ${ours.toFixed(2)} ${unit} · ${baselineLabel} ${baseline.toFixed(2)} ${unit} · ratio ${(ours / baseline).toFixed(2)}`
}
