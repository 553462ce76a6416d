// The LibreOffice pool: `processes` long-lived LibreOffice processes (sidecar/office-process.ts), each with its
// own profile and one conversion at a time (concurrent conversions in one process deadlock), fed from a bounded
// FIFO queue. A conversion that outlives the timeout kills its process; a process that dies mid-conversion is
// restarted and the conversion answered as unavailable (clients retry); every process is restarted after
// `restartAfter` conversions. Each job's files live in the process's own folder and are always removed.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { OfficeCrashedError, OfficeProcess, type ConvertRequest, type Sandbox } from './office-process.ts'

export interface PoolOptions {
  readonly processes: number
  readonly queueSize: number
  readonly timeoutMs: number
  readonly restartAfter: number
  readonly soffice: string
  readonly python: string
  readonly sandbox: Sandbox
}

export class QueueFullError extends Error {}
export class ConversionTimeoutError extends Error {}
/** LibreOffice is starting, restarting or crashed: worth retrying. */
export class OfficeUnavailableError extends Error {}
/** The document's fault: unreadable, password-protected, or not exportable. */
export class ConversionFailedError extends Error {}

export interface PdfOptions {
  readonly nativePageRanges?: string
  /** PDF/A-1b, PDF/A-2b or PDF/A-3b. */
  readonly pdfa?: 'PDF/A-1b' | 'PDF/A-2b' | 'PDF/A-3b'
  readonly pdfua?: boolean
  readonly landscape?: boolean
  readonly password?: string
  /** More FilterData for the PDF export (sidecar/gotenberg-form.ts builds it from Gotenberg's form fields). */
  readonly exportFilter?: Readonly<Record<string, string | number | boolean>>
  /** Refresh tables of contents and other indexes before exporting (Gotenberg's updateIndexes, on by default). */
  readonly updateIndexes?: boolean
}

const PDF_VERSION = { 'PDF/A-1b': 1, 'PDF/A-2b': 2, 'PDF/A-3b': 3 } as const

/** The PDF export filter's settings (LibreOffice's FilterData) for the options. */
export function filterData(options: PdfOptions): ConvertRequest['filter_data'] {
  const data: Record<string, string | number | boolean> = { ...options.exportFilter }
  if (options.nativePageRanges) data.PageRange = options.nativePageRanges
  if (options.pdfa) data.SelectPdfVersion = PDF_VERSION[options.pdfa]
  if (options.pdfua) data.PDFUACompliance = true
  return data
}

interface Waiting {
  readonly run: (office: OfficeProcess) => Promise<void>
}

export class LibreOfficePool {
  private readonly waiting: Waiting[] = []
  private readonly idle: OfficeProcess[] = []
  private readonly offices: OfficeProcess[] = []
  /** The Gotenberg-Trace of the request each busy LibreOffice works for. */
  private readonly traces = new Map<OfficeProcess, string>()
  private readonly root: Promise<string>
  private startFailure: string | undefined
  private closed = false
  private jobCount = 0
  private readonly firstStart: Promise<void>
  private settleFirstStart: () => void = () => {}
  private readonly options: PoolOptions

  constructor(options: PoolOptions) {
    this.options = options
    this.root = mkdtemp(join(tmpdir(), 'edgefloor-sidecar-'))
    this.firstStart = new Promise((resolve) => (this.settleFirstStart = resolve))
    for (let i = 0; i < options.processes; i++) void this.launch(i)
  }

  get stats() {
    return { queued: this.waiting.length, idle: this.idle.length, processes: this.offices.map((office) => ({ pid: office.pid, folder: office.folder, alive: office.alive, busy: office.alive && !this.idle.includes(office), trace: this.traces.get(office) })) }
  }

  /** Up when at least one LibreOffice answers; the reason it cannot start otherwise. */
  get health(): { up: boolean; reason?: string } {
    return this.idle.length > 0 || this.offices.some((office) => office.alive) ? { up: true } : { up: false, reason: this.startFailure ?? 'LibreOffice is starting' }
  }

  /** Resolves once the first LibreOffice answers, or its first start failed (health then says why). */
  ready(): Promise<void> {
    return this.firstStart
  }

  private async launch(index: number, attempt = 0): Promise<void> {
    if (this.closed) return
    const office = this.offices[index] ?? new OfficeProcess(this.options, join(await this.root, `office-${index}`), String(index))
    this.offices[index] = office
    try {
      await office.start()
      this.startFailure = undefined
      this.settleFirstStart()
      this.idle.push(office)
      this.pump()
    } catch (error) {
      this.startFailure = (error as Error).message
      console.error(JSON.stringify({ level: 'error', message: this.startFailure }))
      this.settleFirstStart()
      await office.kill()
      setTimeout(() => void this.launch(index, attempt + 1), Math.min(30_000, 500 * 2 ** attempt)).unref()
    }
  }

  /** Converts one document to PDF for the request traced as `trace`; the bytes of the PDF. */
  async convert(filename: string, bytes: Uint8Array, options: PdfOptions, trace = ''): Promise<Uint8Array> {
    if (this.waiting.length >= this.options.queueSize) throw new QueueFullError('the conversion queue is full')
    if (this.startFailure && this.idle.length === 0) throw new OfficeUnavailableError(this.startFailure)
    let pdf: Uint8Array | undefined
    await new Promise<void>((resolve, reject) => {
      this.waiting.push({ run: (office) => this.runOn(office, filename, bytes, options, trace).then((result) => void (pdf = result)).then(resolve, reject) })
      this.pump()
    })
    return pdf!
  }

  private pump(): void {
    while (this.idle.length > 0 && this.waiting.length > 0) {
      const office = this.idle.shift()!
      const next = this.waiting.shift()!
      void next.run(office).finally(() => this.release(office))
    }
  }

  private async release(office: OfficeProcess): Promise<void> {
    const index = this.offices.indexOf(office)
    if (!office.alive) return this.launch(index)
    if (office.conversions >= this.options.restartAfter) {
      await office.stop()
      return this.launch(index)
    }
    this.idle.push(office)
    this.pump()
  }

  private async runOn(office: OfficeProcess, filename: string, bytes: Uint8Array, options: PdfOptions, trace: string): Promise<Uint8Array> {
    this.traces.set(office, trace)
    const work = join(office.jobs, `job-${++this.jobCount}`)
    const input = join(work, filename)
    const output = join(work, 'out.pdf')
    try {
      await rm(work, { recursive: true, force: true })
      await mkdir(work, { recursive: true })
      await writeFile(input, bytes)
      let timer: NodeJS.Timeout | undefined
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new ConversionTimeoutError(`the conversion took longer than ${this.options.timeoutMs} ms`)), this.options.timeoutMs)
      })
      const request: ConvertRequest = { input, output, filter_data: filterData(options), password: options.password, landscape: options.landscape, update_indexes: options.updateIndexes }
      const reply = await Promise.race([office.convert(request), timeout])
        .catch(async (error) => {
          // The stuck LibreOffice is gone before the job ends: released while still alive, it would take the next
          // document and fail it (the kill signal lands at once, but the process is reaped later).
          if (error instanceof ConversionTimeoutError) await office.kill()
          if (error instanceof OfficeCrashedError) throw new OfficeUnavailableError(`LibreOffice stopped during the conversion and is restarting: ${error.message}`)
          throw error
        })
        .finally(() => clearTimeout(timer))
      if (!reply.ok) throw new ConversionFailedError(reply.message)
      return new Uint8Array(await readFile(output))
    } finally {
      this.traces.delete(office)
      await rm(work, { recursive: true, force: true })
    }
  }

  async close(): Promise<void> {
    this.closed = true
    await Promise.all(this.offices.map((office) => office.stop(2000)))
    await rm(await this.root, { recursive: true, force: true })
  }
}
