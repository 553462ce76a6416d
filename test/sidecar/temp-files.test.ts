// The sidecar leaves nothing behind in its temp dir: each job's folder and each merge's folder are removed once
// the answer is sent, whether the conversion worked or failed, and closing removes the rest. Its temp root is
// named by its port and swept when a sidecar starts on that port; a sidecar killed with SIGKILL in the middle of
// a conversion takes the document with it (it only ever lived in the sandbox's tmpfs).
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { optionsFromEnv, startSidecar, type RunningSidecar } from '../../sidecar/server'
import { until } from '../support/office-pool'

// The sidecar makes its folders under os.tmpdir(): a fresh one for this file (each test file runs in its own
// process) so only this sidecar's folders are seen.
const temp = mkdtempSync(join(tmpdir(), 'sidecar-temp-files-'))
process.env.TMPDIR = temp

const fixture = (name: string) => new Blob([readFileSync(join(inject('officeDocumentsDir'), name))])
const broken = () => new Blob([new TextEncoder().encode('PK\u0003\u0004 not really a docx')])

/** Every folder under the temp dir that holds a job's files or a request's PDFs after the conversion. */
function leftovers(): string[] {
  return readdirSync(temp, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isDirectory() && /^(job|post-.*)$/.test(entry.name))
    .map((entry) => relative(temp, join(entry.parentPath, entry.name)))
}

async function convert(files: Array<[string, Blob]>, fields: Record<string, string> = {}) {
  const body = new FormData()
  for (const [name, blob] of files) body.append('files', blob, name)
  for (const [key, value] of Object.entries(fields)) body.append(key, value)
  const res = await fetch(`${sidecar.url}/forms/libreoffice/convert`, { method: 'POST', body })
  return { status: res.status, type: res.headers.get('content-type'), text: res.ok ? '' : await res.text() }
}

let sidecar: RunningSidecar
beforeAll(async () => {
  sidecar = await startSidecar({ ...optionsFromEnv({}), port: 0, processes: 1, restartAfter: 1000 })
})
afterAll(() => sidecar?.close())

describe('sidecar: temp files', () => {
  it('keeps its files in one root named by its port, in the temp dir it was given', () => {
    const root = `edgefloor-sidecar-${new URL(sidecar.url).port}`
    expect(readdirSync(temp)).toEqual([root])
    expect(sidecar.pool.stats.processes[0]?.folder.startsWith(join(temp, root, 'office-0-'))).toBe(true)
  })

  it('removes the job folder after a single conversion', async () => {
    expect(await convert([['hello.rtf', fixture('hello.rtf')]])).toMatchObject({ status: 200, type: 'application/pdf' })
    expect(leftovers()).toEqual([])
  })

  it('removes every job folder after several documents answered as a zip', async () => {
    expect(
      await convert([
        ['hello.rtf', fixture('hello.rtf')],
        ['data.csv', fixture('data.csv')],
      ]),
    ).toMatchObject({ status: 200, type: 'application/zip' })
    expect(leftovers()).toEqual([])
  })

  it('removes the job folders and the merge folder after a merge', async () => {
    expect(
      await convert(
        [
          ['hello.rtf', fixture('hello.rtf')],
          ['data.csv', fixture('data.csv')],
        ],
        { merge: 'true' },
      ),
    ).toMatchObject({ status: 200, type: 'application/pdf' })
    expect(leftovers()).toEqual([])
  })

  it('removes the job folder after a conversion that fails', async () => {
    const failed = await convert([['broken.docx', broken()]])
    expect(failed.status).toBe(400)
    expect(failed.text).toMatch(/^Bad Request: /)
    expect(leftovers()).toEqual([])
  })

  it('answers a request whose first document fails only once its other documents are done, and leaves no folder', async () => {
    const failed = await convert(
      [
        ['broken.docx', broken()],
        ['hello.rtf', fixture('hello.rtf')],
        ['data.csv', fixture('data.csv')],
      ],
      { merge: 'true' },
    )
    expect(failed.status).toBe(400)
    expect(sidecar.pool.stats).toMatchObject({ queued: 0, idle: 1 })
    expect(leftovers()).toEqual([])
  })

  it('removes its whole folder when it closes', async () => {
    await sidecar.close()
    expect(readdirSync(temp)).toEqual([])
  })
})

/** A loopback port free a moment ago. */
async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** Every file under the temp dir whose bytes contain `marker`. */
function filesContaining(marker: string): string[] {
  return readdirSync(temp, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
    .filter((path) => {
      try {
        return readFileSync(path).includes(marker)
      } catch {
        return false
      }
    })
}

function pgrep(pattern: string): string[] {
  try {
    return execFileSync('pgrep', ['-f', pattern], { encoding: 'utf8' }).trim().split('\n')
  } catch {
    return []
  }
}

describe('sidecar: temp root per port', () => {
  it('sweeps what an earlier sidecar on the same port left behind when it starts', async () => {
    const port = await freePort()
    const stale = join(temp, `edgefloor-sidecar-${port}`, 'office-0-1', 'job')
    mkdirSync(stale, { recursive: true })
    writeFileSync(join(stale, 'report.docx'), 'a document from a sidecar killed with SIGKILL')
    const again = await startSidecar({ ...optionsFromEnv({}), port, processes: 1 })
    try {
      expect(existsSync(stale)).toBe(false)
    } finally {
      await again.close()
    }
    expect(existsSync(join(temp, `edgefloor-sidecar-${port}`))).toBe(false)
  }, 120_000)

  it('leaves no trace of a document when the sidecar is killed with SIGKILL in the middle of its conversion', async () => {
    const port = await freePort()
    const marker = `edgefloor-sigkill-${port}`
    const server = fileURLToPath(new URL('../../sidecar/server.ts', import.meta.url))
    const child = spawn(process.execPath, [server], {
      env: { PATH: process.env.PATH, TMPDIR: temp, SIDECAR_PORT: String(port) } as unknown as NodeJS.ProcessEnv,
      stdio: 'ignore',
    })
    const url = `http://127.0.0.1:${port}`
    try {
      await until(
        () => pgrep(`soffice.bin.*edgefloor-sidecar-${port}/office-0-1/`).length > 0,
        'the sidecar starting LibreOffice',
        120_000,
      )
      let healthy = false
      while (!healthy)
        healthy = await fetch(`${url}/health`).then(
          (res) => res.ok,
          () => false,
        )
      const body = new FormData()
      body.append(
        'files',
        new Blob([['name,note', ...Array.from({ length: 300_000 }, (_, i) => `${marker},row ${i}`)].join('\n')]),
        'slow.csv',
      )
      const answer = fetch(`${url}/forms/libreoffice/convert`, { method: 'POST', body }).catch(() => undefined)
      // The document inside the sandbox, seen through LibreOffice's own root: the job is under way.
      const [office] = pgrep(`soffice.bin.*edgefloor-sidecar-${port}/office-0-1/`)
      const job = `/proc/${office}/root${join(temp, `edgefloor-sidecar-${port}`, 'office-0-1', 'job', 'slow.csv')}`
      await until(() => existsSync(job), 'LibreOffice taking the document', 60_000)
      child.kill('SIGKILL')
      await answer
      await until(() => pgrep(`edgefloor-sidecar-${port}/`).length === 0, 'the sandbox dying with the sidecar', 30_000)
      expect(filesContaining(marker)).toEqual([])
    } finally {
      child.kill('SIGKILL')
    }
  }, 240_000)
})
