// Servers that benches and tests start (`wrangler dev` and its workerd) run in a process group of their own that
// ends with the Node process that started it, however that process ends (a timed-out hook, a throw, vitest
// interrupted, SIGKILL): a watchdog shell leads the group and kills it once its stdin, a pipe from the starter,
// closes, which the kernel does when the starter dies. When a test run names a folder in EDGEFLOOR_PROCESS_GROUPS
// (.ci/test.ts does), each group is recorded there until it ends, and the run sweeps what is left by recorded id and
// start time, never by process name: other people's servers run on the same machine.
import { spawn, type StdioOptions } from 'node:child_process'
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * The watchdog: "$@" starts before the traps, so the server keeps the default signal handling (an ignored signal is
 * inherited); then the shell waits for its stdin to close, asks the whole group to stop, and kills what is left
 * after `graceSeconds` (itself included).
 */
const WATCHDOG = `"$@" & server=$!
trap '' TERM INT HUP
read -r _
kill -TERM -- -$$ 2>/dev/null
(sleep "$GRACE_SECONDS"; kill -KILL -- -$$) &
wait "$server"
kill -KILL -- -$$`

export interface ProcessGroup {
  /** The group's id (the watchdog's pid). */
  readonly pgid: number
  /** Resolves once the watchdog, the last of the group to go, has exited. */
  readonly exited: Promise<void>
  /** Stops the whole group: SIGTERM, then SIGKILL after the grace period. */
  stop(): Promise<void>
}

export interface GroupOptions {
  cwd: string
  env: NodeJS.ProcessEnv
  /** Where the server's stdout and stderr go (default: dropped, its stderr shown). */
  output?: StdioOptions
  graceSeconds?: number
}

/** Starts `command` in a process group of its own that dies with this process. */
export function spawnGroup(command: string, args: readonly string[], options: GroupOptions): ProcessGroup {
  const output = (options.output as string[] | undefined) ?? ['ignore', 'inherit']
  const child = spawn('bash', ['-c', WATCHDOG, 'watchdog', command, ...args], {
    cwd: options.cwd,
    env: { ...options.env, GRACE_SECONDS: String(options.graceSeconds ?? 10) },
    detached: true,
    stdio: ['pipe', ...output] as StdioOptions,
  })
  const pgid = child.pid
  if (pgid === undefined) throw new Error(`${command} could not be started`)
  const record = recordGroup(pgid, command)
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => {
      if (record) rmSync(record, { force: true })
      resolve()
    })
  })
  return {
    pgid,
    exited,
    stop() {
      child.stdin!.end()
      return exited
    },
  }
}

/** The kernel's start time of a process (clock ticks since boot), which tells it from a later one given its id. */
export function startTicks(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]
  } catch {
    return undefined
  }
}

/** Whether any process of group `pgid` is still running. */
export function isGroupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0)
    return true
  } catch {
    return false
  }
}

function recordGroup(pgid: number, command: string): string | undefined {
  const folder = process.env.EDGEFLOOR_PROCESS_GROUPS
  if (!folder) return undefined
  mkdirSync(folder, { recursive: true })
  const path = join(folder, String(pgid))
  writeFileSync(path, JSON.stringify({ pgid, startTicks: startTicks(pgid), command }))
  return path
}

/**
 * Kills every group recorded in `folder` that is still running, and answers what it killed. A record whose leader
 * is gone while the group lives is still ours (an id is not given again while a group holds it); a leader with
 * another start time is someone else's process that got the id, and is left alone.
 */
export function sweepProcessGroups(folder: string): string[] {
  const killed: string[] = []
  let names: string[] = []
  try {
    names = readdirSync(folder)
  } catch {
    return killed
  }
  for (const name of names) {
    const {
      pgid,
      startTicks: recorded,
      command,
    } = JSON.parse(readFileSync(join(folder, name), 'utf8')) as { pgid: number; startTicks?: string; command: string }
    const leader = startTicks(pgid)
    if ((leader === undefined || leader === recorded) && isGroupAlive(pgid)) {
      try {
        process.kill(-pgid, 'SIGKILL')
        killed.push(`${command} (process group ${pgid})`)
      } catch {}
    }
    rmSync(join(folder, name), { force: true })
  }
  return killed
}

// `node bench/process-group.ts <folder>`: the sweep, for scripts that run vitest themselves (.ci/stress.sh).
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const left of sweepProcessGroups(process.argv[2]!)) console.log(`left running after the suite, killed: ${left}`)
  rmSync(process.argv[2]!, { recursive: true, force: true })
}
