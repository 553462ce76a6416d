// bench/office: Office → PDF through the sidecar (HTTP, warm profile, pool) against soffice --convert-to run
// directly on the same document with a warm profile, in the same run: per-format warm time, and the first
// (cold) conversion.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { optionsFromEnv, startSidecar } from '../sidecar/server.ts'
import { median } from './convert-harness.ts'
import { formatRatio } from './wrangler-dev.ts'

const fixtures = ['hello.docx', 'hello.odt', 'data.xlsx', 'hello.rtf']
const sidecar = await startSidecar({ ...optionsFromEnv({}), port: 0, processes: 1 })
const profile = mkdtempSync(join(tmpdir(), 'bench-soffice-profile-'))
const out = mkdtempSync(join(tmpdir(), 'bench-soffice-out-'))
try {
  const convertViaSidecar = async (name: string) => {
    const form = new FormData()
    form.append('files', new Blob([readFileSync(new URL(`../test/fixtures/office/${name}`, import.meta.url))]), name)
    const start = performance.now()
    const response = await fetch(`${sidecar.url}/forms/libreoffice/convert`, { method: 'POST', body: form })
    await response.arrayBuffer()
    if (!response.ok) throw new Error(`${name}: ${response.status}`)
    return performance.now() - start
  }
  const convertDirectly = (name: string) => {
    const start = performance.now()
    execFileSync('soffice', [`-env:UserInstallation=${pathToFileURL(profile).href}`, '--headless', '--convert-to', 'pdf', '--outdir', out, new URL(`../test/fixtures/office/${name}`, import.meta.url).pathname], { stdio: 'ignore' })
    return performance.now() - start
  }
  const cold = await convertViaSidecar('hello.docx')
  const coldDirect = convertDirectly('hello.docx')
  console.log(formatRatio('first conversion (cold profile)', cold, 'soffice directly', coldDirect, 'ms'))
  for (const name of fixtures) {
    const ours = await median(3, () => convertViaSidecar(name))
    const direct = await median(3, () => convertDirectly(name))
    console.log(formatRatio(`${name} warm`, ours, 'soffice directly', direct, 'ms'))
  }
} finally {
  await sidecar.close()
  rmSync(profile, { recursive: true, force: true })
  rmSync(out, { recursive: true, force: true })
}
