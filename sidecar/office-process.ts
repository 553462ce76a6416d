// One long-lived LibreOffice: sidecar/uno_bridge.py starts soffice on its own profile and converts documents
// over UNO, one at a time. The document goes to the bridge and the PDF comes back over its pipes, so with the
// bubblewrap sandbox (sidecar/sandbox.ts) neither ever touches the host's disk: they live on the sandbox's own
// tmpfs, which disappears with it, even when the sidecar is killed with SIGKILL (--die-with-parent).
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdir } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { officeEnvironment, sandboxed, type Installation } from './sandbox.ts'

export type Sandbox = 'bwrap' | 'none'

export interface ConvertRequest {
  /** The document's file name (its extension chooses the import filter). */
  readonly name: string
  readonly filter_data: Record<string, string | number | boolean>
  readonly password?: string
  readonly landscape?: boolean
  readonly update_indexes?: boolean
}

export type ConvertReply = { ok: true; pdf: Uint8Array } | { ok: false; kind: 'unreadable' | 'failed'; message: string }

/** LibreOffice died (or was killed) during a conversion; the conversion may succeed on a fresh process. */
export class OfficeCrashedError extends Error {}

const BRIDGE = join(dirname(fileURLToPath(import.meta.url)), 'uno_bridge.py')

/**
 * The bridge's stdout: JSON lines, each optionally followed by `size` raw bytes (the PDF). Collects chunks and
 * hands out whole messages.
 */
class ReplyReader {
  private chunks: Buffer[] = []
  private buffered = 0
  private header: ({ size?: number } & Record<string, unknown>) | undefined
  private readonly onMessage: (message: Record<string, unknown>, body: Uint8Array | undefined) => void
  constructor(onMessage: (message: Record<string, unknown>, body: Uint8Array | undefined) => void) {
    this.onMessage = onMessage
  }

  push(chunk: Buffer): void {
    this.chunks.push(chunk)
    this.buffered += chunk.length
    for (;;) {
      if (!this.header) {
        const joined = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks)
        const end = joined.indexOf(10)
        if (end < 0) {
          this.chunks = [joined]
          return
        }
        const line = joined.subarray(0, end).toString('utf8')
        const rest = joined.subarray(end + 1)
        this.chunks = rest.length ? [rest] : []
        this.buffered = rest.length
        try {
          this.header = JSON.parse(line)
        } catch {
          continue
        }
      }
      const size = this.header!.size ?? 0
      if (this.buffered < size) return
      const joined = Buffer.concat(this.chunks, this.buffered)
      const body = size > 0 ? new Uint8Array(joined.buffer, joined.byteOffset, size) : undefined
      const rest = joined.subarray(size)
      this.chunks = rest.length ? [rest] : []
      this.buffered = rest.length
      const message = this.header!
      this.header = undefined
      this.onMessage(message, body)
    }
  }
}

/** One LibreOffice process and its bridge. `start()` resolves once LibreOffice answers over UNO, warmed up. */
export class OfficeProcess {
  /** The process's own folder: its profile, and the job while it converts (a tmpfs inside the sandbox). */
  readonly folder: string
  private child: ChildProcess | undefined
  private pending: { resolve: (reply: ConvertReply) => void; reject: (error: Error) => void } | undefined
  private exited: Promise<void> = Promise.resolve()
  private stderr = ''
  /** Stopped before it started: start() then never spawns it. */
  private isCancelled = false
  conversions = 0
  private readonly installation: Installation
  private readonly sandbox: Sandbox

  constructor(installation: Installation, sandbox: Sandbox, folder: string) {
    this.installation = installation
    this.sandbox = sandbox
    this.folder = folder
  }

  /** The bridge's process id (the sandbox's, when sandboxed): its process group holds LibreOffice. */
  get pid(): number | undefined {
    return this.child?.pid
  }

  get alive(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null
  }

  async start(): Promise<void> {
    const bridge = [this.installation.python, BRIDGE, this.installation.program, this.folder]
    // Unsandboxed, the folder is on the host's disk (in the sidecar's temp root); sandboxed, it is a tmpfs.
    if (this.sandbox === 'none') await mkdir(this.folder, { recursive: true, mode: 0o700 })
    if (this.isCancelled) throw new Error('the sidecar is closing')
    const [command, ...args] =
      this.sandbox === 'bwrap' ? sandboxed(this.installation, this.folder, BRIDGE, bridge) : bridge
    const child = spawn(command!, args, {
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: (this.sandbox === 'bwrap' ? {} : officeEnvironment(this.folder)) as NodeJS.ProcessEnv,
    })
    this.child = child
    this.conversions = 0
    this.stderr = ''
    child.stderr!.on('data', (chunk) => (this.stderr = (this.stderr + chunk).slice(-2000)))
    // An EPIPE after LibreOffice died is reported by the close below.
    child.stdin!.on('error', () => {})
    this.exited = new Promise((resolve) => child.once('close', () => resolve()))
    await new Promise<void>((resolve, reject) => {
      let ready = false
      const reader = new ReplyReader((message, body) => {
        if (!ready && message.ready) {
          ready = true
          resolve()
          return
        }
        const pending = this.pending
        this.pending = undefined
        pending?.resolve(message.ok ? { ok: true, pdf: body ?? new Uint8Array() } : (message as ConvertReply))
      })
      child.stdout!.on('data', (chunk: Buffer) => reader.push(chunk))
      child.once('error', reject)
      child.once('close', (code, signal) => {
        const reason = `LibreOffice stopped (${signal ?? `exit ${code}`})${this.stderr.trim() ? `: ${this.stderr.trim().split('\n').slice(-3).join(' ')}` : ''}`
        if (!ready) reject(new Error(`LibreOffice could not start: ${reason}`))
        const pending = this.pending
        this.pending = undefined
        pending?.reject(new OfficeCrashedError(reason))
      })
    })
  }

  /** Sends one document; rejects with OfficeCrashedError if LibreOffice dies first. */
  convert(request: ConvertRequest, document: Uint8Array): Promise<ConvertReply> {
    if (!this.alive || this.pending) return Promise.reject(new OfficeCrashedError('LibreOffice is not running'))
    this.conversions++
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject }
      this.child!.stdin!.write(`${JSON.stringify({ ...request, size: document.byteLength })}\n`)
      this.child!.stdin!.write(document)
    })
  }

  /** Kills LibreOffice, its bridge and the sandbox at once. */
  async kill(): Promise<void> {
    this.isCancelled = true
    const pid = this.child?.pid
    if (pid && this.alive) {
      try {
        process.kill(-pid, 'SIGKILL')
      } catch {}
    }
    await this.exited
  }

  /** Asks LibreOffice to quit (closing the bridge's input), then kills what is left after a grace period. */
  async stop(graceMs = 5000): Promise<void> {
    this.isCancelled = true
    if (!this.alive) return this.exited
    this.child!.stdin!.end()
    const timer = setTimeout(() => void this.kill(), graceMs)
    await this.exited
    clearTimeout(timer)
  }
}
