// Global setup (Node): pdftotext (poppler) run on the PDFs the text-extraction tests read, so they compare
// Edgefloor's text with poppler's on the same bytes. Provides { name: { pdf (base64), text } }.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestProject } from 'vitest/node'
import { prosePdf } from '../fixtures/pdf/text-pdfs'
import { threePages } from '../fixtures/pdf/pdfs'
import { makeOfficeDocuments } from './office-documents'

declare module 'vitest' {
  export interface ProvidedContext {
    pdfTexts: Record<PdfTextName, { pdf: string; text: string }>
  }
}

export type PdfTextName = 'prose.pdf' | 'three.pdf' | 'hello.pdf' | 'slides.pdf'

export default function setup(project: TestProject) {
  const office = makeOfficeDocuments()
  const pdfs: Record<PdfTextName, Uint8Array> = {
    'prose.pdf': prosePdf,
    'three.pdf': threePages,
    'hello.pdf': readFileSync(join(office, 'hello.pdf')),
    'slides.pdf': readFileSync(join(office, 'slides.pdf')),
  }
  const work = mkdtempSync(join(tmpdir(), 'pdf-texts-'))
  try {
    const texts = Object.fromEntries(
      Object.entries(pdfs).map(([name, bytes]) => {
        const path = join(work, name)
        writeFileSync(path, bytes)
        const text = execFileSync('pdftotext', ['-enc', 'UTF-8', path, '-'], { encoding: 'utf8', timeout: 60_000 })
        return [name, { pdf: Buffer.from(bytes).toString('base64'), text }]
      }),
    ) as Record<PdfTextName, { pdf: string; text: string }>
    project.provide('pdfTexts', texts)
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}
