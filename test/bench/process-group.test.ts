// Servers started by benches and tests (bench/process-group.ts) leave nothing running on any path: stopped, a start
// that times out, the starting process killed outright (SIGKILL: no exit handler runs), a server that ignores
// SIGTERM; and the run's sweep kills what it recorded, never a process that merely got a recorded id later.
import { spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { isGroupAlive, spawnGroup, startTicks, sweepProcessGroups } from '../../bench/process-group'
import { root, startDevWorker } from '../../bench/wrangler-dev'
import { until } from '../support/until'

const MODULE = fileURLToPath(new URL('../../bench/process-group.ts', import.meta.url))
const folders: string[] = []
const temporaryFolder = (prefix: string) => {
  const folder = mkdtempSync(join(tmpdir(), prefix))
  folders.push(folder)
  return folder
}

afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true })
})

/** The processes whose command line names `marker` (a temporary path of this test, unique on the machine). */
function processesNaming(marker: string): number[] {
  const found: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(marker)) found.push(Number(name))
    } catch {}
  }
  return found
}

const gone = (pgid: number) => until(`process group ${pgid} ending`, () => !isGroupAlive(pgid))

describe('process groups of servers', () => {
  it('stop() ends the server and every process it started', async () => {
    const group = spawnGroup('bash', ['-c', 'sleep 600 & sleep 600 & wait'], { cwd: root, env: process.env })
    await until('the server starting its children', () => processesOf(group.pgid).length >= 4)
    await group.stop()
    await gone(group.pgid)
    expect(isGroupAlive(group.pgid)).toBe(false)
  })

  it('kills a server that ignores SIGTERM once the grace period is over', async () => {
    const group = spawnGroup('bash', ['-c', "trap '' TERM; sleep 600 & wait"], {
      cwd: root,
      env: process.env,
      graceSeconds: 1,
    })
    await until('the server starting', () => processesOf(group.pgid).length >= 3)
    await group.stop()
    await gone(group.pgid)
    expect(isGroupAlive(group.pgid)).toBe(false)
  })

  it('ends with the process that started it, even when that process is killed with SIGKILL', async () => {
    const starter = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const { spawnGroup } = await import(${JSON.stringify(MODULE)}); const g = spawnGroup('sleep', ['600'], { cwd: '/', env: process.env }); console.log(g.pgid); setInterval(() => {}, 1000)`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    )
    let output = ''
    starter.stdout.on('data', (chunk: Buffer) => (output += chunk))
    const pgid = Number(await until('the starter naming its server', () => /^\d+\n/.exec(output)?.[0]))
    expect(isGroupAlive(pgid)).toBe(true)
    starter.kill('SIGKILL')
    await gone(pgid)
    expect(isGroupAlive(pgid)).toBe(false)
  })

  it('a `wrangler dev` that does not start in time leaves no process behind', async () => {
    const state = temporaryFolder('edgefloor-start-fails-')
    await expect(startDevWorker('worker/index.ts', {}, state, { startTimeoutMs: 1 })).rejects.toThrow(
      'the worker did not start within 0.001 s',
    )
    // wrangler and workerd name their state folder, a path unique to this test, on their command lines.
    expect(processesNaming(state)).toEqual([])
    expect(readdirSync(state)).toEqual([])
    // Its migrations run first, to their end: minutes on a loaded 2-core machine.
  }, 600_000)

  it("the run's sweep kills a recorded group still running, and leaves alone a process that got a recorded id", async () => {
    const folder = temporaryFolder('edgefloor-groups-')
    const left = spawn('sleep', ['600'], { detached: true, stdio: 'ignore' })
    const other = spawn('sleep', ['600'], { detached: true, stdio: 'ignore' })
    try {
      writeFileSync(
        join(folder, String(left.pid)),
        JSON.stringify({ pgid: left.pid, startTicks: startTicks(left.pid!), command: 'sleep' }),
      )
      // A record of an earlier process that had the id `other` has now: its start time differs.
      writeFileSync(
        join(folder, String(other.pid)),
        JSON.stringify({ pgid: other.pid, startTicks: '1', command: 'sleep' }),
      )
      expect(sweepProcessGroups(folder)).toEqual([`sleep (process group ${left.pid})`])
      await gone(left.pid!)
      expect(isGroupAlive(left.pid!)).toBe(false)
      expect(isGroupAlive(other.pid!)).toBe(true)
      expect(readdirSync(folder)).toEqual([])
    } finally {
      other.kill('SIGKILL')
    }
  })
})

/** The processes of group `pgid`, from /proc. */
function processesOf(pgid: number): number[] {
  const found: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    const group = statFields(Number(name))?.[2]
    if (group === String(pgid)) found.push(Number(name))
  }
  return found
}

/** The fields of /proc/<pid>/stat after the command name (state, ppid, pgrp, …). */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  } catch {
    return undefined
  }
}
