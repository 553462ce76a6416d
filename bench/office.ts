// bench/office: Office → PDF through the sidecar (HTTP, long-lived sandboxed LibreOffice over UNO) against
// baselines on the same documents in the same run, measured in alternating order (ours first, then the baseline
// first) so a machine busy with something else weighs on both: a warm soffice driven over python3-uno directly
// (bench/uno_convert.py: no HTTP, sandbox or queue, the floor of a warm conversion), and `soffice --convert-to`
// with a warm profile (a fresh soffice per document). Figures: the first conversion once the sidecar is up, warm
// conversions per format, and the throughput of 20 simultaneous documents with one LibreOffice process while
// recycling it every 10 conversions (SIDECAR_RESTART_AFTER's default) against never recycling it.
import { type ChildProcessWithoutNullStreams, execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { optionsFromEnv, startSidecar } from '../sidecar/server.ts'
import { makeOfficeDocuments } from '../test/setup/office-documents.ts'

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

/** Hands `names` to the drivers at once, each converting its share one document at a time. */
const convertShared = (drivers: UnoDriver[], names: string[]) =>
  Promise.all(
    drivers.map(async (driver, worker) => {
      for (let i = worker; i < names.length; i += drivers.length) await driver.convert(names[i]!)
    }),
  )

/** Documents per second of `run`, which converts `count` documents. */
async function perSecond(count: number, run: () => Promise<unknown>): Promise<number> {
  const start = performance.now()
  await run()
  return count / ((performance.now() - start) / 1000)
}

/** Runs `ours` and `baseline` `rounds` times, alternating which goes first; the median of each. */
async function alternate(
  rounds: number,
  ours: () => Promise<number>,
  baseline: () => Promise<number>,
): Promise<[number, number]> {
  const a: number[] = []
  const b: number[] = []
  for (let round = 0; round < rounds; round++) {
    if (round % 2 === 0) {
      a.push(await ours())
      b.push(await baseline())
    } else {
      b.push(await baseline())
      a.push(await ours())
    }
  }
  const middle = (values: number[]) => values.sort((x, y) => x - y)[Math.floor(values.length / 2)]!
  return [middle(a), middle(b)]
}

const convertViaSidecar = async (url: string, name: string) => {
  const form = new FormData()
  form.append('files', new Blob([readFileSync(fixturePath(name))]), name)
  const start = performance.now()
  const response = await fetch(`${url}/forms/libreoffice/convert`, { method: 'POST', body: form })
  await response.arrayBuffer()
  if (!response.ok) throw new Error(`${name}: ${response.status}`)
  return performance.now() - start
}
const profile = scratch('bench-soffice-profile-')
const out = scratch('bench-soffice-out-')
const convertDirectly = (name: string) => {
  const start = performance.now()
  execFileSync(
    'soffice',
    [
      `-env:UserInstallation=${pathToFileURL(profile).href}`,
      '--headless',
      '--convert-to',
      'pdf',
      '--outdir',
      out,
      fixturePath(name),
    ],
    { stdio: 'ignore' },
  )
  return performance.now() - start
}
const ratio = (ours: number, baseline: number) => (ours / baseline).toFixed(2)
const closing: Array<() => Promise<unknown>> = []
try {
  // The first conversion once each is up: the sidecar (LibreOffice started and warmed up with it) against a raw
  // UNO process that has just connected. Start-up times are printed beside them.
  convertDirectly('hello.docx') // the --convert-to profile made once, outside the figures
  let startup = { ours: 0, uno: 0 }
  let uno: UnoDriver | undefined
  const [coldOurs, coldUno] = await alternate(
    2,
    async () => {
      const started = performance.now()
      const sidecar = await startSidecar({ ...optionsFromEnv({}), log: () => {}, port: 0, processes: 1 })
      startup.ours = performance.now() - started
      try {
        return await convertViaSidecar(sidecar.url, 'hello.docx')
      } finally {
        await sidecar.close()
      }
    },
    async () => {
      await uno?.stop()
      const started = performance.now()
      uno = await UnoDriver.start()
      startup.uno = performance.now() - started
      return uno.convert('hello.docx')
    },
  )
  const coldDirect = convertDirectly('hello.docx')
  console.log(
    `first conversion after start-up (hello.docx): ours ${coldOurs.toFixed(0)} ms · warm-started UNO ${coldUno.toFixed(0)} ms · ratio ${ratio(coldOurs, coldUno)} · soffice --convert-to (start, convert, quit) ${coldDirect.toFixed(0)} ms · ratio ${ratio(coldOurs, coldDirect)}`,
  )
  console.log(
    `  start-up until ready (last round): ours ${startup.ours.toFixed(0)} ms (LibreOffice started and warmed up) · UNO ${startup.uno.toFixed(0)} ms (connected, not warmed)`,
  )
  startup = { ours: 0, uno: 0 }

  // Warm conversions: the same document through the sidecar and over raw UNO, alternating.
  const sidecar = await startSidecar({
    ...optionsFromEnv({}),
    log: () => {},
    port: 0,
    processes: 1,
    queueSize: 64,
    restartAfter: 1_000_000,
  })
  closing.push(() => sidecar.close())
  for (const name of fixtures) {
    await convertViaSidecar(sidecar.url, name)
    await uno!.convert(name)
    const [ours, overUno] = await alternate(
      7,
      () => convertViaSidecar(sidecar.url, name),
      () => uno!.convert(name),
    )
    console.log(
      `${name} warm: ours ${ours.toFixed(1)} ms · warm UNO ${overUno.toFixed(1)} ms · ratio ${ratio(ours, overUno)}`,
    )
  }
  await uno!.stop()

  // Throughput with one LibreOffice process: recycled every 10 conversions (its warm standby takes over) against
  // never recycled, 20 simultaneous documents a batch, batches alternating between the two sidecars.
  const count = 20
  const batch = Array.from({ length: count }, (_, i) => fixtures[i % fixtures.length]!)
  const recycled = await startSidecar({
    ...optionsFromEnv({}),
    log: () => {},
    port: 0,
    processes: 1,
    queueSize: 64,
    restartAfter: 10,
  })
  closing.push(() => recycled.close())
  const convertBatch = (url: string) =>
    perSecond(count, () => Promise.all(batch.map((name) => convertViaSidecar(url, name))))
  await convertViaSidecar(recycled.url, 'hello.docx')
  const [withRecycling, withoutRecycling] = await alternate(
    5,
    () => convertBatch(recycled.url),
    () => convertBatch(sidecar.url),
  )
  console.log(`throughput, ${count} simultaneous documents, 1 LibreOffice process (documents/s):`)
  console.log(
    `  recycling every 10 conversions ${withRecycling.toFixed(2)} · never recycling ${withoutRecycling.toFixed(2)} · ratio ${ratio(withRecycling, withoutRecycling)}`,
  )
  const drivers = [await UnoDriver.start()]
  await drivers[0]!.convert('hello.docx')
  const overUno = await perSecond(count, () => convertShared(drivers, batch))
  await drivers[0]!.stop()
  console.log(
    `  never recycling ${withoutRecycling.toFixed(2)} · warm UNO one after another ${overUno.toFixed(2)} · ratio ${ratio(withoutRecycling, overUno)}`,
  )
} finally {
  for (const close of closing) await close()
  for (const folder of folders) rmSync(folder, { recursive: true, force: true })
}
