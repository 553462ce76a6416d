// What a document can reach from inside the sidecar's sandbox (issue 17, point 4): DOCX, ODT, FODT and RTF
// documents linking a picture of the system's (file:///usr/share/…) and one on a loopback listener convert with
// neither embedded (pdfimages -list) and no request to the listener; the same documents without the sandbox do
// embed the picture, which is what makes the test mean something. LibreOffice also starts with a cleared
// environment: none of the sidecar's variables (SIDECAR_PASSWORD among them) reach it.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { optionsFromEnv, startSidecar, type RunningSidecar } from '../../sidecar/server'
import { linkingDocuments, systemPicture } from '../support/linking-documents'

const scratch = mkdtempSync(join(tmpdir(), 'sidecar-sandbox-test-'))

/** The pictures in a PDF, by poppler's pdfimages. */
function pdfImages(bytes: ArrayBuffer): string[] {
  const path = join(scratch, `${Math.random()}.pdf`)
  writeFileSync(path, Buffer.from(bytes))
  return execFileSync('pdfimages', ['-list', path], { encoding: 'utf8' }).trim().split('\n').slice(2)
}

async function convert(sidecar: RunningSidecar, name: string, bytes: Uint8Array) {
  const body = new FormData()
  body.append('files', new Blob([bytes]), name)
  const res = await fetch(`${sidecar.url}/forms/libreoffice/convert`, { method: 'POST', body })
  return { status: res.status, body: await res.arrayBuffer() }
}

/** 1×1 PNG: what the loopback listener answers, so a fetch would show as a picture too. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC',
  'base64',
)

// Two LibreOffices for the whole file, started at once: sandboxed (as by default) and not (the control). A
// variable of the sidecar's is set before they start, for the environment test to look for in LibreOffice's.
let sandboxed: RunningSidecar
let unsandboxed: RunningSidecar
const previousPassword = process.env.SIDECAR_PASSWORD
beforeAll(async () => {
  process.env.SIDECAR_PASSWORD = 'not-for-libreoffice'
  ;[sandboxed, unsandboxed] = await Promise.all([
    startSidecar({ ...optionsFromEnv({}), port: 0, processes: 1 }),
    startSidecar({ ...optionsFromEnv({}), port: 0, processes: 1, sandbox: 'none' }),
  ])
}, 180_000)
afterAll(async () => {
  if (previousPassword === undefined) delete process.env.SIDECAR_PASSWORD
  else process.env.SIDECAR_PASSWORD = previousPassword
  await Promise.all([sandboxed?.close(), unsandboxed?.close()])
})

describe('sidecar sandbox: a document reaches nothing outside itself', () => {
  const hits: string[] = []
  const listener = createServer((request, response) => {
    hits.push(request.url ?? '')
    response.writeHead(200, { 'content-type': 'image/png' }).end(PNG)
  })
  let documents: ReturnType<typeof linkingDocuments>

  beforeAll(async () => {
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve))
    const { port } = listener.address() as AddressInfo
    documents = linkingDocuments([`file://${systemPicture()}`, `http://127.0.0.1:${port}/picture.png`])
  })
  afterAll(() => new Promise<void>((resolve) => listener.close(() => resolve())))

  it.each([['linked.docx'], ['linked.odt'], ['linked.fodt'], ['linked.rtf']] as const)(
    'converts %s with neither the /usr picture nor the loopback one, and 0 hits on the listener',
    async (name) => {
      hits.length = 0
      const res = await convert(sandboxed, name, documents[name])
      expect(res.status).toBe(200)
      expect(pdfImages(res.body)).toEqual([])
      expect(hits).toEqual([])
    },
    60_000,
  )

  it.each([['linked.docx'], ['linked.odt'], ['linked.fodt'], ['linked.rtf']] as const)(
    '(the control: without the sandbox, %s embeds the /usr picture)',
    async (name) => {
      const res = await convert(unsandboxed, name, documents[name])
      expect(res.status).toBe(200)
      expect(pdfImages(res.body).length).toBeGreaterThan(0)
      // LibreOffice fetches linked pictures over http from DOCX and ODF; from RTF it reads only local files.
      if (name !== 'linked.rtf') expect(hits.length).toBeGreaterThan(0)
      hits.length = 0
    },
    60_000,
  )
})

describe('sidecar sandbox: environment', () => {
  it("starts LibreOffice with a cleared environment: the few variables it needs, none of the sidecar's", async () => {
    // The sandboxed sidecar started with SIDECAR_PASSWORD in its environment (the file's beforeAll).
    expect(process.env.SIDECAR_PASSWORD).toBe('not-for-libreoffice')
    const folder = sandboxed.pool.stats.processes[0]!.folder
    const pid = execFileSync('pgrep', ['-f', `soffice.bin.*${folder}/`], { encoding: 'utf8' })
      .trim()
      .split('\n')[0]!
    const environment = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean)
    expect(environment.join('\n')).not.toContain('not-for-libreoffice')
    // Ours, plus PWD (bubblewrap's) and URE_BOOTSTRAP (python3-uno's uno.py, for soffice to find its install).
    expect(environment.map((entry) => entry.split('=')[0]).sort()).toEqual([
      'HOME',
      'LANG',
      'PATH',
      'PWD',
      'SAL_USE_VCLPLUGIN',
      'TMPDIR',
      'URE_BOOTSTRAP',
    ])
  })
})
