// `npm test`: the typecheck and the lint run beside the suite instead of before it. The suite mostly waits (on
// workerd, LibreOffice and the queues), so on 2 cores tsc's one busy core fits in its gaps. They run at a lower
// priority (nice) so the suite's own work comes first. Their output is printed once the suite is done, and
// `npm test` fails when any of them fails. Arguments go to vitest: `npm test -- --project unit`.
// Every server the run starts in a process group (bench/process-group.ts: wrangler dev, workerd) is recorded in a
// folder of this run's own; once vitest has ended, however it ended (an interrupt included: this process waits for
// it), whatever of them still runs is killed by its recorded id and named.
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { sweepProcessGroups } from '../bench/process-group.ts'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const bin = (name: string) => join(root, 'node_modules/.bin', name)

const running = new Set<ChildProcess>()

interface Finished {
  name: string
  status: number
  seconds: number
  output: string
}

/** Runs a command from the repository's root; `quiet` keeps its output for later instead of printing it. */
function run(
  name: string,
  command: string,
  args: string[],
  quiet: boolean,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Finished> {
  const started = performance.now()
  const child = spawn(command, args, { cwd: root, env, stdio: quiet ? ['ignore', 'pipe', 'pipe'] : 'inherit' })
  running.add(child)
  child.once('exit', () => running.delete(child))
  const chunks: Buffer[] = []
  child.stdout?.on('data', (chunk: Buffer) => chunks.push(chunk))
  child.stderr?.on('data', (chunk: Buffer) => chunks.push(chunk))
  return new Promise((resolve) => {
    const finish = (status: number) =>
      resolve({ name, status, seconds: (performance.now() - started) / 1000, output: Buffer.concat(chunks).toString() })
    child.on('error', (error) => {
      chunks.push(Buffer.from(String(error)))
      finish(1)
    })
    child.on('close', (code, signal) => finish(code ?? (signal ? 1 : 0)))
  })
}

mkdirSync(join(root, '.tmp'), { recursive: true })
const groups = mkdtempSync(join(root, '.tmp', 'process-groups-'))
// Ctrl-C reaches vitest (the whole foreground group gets it): it stops its workers and exits, and this process sweeps
// after it instead of dying first. A SIGTERM sent to this process alone is passed on.
process.on('SIGINT', () => {})
process.on('SIGTERM', () => {
  for (const child of running) child.kill('SIGTERM')
})

// check:deploy's two halves run beside the suite, their figures printed: startup (bench/check-deploy.ts
// --startup-only: each Worker's CPU from spawn to its first answer against a minimal Hono Worker's, at most 3× for the
// API Worker and 5× for the others) and memory (--memory-only: every Worker's worst inputs in its isolate, within
// 100 MiB). CHECK_DEPLOY=startup runs the startup half alone. Both clean up their own workerd processes: they are not
// in the sweep below, which runs when vitest ends, maybe before they do.
const startupCheck = 'check:deploy startup'
const memoryCheck = 'check:deploy memory'
const withMemoryCheck = process.env.CHECK_DEPLOY !== 'startup'
const checkDeploy = (name: string, half: string) =>
  run(name, 'nice', ['-n', '10', process.execPath, 'bench/check-deploy.ts', half], true)
const checks = [
  run('typecheck', 'nice', ['-n', '10', bin('tsc'), '--noEmit'], true),
  run('lint and format', 'nice', ['-n', '10', bin('biome'), 'check'], true),
  checkDeploy(startupCheck, '--startup-only'),
  ...(withMemoryCheck ? [checkDeploy(memoryCheck, '--memory-only')] : []),
]
const suite = await run(
  'vitest',
  bin('vitest'),
  [
    'run',
    '--reporter=default',
    '--reporter=json',
    '--outputFile.json=.tmp/test-results.json',
    ...process.argv.slice(2),
  ],
  false,
  { ...process.env, EDGEFLOOR_PROCESS_GROUPS: groups },
)
for (const left of sweepProcessGroups(groups)) console.log(`left running after the suite, killed: ${left}`)
rmSync(groups, { recursive: true, force: true })
const all = [...(await Promise.all(checks)), suite]
for (const { name, status, seconds, output } of all) {
  if ((status !== 0 && name !== 'vitest') || name === startupCheck || name === memoryCheck) process.stdout.write(output)
  console.log(`${name}: ${status === 0 ? 'passed' : `failed (exit ${status})`} in ${seconds.toFixed(0)} s`)
}
process.exitCode = all.find(({ status }) => status !== 0)?.status ?? 0
