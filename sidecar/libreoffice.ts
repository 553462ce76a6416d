// The LibreOffice pool: `processes` slots fed from a bounded FIFO queue. Each slot has one long-lived LibreOffice
// (sidecar/office-process.ts) on its own profile, converting one document at a time: concurrent conversions in one
// process deadlock. A process retires after `restartAfter` conversions, once its standby is ready: the standby starts
// halfway through, so it takes over at once while the old one quits. A conversion that outlives the timeout kills its
// process; one that dies mid-conversion is answered as unavailable (clients retry). Either way the standby takes over.
// All files live under one temp root per port, swept at start and at close, so even a sidecar killed with SIGKILL
// leaves nothing past its next start.
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { OfficeCrashedError, OfficeProcess, type ConvertRequest, type Sandbox } from './office-process.ts'
import { findInstallation, type Installation } from './sandbox.ts'

export interface PoolOptions {
  /** The port the sidecar listens on: it names the temp root, so the next sidecar on that port sweeps it. */
  readonly port: number
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

/** The sidecar's temp root for `port`: fixed, so a later start on the same port removes what a killed one left. */
export const sidecarRoot = (port: number) => join(tmpdir(), `edgefloor-sidecar-${port}`)

interface Waiting {
  readonly run: (office: OfficeProcess) => Promise<void>
}

/** One place for a LibreOffice: the process converting, and the warm standby that replaces it. */
interface Slot {
  readonly index: number
  generation: number
  active: OfficeProcess | undefined
  standby: OfficeProcess | undefined
  isStarting: boolean
  attempt: number
}

export class LibreOfficePool {
  /** Where every file of this sidecar lives (processes' folders unsandboxed, merges, post-processing). */
  readonly root: string
  private readonly waiting: Waiting[] = []
  private readonly idle: OfficeProcess[] = []
  private readonly slots: Slot[]
  /** Every process started and not yet stopped, standbys included: close() stops them all. */
  private readonly running = new Set<OfficeProcess>()
  /** The Gotenberg-Trace of the request each busy LibreOffice works for. */
  private readonly traces = new Map<OfficeProcess, string>()
  private readonly prepared: Promise<Installation>
  private startFailure: string | undefined
  private closed = false
  /** Processes replaced so far (recycled, crashed or timed out): Gotenberg's restarts count. */
  restarts = 0
  private readonly firstStart: Promise<void>
  private settleFirstStart: () => void = () => {}
  private readonly options: PoolOptions

  constructor(options: PoolOptions) {
    this.options = options
    const root = sidecarRoot(options.port)
    this.root = root
    this.firstStart = new Promise((resolve) => (this.settleFirstStart = resolve))
    this.slots = Array.from({ length: options.processes }, (_, index) => ({
      index,
      generation: 0,
      active: undefined,
      standby: undefined,
      isStarting: false,
      attempt: 0,
    }))
    this.prepared = (async () => {
      // What a sidecar killed on this port left behind (job files in unsandboxed mode, merges) goes first.
      await rm(root, { recursive: true, force: true })
      await mkdir(root, { recursive: true, mode: 0o700 })
      return findInstallation(options.soffice, options.python)
    })()
    this.prepared.catch((error) => {
      this.startFailure = `LibreOffice could not start: ${(error as Error).message}`
      console.error(JSON.stringify({ level: 'error', message: this.startFailure }))
      this.settleFirstStart()
    })
    for (const slot of this.slots) void this.startStandby(slot)
  }

  get stats() {
    return {
      queued: this.waiting.length,
      idle: this.idle.length,
      processes: this.slots.map(({ active: office, standby }) => ({
        pid: office?.pid,
        folder: office?.folder ?? '',
        alive: office?.alive ?? false,
        busy: !!office?.alive && !this.idle.includes(office),
        trace: office && this.traces.get(office),
        standby: standby?.pid,
      })),
    }
  }

  /** Up when at least one LibreOffice answers; the reason it cannot start otherwise. */
  get health(): { up: boolean; reason?: string } {
    return this.slots.some((slot) => slot.active?.alive || slot.standby?.alive)
      ? { up: true }
      : { up: false, reason: this.startFailure ?? 'LibreOffice is starting' }
  }

  /** Resolves once the first LibreOffice answers, or its first start failed (health then says why). */
  ready(): Promise<void> {
    return this.firstStart
  }

  /** A new folder under the sidecar's temp root, for files made around a conversion (merging, post-processing). */
  async scratch(prefix: string): Promise<string> {
    await this.prepared
    return mkdtemp(join(this.root, prefix))
  }

  /** Starts the slot's next LibreOffice (retrying with backoff), which takes over as soon as the slot needs it. */
  private async startStandby(slot: Slot): Promise<void> {
    if (this.closed || slot.standby || slot.isStarting) return
    slot.isStarting = true
    const installation = await this.prepared.catch(() => undefined)
    if (!installation) return void (slot.isStarting = false)
    const office = new OfficeProcess(
      installation,
      this.options.sandbox,
      join(this.root, `office-${slot.index}-${++slot.generation}`),
    )
    this.running.add(office)
    try {
      await office.start()
      slot.attempt = 0
      this.startFailure = undefined
      if (this.closed) return void (await this.retire(office))
      slot.standby = office
      this.settleFirstStart()
    } catch (error) {
      await this.retire(office)
      if (this.closed) return
      this.startFailure = (error as Error).message
      console.error(JSON.stringify({ level: 'error', message: this.startFailure }))
      this.settleFirstStart()
      setTimeout(() => void this.startStandby(slot), Math.min(30_000, 500 * 2 ** slot.attempt++)).unref()
    } finally {
      slot.isStarting = false
    }
    this.takeOver(slot)
  }

  /** Hands the slot to its standby when the active process is missing, dead, or idle past its conversions. */
  private takeOver(slot: Slot): void {
    if (slot.standby && !slot.standby.alive) {
      void this.retire(slot.standby)
      slot.standby = undefined
      void this.startStandby(slot)
    }
    const active = slot.active
    const isDue = !active?.alive || (this.idle.includes(active) && active.conversions >= this.options.restartAfter)
    if (isDue && !slot.standby) void this.startStandby(slot)
    if (!slot.standby || !isDue || this.closed) return
    if (active) {
      this.idle.splice(this.idle.indexOf(active), this.idle.includes(active) ? 1 : 0)
      void this.retire(active)
      this.restarts++
    }
    slot.active = slot.standby
    slot.standby = undefined
    this.idle.push(slot.active)
    this.pump()
  }

  private async retire(office: OfficeProcess): Promise<void> {
    await office.stop()
    this.running.delete(office)
    await rm(office.folder, { recursive: true, force: true })
  }

  /** Converts one document to PDF for the request traced as `trace`; the bytes of the PDF. */
  async convert(filename: string, bytes: Uint8Array, options: PdfOptions, trace = ''): Promise<Uint8Array> {
    if (this.waiting.length >= this.options.queueSize) throw new QueueFullError('the conversion queue is full')
    if (this.startFailure && this.idle.length === 0) throw new OfficeUnavailableError(this.startFailure)
    let pdf: Uint8Array | undefined
    await new Promise<void>((resolve, reject) => {
      this.waiting.push({
        run: (office) =>
          this.runOn(office, filename, bytes, options, trace)
            .then((result) => void (pdf = result))
            .then(resolve, reject),
      })
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

  private release(office: OfficeProcess): void {
    const slot = this.slots.find((candidate) => candidate.active === office)
    if (!slot) return void this.retire(office)
    // The standby starts halfway through the process's conversions, so it is warm when they are done (and a
    // sidecar that converts little runs one LibreOffice). Past its conversions, the process keeps converting until
    // its standby is ready: recycling never stalls the queue.
    if (office.conversions >= Math.max(1, Math.floor(this.options.restartAfter / 2))) void this.startStandby(slot)
    if (office.alive) this.idle.push(office)
    this.takeOver(slot)
    this.pump()
  }

  private async runOn(
    office: OfficeProcess,
    filename: string,
    bytes: Uint8Array,
    options: PdfOptions,
    trace: string,
  ): Promise<Uint8Array> {
    this.traces.set(office, trace)
    try {
      let timer: NodeJS.Timeout | undefined
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new ConversionTimeoutError(`the conversion took longer than ${this.options.timeoutMs} ms`)),
          this.options.timeoutMs,
        )
      })
      const request: ConvertRequest = {
        name: filename,
        filter_data: filterData(options),
        password: options.password,
        landscape: options.landscape,
        update_indexes: options.updateIndexes,
      }
      const reply = await Promise.race([office.convert(request, bytes), timeout])
        .catch(async (error) => {
          // The stuck LibreOffice is gone before the job ends: released while still alive, it would take the next
          // document and fail it (the kill signal lands at once, but the process is reaped later).
          if (error instanceof ConversionTimeoutError) await office.kill()
          if (error instanceof OfficeCrashedError)
            throw new OfficeUnavailableError(
              `LibreOffice stopped during the conversion and is restarting: ${error.message}`,
            )
          throw error
        })
        .finally(() => clearTimeout(timer))
      if (!reply.ok) throw new ConversionFailedError(reply.message)
      return reply.pdf
    } finally {
      this.traces.delete(office)
    }
  }

  async close(): Promise<void> {
    this.closed = true
    await Promise.all([...this.running].map((office) => office.stop(2000)))
    await rm(this.root, { recursive: true, force: true })
  }
}
