// Global setup (Node): a loopback HTTP server that reads a PDF with the real tools workerd tests cannot run —
// qpdf (attachments, the catalog's /AF and each file specification's /AFRelationship) and exiftool (XMP) — and
// answers what they say as JSON. POST /inspect with the PDF as the body.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type IncomingMessage } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestProject } from 'vitest/node'

declare module 'vitest' {
  export interface ProvidedContext {
    pdfInspectorUrl: string
  }
}

export interface PdfInspection {
  /** `qpdf --list-attachments`. */
  readonly attachments: string
  /** `qpdf --show-attachment=factur-x.xml`, or null when there is none. */
  readonly facturxXml: string | null
  /** The catalog's /AF: each file's name → its /AFRelationship (qpdf --json). */
  readonly associatedFiles: Record<string, string>
  /** `exiftool -j -a -XMP:all -PDF:all`. */
  readonly exif: Record<string, unknown>
}

const run = (command: string, args: string[]) =>
  execFileSync(command, args, { encoding: 'utf8', timeout: 60_000, maxBuffer: 64 * 1024 * 1024 })

function inspect(path: string): PdfInspection {
  const objects = JSON.parse(run('qpdf', ['--json-output=2', '--json-key=qpdf', '--json-stream-data=none', path]))
    .qpdf[1]
  const catalog = objects[`obj:${objects.trailer.value['/Root']}`].value
  const associatedFiles = Object.fromEntries(
    (catalog['/AF'] ?? []).map((ref: string) => [
      String(objects[`obj:${ref}`].value['/UF']).replace(/^u:/, ''),
      objects[`obj:${ref}`].value['/AFRelationship'],
    ]),
  )
  let facturxXml: string | null = null
  try {
    facturxXml = run('qpdf', ['--show-attachment=factur-x.xml', path])
  } catch {
    facturxXml = null
  }
  return {
    attachments: run('qpdf', ['--list-attachments', path]),
    facturxXml,
    associatedFiles,
    exif: JSON.parse(run('exiftool', ['-j', '-a', '-XMP:all', '-PDF:all', path]))[0],
  }
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

export default async function setup(project: TestProject) {
  const work = mkdtempSync(join(tmpdir(), 'pdf-inspector-'))
  let count = 0
  const server = createServer(async (request, response) => {
    if (request.method !== 'POST' || request.url !== '/inspect') return void response.writeHead(404).end()
    const path = join(work, `${++count}.pdf`)
    try {
      writeFileSync(path, await readBody(request))
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(inspect(path)))
    } catch (error) {
      response.writeHead(422, { 'content-type': 'text/plain' }).end(String((error as Error).message))
    } finally {
      rmSync(path, { force: true })
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (!address || typeof address === 'string') throw new Error('PDF inspector did not start')
  project.provide('pdfInspectorUrl', `http://127.0.0.1:${address.port}`)
  return () =>
    new Promise<void>((resolve) =>
      server.close(() => {
        rmSync(work, { recursive: true, force: true })
        resolve()
      }),
    )
}
