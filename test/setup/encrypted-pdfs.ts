// Global setup (Node): the encrypted PDFs of the tests, made by qpdf at start from test-made plain PDFs, for every
// kind of the standard security handler (test/support/qpdf.ts). Provides { name: base64 }:
// - `page-<kind>.pdf`: one 100 × 100 pt page, a black square on its lower left quarter, its content stream
//   SQUARE_PAGE_CONTENT_BYTES long (qpdf compresses it), empty user password;
// - `locked-<kind>.pdf`: the same page, user password "s3cret", owner password "owner-secret";
// - the hostile corpus's encrypted cases by name (test/hostile/corpus.ts, `encryption`).
import type { TestProject } from 'vitest/node'
import { HOSTILE_CASES } from '../hostile/corpus.ts'
import { squarePage } from '../support/pdf.ts'
import { ENCRYPTIONS, type EncryptionKind, encryptWithQpdf } from '../support/qpdf.ts'

declare module 'vitest' {
  export interface ProvidedContext {
    encryptedPdfs: Record<string, string>
  }
}

export async function makeEncryptedPdfs(): Promise<Record<string, Uint8Array>> {
  const pdfs: Record<string, Uint8Array> = {}
  const page = squarePage()
  for (const kind of Object.keys(ENCRYPTIONS) as EncryptionKind[]) {
    pdfs[`page-${kind}.pdf`] = encryptWithQpdf(page, kind)
    pdfs[`locked-${kind}.pdf`] = encryptWithQpdf(page, kind, 's3cret')
  }
  for (const hostile of HOSTILE_CASES)
    if (hostile.encryption) pdfs[hostile.name] = encryptWithQpdf(await hostile.bytes(), hostile.encryption)
  return pdfs
}

export default async function setup(project: TestProject) {
  const pdfs = await makeEncryptedPdfs()
  project.provide(
    'encryptedPdfs',
    Object.fromEntries(Object.entries(pdfs).map(([name, bytes]) => [name, Buffer.from(bytes).toString('base64')])),
  )
}
