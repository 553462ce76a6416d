// Running LibreOffice: a small pool of workers, each with its own warm user profile (two soffice processes
// sharing a profile lock each other out), one conversion at a time per worker, a bounded FIFO queue, and a
// timeout that kills the whole process group. Documents are converted with `soffice --convert-to`, spawned
// with an argument array (never a shell string) in a per-request temporary directory removed afterwards.
import { spawn } from 'node:child_process'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

export interface PoolOptions {
  readonly processes: number
  readonly queueSize: number
  readonly timeoutMs: number
  readonly soffice: string
}

export class QueueFullError extends Error {}
export class ConversionTimeoutError extends Error {}
export class ConversionFailedError extends Error {}

export interface PdfOptions {
  readonly nativePageRanges?: string
  /** PDF/A-1b, PDF/A-2b or PDF/A-3b. */
  readonly pdfa?: 'PDF/A-1b' | 'PDF/A-2b' | 'PDF/A-3b'
  readonly pdfua?: boolean
}

// Linked content is never updated or fetched: a document cannot make LibreOffice read a URL or a local file
// (the SSRF class Gotenberg fixed in 8.x). Macros are off.
const HARDENING = `<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Common/Security/Scripting"><prop oor:name="MacroSecurityLevel" oor:op="fuse"><value>3</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Security/Scripting"><prop oor:name="DisableMacrosExecution" oor:op="fuse"><value>true</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Security"><prop oor:name="BlockUntrustedRefererLinks" oor:op="fuse"><value>true</value></prop></item>
<item oor:path="/org.openoffice.Office.Writer/Content/Update"><prop oor:name="Link" oor:op="fuse"><value>2</value></prop></item>
<item oor:path="/org.openoffice.Office.Calc/Content/Update"><prop oor:name="Link" oor:op="fuse"><value>2</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Misc"><prop oor:name="UseLocking" oor:op="fuse"><value>false</value></prop></item>
</oor:items>
`

const PDF_VERSION = { 'PDF/A-1b': 1, 'PDF/A-2b': 2, 'PDF/A-3b': 3 } as const

/** The writer_pdf_Export filter with its options as LibreOffice's JSON filter syntax. */
export function pdfFilter(options: PdfOptions): string {
  const settings: Record<string, { type: string; value: string }> = {}
  if (options.nativePageRanges) settings.PageRange = { type: 'string', value: options.nativePageRanges }
  if (options.pdfa) settings.SelectPdfVersion = { type: 'long', value: String(PDF_VERSION[options.pdfa]) }
  if (options.pdfua) settings.PDFUACompliance = { type: 'boolean', value: 'true' }
  return Object.keys(settings).length ? `pdf:writer_pdf_Export:${JSON.stringify(settings)}` : 'pdf'
}

interface Job {
  run(profile: string): Promise<void>
}

export class LibreOfficePool {
  private readonly waiting: Array<{ job: Job; resolve: () => void; reject: (error: unknown) => void }> = []
  private readonly idle: string[] = []
  private readonly root: Promise<string>
  private conversions = 0
  private readonly options: PoolOptions

  constructor(options: PoolOptions) {
    this.options = options
    this.root = mkdtemp(join(tmpdir(), 'edgefloor-sidecar-'))
    this.root.then(async (root) => {
      for (let i = 0; i < options.processes; i++) {
        const profile = join(root, `profile-${i}`)
        await mkdir(join(profile, 'user'), { recursive: true })
        await writeFile(join(profile, 'user', 'registrymodifications.xcu'), HARDENING)
        this.idle.push(profile)
      }
      this.pump()
    })
  }

  get stats() {
    return { queued: this.waiting.length, idle: this.idle.length, conversions: this.conversions }
  }

  /** Converts one document to PDF; the bytes of the PDF. */
  async convert(filename: string, bytes: Uint8Array, options: PdfOptions): Promise<Uint8Array> {
    if (this.waiting.length >= this.options.queueSize) throw new QueueFullError('the conversion queue is full')
    let pdf: Uint8Array | undefined
    await new Promise<void>((resolve, reject) => {
      this.waiting.push({
        job: {
          run: async (profile) => {
            pdf = await this.runOnce(profile, filename, bytes, options)
          },
        },
        resolve,
        reject,
      })
      this.pump()
    })
    return pdf!
  }

  private pump(): void {
    while (this.idle.length > 0 && this.waiting.length > 0) {
      const profile = this.idle.shift()!
      const next = this.waiting.shift()!
      next.job
        .run(profile)
        .then(next.resolve, next.reject)
        .finally(() => {
          this.conversions++
          this.idle.push(profile)
          this.pump()
        })
    }
  }

  private async runOnce(profile: string, filename: string, bytes: Uint8Array, options: PdfOptions): Promise<Uint8Array> {
    const work = await mkdtemp(join(await this.root, 'job-'))
    try {
      const input = join(work, filename)
      await writeFile(input, bytes)
      const args = [
        `-env:UserInstallation=${pathToFileURL(profile).href}`,
        '--headless',
        '--invisible',
        '--nologo',
        '--nodefault',
        '--nolockcheck',
        '--norestore',
        '--convert-to',
        pdfFilter(options),
        '--outdir',
        join(work, 'out'),
        input,
      ]
      const { code, output } = await this.spawnWithTimeout(args)
      const pdfName = `${filename.replace(/\.[^.]*$/, '')}.pdf`
      try {
        return new Uint8Array(await readFile(join(work, 'out', pdfName)))
      } catch {
        throw new ConversionFailedError(`LibreOffice could not convert the document (exit ${code}): ${output.trim().slice(-300) || 'no output'}`)
      }
    } finally {
      await rm(work, { recursive: true, force: true })
    }
  }

  private spawnWithTimeout(args: string[]): Promise<{ code: number | null; output: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.options.soffice, args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, HOME: tmpdir() } })
      let output = ''
      child.stdout.on('data', (chunk) => (output += chunk))
      child.stderr.on('data', (chunk) => (output += chunk))
      const timer = setTimeout(() => {
        try {
          process.kill(-child.pid!, 'SIGKILL')
        } catch {}
        reject(new ConversionTimeoutError(`the conversion took longer than ${this.options.timeoutMs} ms`))
      }, this.options.timeoutMs)
      child.on('error', (error) => {
        clearTimeout(timer)
        reject(error)
      })
      child.on('close', (code) => {
        clearTimeout(timer)
        resolve({ code, output })
      })
    })
  }

  async close(): Promise<void> {
    await rm(await this.root, { recursive: true, force: true })
  }
}
