// gotenberg-js-client, the npm client of the design card, unmodified against our sidecar: it speaks Gotenberg 6
// (POST /convert/office, fields landscape, pageRanges, resultFilename), which the sidecar serves as aliases.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { convert, gotenberg, landscape, office, pipe, please, range, to } from 'gotenberg-js-client'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { optionsFromEnv, startSidecar, type RunningSidecar } from '../../sidecar/server'

const scratch = mkdtempSync(join(tmpdir(), 'gotenberg-js-client-'))
const fixture = (name: string) => `file://${join(inject('officeDocumentsDir'), name)}`

async function bytesOf(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer))
  return Buffer.concat(chunks)
}

function pdfInfo(pdf: Buffer): string {
  const path = join(scratch, `${Math.random()}.pdf`)
  writeFileSync(path, pdf)
  return execFileSync('pdfinfo', [path], { encoding: 'utf8' })
}

let sidecar: RunningSidecar
beforeAll(async () => {
  sidecar = await startSidecar({ ...optionsFromEnv({}), port: 0, processes: 1 })
})
afterAll(() => sidecar.close())

describe('gotenberg-js-client against the sidecar', () => {
  it('converts an Office document', async () => {
    const toPdf = pipe(gotenberg(sidecar.url), convert, office, please)
    const pdf = await bytesOf(await toPdf(fixture('hello.docx')))
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-')
    expect(pdfInfo(pdf)).toMatch(/Pages:\s+1/)
  })

  it('applies its landscape and page-range modifiers', async () => {
    const turned = pipe(gotenberg(sidecar.url), convert, office, to(landscape), please)
    const [, width, height] = /Page size:\s+([\d.]+) x ([\d.]+)/.exec(pdfInfo(await bytesOf(await turned(fixture('hello.docx')))))!
    expect(Number(width)).toBeGreaterThan(Number(height))
    const second = pipe(gotenberg(sidecar.url), convert, office, to(range('2')), please)
    expect(pdfInfo(await bytesOf(await second(fixture('slides.pptx'))))).toMatch(/Pages:\s+1/)
  })

  it('surfaces the sidecar\'s refusal as an error', async () => {
    const toPdf = pipe(gotenberg(sidecar.url), convert, office, please)
    await expect(toPdf(['broken.docx', Buffer.from('PK\u0003\u0004 not a document')] as never)).rejects.toThrow(/400/)
  })
})
