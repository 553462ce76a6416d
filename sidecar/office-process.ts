// One long-lived LibreOffice: sidecar/uno_bridge.py starts soffice on its own profile and converts documents
// over UNO, one at a time, answering JSON lines. By default the bridge and LibreOffice run inside a bubblewrap
// sandbox with no network and only this process's folder writable and the system's read-only files visible: a
// document that links a URL or a local file cannot make LibreOffice fetch or embed it.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdir, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'

export type Sandbox = 'bwrap' | 'none'

export interface OfficeSettings {
  readonly soffice: string
  readonly python: string
  readonly sandbox: Sandbox
}

export interface ConvertRequest {
  readonly input: string
  readonly output: string
  readonly filter_data: Record<string, string | number | boolean>
  readonly password?: string
  readonly landscape?: boolean
  readonly update_indexes?: boolean
}

export type ConvertReply = { ok: true } | { ok: false; kind: 'unreadable' | 'failed'; message: string }

/** LibreOffice died (or was killed) during a conversion; the conversion may succeed on a fresh process. */
export class OfficeCrashedError extends Error {}

const BRIDGE = join(dirname(fileURLToPath(import.meta.url)), 'uno_bridge.py')

// Defence in depth inside the sandbox: macros off, linked content never updated, untrusted links blocked.
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

/** The system folders LibreOffice and Python read; everything else (home, /etc, other jobs) stays invisible. */
const READ_ONLY = ['/usr', '/etc/libreoffice', '/etc/fonts', '/etc/ld.so.cache', '/etc/alternatives']

function sandboxed(settings: OfficeSettings, folder: string, command: string[]): string[] {
  if (settings.sandbox === 'none') return command
  const args = ['bwrap']
  for (const path of READ_ONLY) args.push('--ro-bind-try', path, path)
  args.push('--symlink', 'usr/lib', '/lib', '--symlink', 'usr/lib64', '/lib64', '--symlink', 'usr/bin', '/bin', '--symlink', 'usr/sbin', '/sbin')
  // A fresh /tmp first: the binds below may live under /tmp (a clone there, the sidecar's own folders).
  args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp')
  args.push('--ro-bind', dirname(BRIDGE), dirname(BRIDGE), '--bind', folder, folder)
  args.push('--unshare-all', '--die-with-parent', '--new-session', '--setenv', 'HOME', folder, '--setenv', 'TMPDIR', '/tmp')
  return [...args, ...command]
}

/** One LibreOffice process and its bridge. `start()` resolves once LibreOffice answers over UNO. */
export class OfficeProcess {
  readonly folder: string
  readonly jobs: string
  private child: ChildProcess | undefined
  private pending: { resolve: (reply: ConvertReply) => void; reject: (error: Error) => void } | undefined
  private exited: Promise<void> = Promise.resolve()
  private stderr = ''
  conversions = 0
  private readonly settings: OfficeSettings
  private readonly name: string

  constructor(settings: OfficeSettings, folder: string, name: string) {
    this.settings = settings
    this.name = name
    this.folder = folder
    this.jobs = join(folder, 'jobs')
  }

  /** The bridge's process id (the sandbox's, when sandboxed): its process group holds LibreOffice. */
  get pid(): number | undefined {
    return this.child?.pid
  }

  get alive(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null
  }

  async start(): Promise<void> {
    const profile = join(this.folder, 'profile')
    await mkdir(join(profile, 'user'), { recursive: true })
    await mkdir(this.jobs, { recursive: true })
    await writeFile(join(profile, 'user', 'registrymodifications.xcu'), HARDENING)
    const [command, ...args] = sandboxed(this.settings, this.folder, [this.settings.python, BRIDGE, this.settings.soffice, profile, `edgefloor-${this.name}-${process.pid}`])
    const child = spawn(command!, args, { detached: true, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, HOME: this.folder } })
    this.child = child
    this.conversions = 0
    this.stderr = ''
    child.stderr!.on('data', (chunk) => (this.stderr = (this.stderr + chunk).slice(-2000)))
    this.exited = new Promise((resolve) => child.once('close', () => resolve()))
    const lines = createInterface({ input: child.stdout! })
    await new Promise<void>((resolve, reject) => {
      let ready = false
      lines.on('line', (line) => {
        let message: ({ ready?: boolean } & ConvertReply) | undefined
        try {
          message = JSON.parse(line)
        } catch {
          return
        }
        if (!ready && message?.ready) {
          ready = true
          resolve()
          return
        }
        const pending = this.pending
        this.pending = undefined
        pending?.resolve(message as ConvertReply)
      })
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

  /** Sends one request; rejects with OfficeCrashedError if LibreOffice dies first. */
  convert(request: ConvertRequest): Promise<ConvertReply> {
    if (!this.alive || this.pending) return Promise.reject(new OfficeCrashedError('LibreOffice is not running'))
    this.conversions++
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject }
      this.child!.stdin!.write(`${JSON.stringify(request)}\n`)
    })
  }

  /** Kills LibreOffice, its bridge and the sandbox at once. */
  async kill(): Promise<void> {
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
    if (!this.alive) return this.exited
    this.child!.stdin!.end()
    const timer = setTimeout(() => void this.kill(), graceMs)
    await this.exited
    clearTimeout(timer)
  }
}
