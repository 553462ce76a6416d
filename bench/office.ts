// bench/office: Office → PDF through the sidecar (HTTP, long-lived sandboxed LibreOffice over UNO) against
// soffice --convert-to run directly on the same document with a warm profile, in the same run: per-format warm
// time, the first (cold) conversion, and throughput of 20 simultaneous requests with 1 and 2 LibreOffice processes.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { optionsFromEnv, startSidecar } from '../sidecar/server.ts'
import { makeOfficeDocuments } from '../test/setup/office-documents.ts'
import { median } from './convert-harness.ts'
import { formatRatio } from './wrangler-dev.ts'

const fixtures = ['hello.docx', 'hello.odt', 'data.xlsx', 'hello.rtf', 'slides.pptx']
// The test documents, made by LibreOffice from small sources (or found from an earlier run).
const documents = makeOfficeDocuments()
const started = performance.now()
const sidecar = await startSidecar({ ...optionsFromEnv({}), port: 0, processes: 1 })
const startup = performance.now() - started
const profile = mkdtempSync(join(tmpdir(), 'bench-soffice-profile-'))
const out = mkdtempSync(join(tmpdir(), 'bench-soffice-out-'))
try {
  const convertViaSidecar = async (name: string, url = sidecar.url) => {
    const form = new FormData()
    form.append('files', new Blob([readFileSync(join(documents, name))]), name)
    const start = performance.now()
    const response = await fetch(`${url}/forms/libreoffice/convert`, { method: 'POST', body: form })
    await response.arrayBuffer()
    if (!response.ok) throw new Error(`${name}: ${response.status}`)
    return performance.now() - start
  }
  const convertDirectly = (name: string) => {
    const start = performance.now()
    execFileSync('soffice', [`-env:UserInstallation=${pathToFileURL(profile).href}`, '--headless', '--convert-to', 'pdf', '--outdir', out, join(documents, name)], { stdio: 'ignore' })
    return performance.now() - start
  }
  const cold = await convertViaSidecar('hello.docx')
  const coldDirect = convertDirectly('hello.docx')
  console.log(formatRatio('first conversion (start-up + conversion, cold profile)', startup + cold, 'soffice directly', coldDirect, 'ms'))
  for (const name of fixtures) {
    const ours = await median(3, () => convertViaSidecar(name))
    const direct = await median(3, () => convertDirectly(name))
    console.log(formatRatio(`${name} warm`, ours, 'soffice directly', direct, 'ms'))
  }
  const perSecond: number[] = []
  for (const processes of [1, 2]) {
    const pool = await startSidecar({ ...optionsFromEnv({}), port: 0, processes, queueSize: 64 })
    try {
      await Promise.all(Array.from({ length: processes }, () => convertViaSidecar('hello.docx', pool.url)))
      const start = performance.now()
      await Promise.all(Array.from({ length: 20 }, (_, i) => convertViaSidecar(fixtures[i % fixtures.length]!, pool.url)))
      perSecond.push(20 / ((performance.now() - start) / 1000))
    } finally {
      await pool.close()
    }
  }
  const direct = performance.now()
  for (let i = 0; i < 5; i++) convertDirectly(fixtures[i % fixtures.length]!)
  const directPerSecond = 5 / ((performance.now() - direct) / 1000)
  console.log(`throughput, 20 simultaneous documents: 1 process ${perSecond[0]!.toFixed(1)}/s, 2 processes ${perSecond[1]!.toFixed(1)}/s; soffice directly one after another ${directPerSecond.toFixed(2)}/s (ratios ${(perSecond[0]! / directPerSecond).toFixed(1)}×, ${(perSecond[1]! / directPerSecond).toFixed(1)}×)`)
} finally {
  await sidecar.close()
  rmSync(profile, { recursive: true, force: true })
  rmSync(out, { recursive: true, force: true })
}
