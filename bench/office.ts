// bench/office: Office → PDF through the sidecar (HTTP, long-lived sandboxed LibreOffice over UNO) against two
// baselines on the same documents in the same run: `soffice --convert-to` with a warm profile (a fresh soffice per
// document), and a warm soffice driven over python3-uno directly (bench/uno_convert.py: no HTTP, sandbox or
// queue, the floor of a warm conversion). Per-format warm time, the first (cold) conversion, and throughput of 20
// simultaneous documents with 1 and 2 LibreOffice processes.
import { type ChildProcessWithoutNullStreams, execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { optionsFromEnv, startSidecar } from '../sidecar/server.ts'
import { makeOfficeDocuments } from '../test/setup/office-documents.ts'
import { median } from './convert-harness.ts'
import { formatRatio } from './wrangler-dev.ts'

const fixtures = ['hello.docx', 'hello.odt', 'data.xlsx', 'hello.rtf', 'slides.pptx']
// The test documents, made by LibreOffice from small sources (or found from an earlier run).
const documents = makeOfficeDocuments()
const fixturePath = (name: string) => join(documents, name)
const folders: string[] = []
const scratch = (prefix: string) => {
  const folder = mkdtempSync(join(tmpdir(), prefix))
  folders.push(folder)
  return folder
}

/** One warm soffice over python3-uno (bench/uno_convert.py), converting one document at a time. */
class UnoDriver {
  readonly child: ChildProcessWithoutNullStreams
  readonly lines: AsyncIterator<string>
  constructor() {
    const script = fileURLToPath(new URL('uno_convert.py', import.meta.url))
    this.child = spawn('/usr/bin/python3', [script, scratch('bench-uno-profile-'), scratch('bench-uno-out-')])
    this.lines = createInterface({ input: this.child.stdout })[Symbol.asyncIterator]()
  }
  async next(): Promise<{ ready?: boolean; ok?: boolean; error?: string }> {
    const { value, done } = await this.lines.next()
    if (done) throw new Error('uno_convert.py stopped')
    return JSON.parse(value)
  }
  static async start(): Promise<UnoDriver> {
    const driver = new UnoDriver()
    await driver.next()
    return driver
  }
  async convert(name: string): Promise<number> {
    const start = performance.now()
    this.child.stdin.write(`${fixturePath(name)}\n`)
    const answer = await this.next()
    if (!answer.ok) throw new Error(`${name}: ${answer.error}`)
    return performance.now() - start
  }
  stop(): Promise<unknown> {
    this.child.stdin.end()
    return new Promise((resolve) => this.child.once('close', resolve))
  }
}

/** Documents per second of `run`, which converts `count` documents. */
async function perSecond(count: number, run: () => Promise<unknown>): Promise<number> {
  const start = performance.now()
  await run()
  return count / ((performance.now() - start) / 1000)
}

/** Hands `names` to the drivers at once, each converting its share one document at a time. */
const convertShared = (drivers: UnoDriver[], names: string[]) =>
  Promise.all(drivers.map(async (driver, worker) => {
    for (let i = worker; i < names.length; i += drivers.length) await driver.convert(names[i]!)
  }))

const started = performance.now()
const sidecar = await startSidecar({ ...optionsFromEnv({}), port: 0, processes: 1 })
const startup = performance.now() - started
const profile = scratch('bench-soffice-profile-')
const out = scratch('bench-soffice-out-')
try {
  const convertViaSidecar = async (name: string, url = sidecar.url) => {
    const form = new FormData()
    form.append('files', new Blob([readFileSync(fixturePath(name))]), name)
    const start = performance.now()
    const response = await fetch(`${url}/forms/libreoffice/convert`, { method: 'POST', body: form })
    await response.arrayBuffer()
    if (!response.ok) throw new Error(`${name}: ${response.status}`)
    return performance.now() - start
  }
  const convertDirectly = (name: string) => {
    const start = performance.now()
    execFileSync('soffice', [`-env:UserInstallation=${pathToFileURL(profile).href}`, '--headless', '--convert-to', 'pdf', '--outdir', out, fixturePath(name)], { stdio: 'ignore' })
    return performance.now() - start
  }
  const cold = await convertViaSidecar('hello.docx')
  const coldDirect = convertDirectly('hello.docx')
  const unoStarted = performance.now()
  const uno = await UnoDriver.start()
  const coldUno = performance.now() - unoStarted + (await uno.convert('hello.docx'))
  const withUno = (line: string, ours: number, baseline: number) => `${line} · warm UNO ${baseline.toFixed(2)} ms · ratio ${(ours / baseline).toFixed(2)}`
  console.log(withUno(formatRatio('first conversion (start-up + conversion, cold profile)', startup + cold, 'soffice --convert-to', coldDirect, 'ms'), startup + cold, coldUno).replace('warm UNO', 'UNO'))
  for (const name of fixtures) {
    const ours = await median(5, () => convertViaSidecar(name))
    const direct = await median(3, () => convertDirectly(name))
    const overUno = await median(5, () => uno.convert(name))
    console.log(withUno(formatRatio(`${name} warm`, ours, 'soffice --convert-to', direct, 'ms'), ours, overUno))
  }
  await uno.stop()

  const count = 20
  const batch = Array.from({ length: count }, (_, i) => fixtures[i % fixtures.length]!)
  const ours: number[] = []
  const oursUnrestarted: number[] = []
  const overUno: number[] = []
  for (const processes of [1, 2]) {
    // The sidecar as in production restarts each LibreOffice every 10 conversions (SIDECAR_RESTART_AFTER); the
    // UNO baseline never does, so the sidecar is also measured with no restart in the batch, like for like.
    for (const [restartAfter, figures] of [[10, ours], [count + 1, oursUnrestarted]] as const) {
      const pool = await startSidecar({ ...optionsFromEnv({}), port: 0, processes, queueSize: 64, restartAfter })
      try {
        await Promise.all(Array.from({ length: processes }, () => convertViaSidecar('hello.docx', pool.url)))
        figures.push(await perSecond(count, () => Promise.all(batch.map((name) => convertViaSidecar(name, pool.url)))))
      } finally {
        await pool.close()
      }
    }
    const drivers = await Promise.all(Array.from({ length: processes }, () => UnoDriver.start()))
    try {
      await Promise.all(drivers.map((driver) => driver.convert('hello.docx')))
      overUno.push(await perSecond(count, () => convertShared(drivers, batch)))
    } finally {
      await Promise.all(drivers.map((driver) => driver.stop()))
    }
  }
  const direct = await perSecond(5, async () => {
    for (const name of batch.slice(0, 5)) convertDirectly(name)
  })
  console.log(`throughput, ${count} simultaneous documents (documents/s):`)
  for (const [i, processes] of [1, 2].entries()) {
    const unrestarted = oursUnrestarted[i]!
    console.log(`  ${processes} LibreOffice process${processes > 1 ? 'es' : ''}: ours ${ours[i]!.toFixed(2)} (restart every 10), ${unrestarted.toFixed(2)} (no restart) · warm UNO ${overUno[i]!.toFixed(2)} · ratio ${(unrestarted / overUno[i]!).toFixed(2)} · soffice --convert-to one after another ${direct.toFixed(2)} · ratio ${(ours[i]! / direct).toFixed(2)}`)
  }
} finally {
  await sidecar.close()
  for (const folder of folders) rmSync(folder, { recursive: true, force: true })
}
