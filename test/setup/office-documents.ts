// Global setup (Node): the Office documents of the tests, made from the small sources below by the installed
// LibreOffice (test/setup/office_documents.py, one soffice for every format) instead of committed binaries.
// Made once, then kept under .tmp/office-documents/<hash of the sources and the script> for the next runs.
// Node tests read them from `officeDocumentsDir`; workerd tests get their bytes as base64 (`officeDocuments`).
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { TestProject } from 'vitest/node'

declare module 'vitest' {
  export interface ProvidedContext {
    officeDocumentsDir: string
    officeDocuments: Record<OfficeDocumentName, string>
  }
}

const TEXT = `<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" office:version="1.3" office:mimetype="application/vnd.oasis.opendocument.text">
 <office:body><office:text>
  <text:p>Edgefloor office test</text:p>
  <text:p>Second paragraph of the document.</text:p>
 </office:text></office:body>
</office:document>
`

const slide = (name: string, text: string) =>
  `<draw:page draw:name="${name}"><draw:frame svg:x="2cm" svg:y="2cm" svg:width="20cm" svg:height="4cm"><draw:text-box><text:p>${text}</text:p></draw:text-box></draw:frame></draw:page>`

const SLIDES = `<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0" office:version="1.3" office:mimetype="application/vnd.oasis.opendocument.presentation">
 <office:body><office:presentation>
  ${slide('one', 'Edgefloor slide one')}
  ${slide('two', 'Edgefloor slide two')}
 </office:presentation></office:body>
</office:document>
`

const SLIDE = SLIDES.replace(slide('two', 'Edgefloor slide two'), '')

const DATA = 'name,amount\napples,3\npears,5\n'

/** A text document of `count` pages reading "Page 1" … "Page N" (the shape of Gotenberg's page_N/pages_N fixtures). */
const pages = (count: number, first = 1) => `<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" office:version="1.3" office:mimetype="application/vnd.oasis.opendocument.text">
 <office:automatic-styles><style:style style:name="Break" style:family="paragraph"><style:paragraph-properties fo:break-before="page"/></style:style></office:automatic-styles>
 <office:body><office:text>
  ${Array.from({ length: count }, (_, i) => `<text:p${i ? ' text:style-name="Break"' : ''}>Page ${first + i}</text:p>`).join('\n  ')}
 </office:text></office:body>
</office:document>
`

/** A sheet whose first row says "Meteor", tall enough to be saved scrolled down (Gotenberg's issue 1222). */
const TALL = `Meteor,Year\n${Array.from({ length: 80 }, (_, i) => `Shower ${i + 1},${1900 + i}`).join('\n')}\n`

/** The sources, written as they are. */
const SOURCES = {
  'hello.fodt': TEXT,
  'slides.fodp': SLIDES,
  'slide.fodp': SLIDE,
  'data.csv': DATA,
  'tall.csv': TALL,
  'page_1.fodt': pages(1),
  'page_2.fodt': pages(1, 2),
  'pages_3.fodt': pages(3),
  'pages_12.fodt': pages(12),
} as const

const CSV_IMPORT = { import_filter: 'Text - txt - csv (StarCalc)', import_options: '44,34,76,1' }

/** Each document: its source and LibreOffice's export filter. secret.odt opens with the password "s3cret". */
const DOCUMENTS = {
  'hello.docx': { input: 'hello.fodt', filter: 'MS Word 2007 XML' },
  'hello.doc': { input: 'hello.fodt', filter: 'MS Word 97' },
  'hello.odt': { input: 'hello.fodt', filter: 'writer8' },
  'hello.rtf': { input: 'hello.fodt', filter: 'Rich Text Format' },
  'secret.odt': { input: 'hello.fodt', filter: 'writer8', password: 's3cret' },
  'data.xlsx': { input: 'data.csv', filter: 'Calc MS Excel 2007 XML', ...CSV_IMPORT },
  'data.xls': { input: 'data.csv', filter: 'MS Excel 97', ...CSV_IMPORT },
  'data.ods': { input: 'data.csv', filter: 'calc8', ...CSV_IMPORT },
  'slides.pptx': { input: 'slides.fodp', filter: 'Impress MS PowerPoint 2007 XML' },
  'slides.ppt': { input: 'slides.fodp', filter: 'MS PowerPoint 97' },
  'slides.odp': { input: 'slides.fodp', filter: 'impress8' },
  // Gotenberg's scenario fixtures (test/sidecar/gotenberg-scenarios.test.ts), remade here with the same content.
  'page_1.docx': { input: 'page_1.fodt', filter: 'MS Word 2007 XML' },
  'page_2.docx': { input: 'page_2.fodt', filter: 'MS Word 2007 XML' },
  'pages_3.docx': { input: 'pages_3.fodt', filter: 'MS Word 2007 XML' },
  'pages_12.docx': { input: 'pages_12.fodt', filter: 'MS Word 2007 XML' },
  // LibreOffice 7.4 cannot save an encrypted OOXML package over UNO (the password is dropped): an encrypted ODF
  // package under the scenario's name instead; LibreOffice reads a document by its content, not its name.
  'protected_page_1.docx': { input: 'page_1.fodt', filter: 'writer8', password: 'foo' },
  'slideshow.ppsx': { input: 'slide.fodp', filter: 'Impress MS PowerPoint 2007 XML AutoPlay' },
  'tall.xlsx': { input: 'tall.csv', filter: 'Calc MS Excel 2007 XML', ...CSV_IMPORT },
  // PDFs of the same documents, for text extraction compared with pdftotext.
  'hello.pdf': { input: 'hello.fodt', filter: 'writer_pdf_Export' },
  'slides.pdf': { input: 'slides.fodp', filter: 'impress_pdf_Export' },
} as const

export type OfficeDocumentName = keyof typeof DOCUMENTS | 'data.csv'
const OFFICE_DOCUMENT_NAMES = [...Object.keys(DOCUMENTS), 'data.csv'] as OfficeDocumentName[]

const SCRIPT = fileURLToPath(new URL('office_documents.py', import.meta.url))
const CACHE = fileURLToPath(new URL('../../.tmp/office-documents/', import.meta.url))

/** The folder holding every document, made now unless an earlier run made the same ones. */
export function makeOfficeDocuments(env: Readonly<Record<string, string | undefined>> = process.env): string {
  const key = createHash('sha256')
    .update(JSON.stringify({ SOURCES, DOCUMENTS }))
    .update(readFileSync(SCRIPT))
    .digest('hex')
    .slice(0, 16)
  const folder = join(CACHE, key)
  if (existsSync(folder)) return folder
  mkdirSync(CACHE, { recursive: true })
  const work = mkdtempSync(join(CACHE, 'making-'))
  try {
    for (const [name, content] of Object.entries(SOURCES)) writeFileSync(join(work, name), content)
    const out = join(work, 'documents')
    mkdirSync(out)
    writeFileSync(join(out, 'data.csv'), DATA)
    const jobs = Object.entries(DOCUMENTS).map(([name, job]) => ({
      ...job,
      input: join(work, job.input),
      output: join(out, name),
    }))
    writeFileSync(join(work, 'jobs.json'), JSON.stringify(jobs))
    const started = performance.now()
    execFileSync(
      env.SIDECAR_PYTHON || '/usr/bin/python3',
      [SCRIPT, env.SOFFICE || 'soffice', join(work, 'profile'), join(work, 'jobs.json')],
      { stdio: 'inherit', timeout: 180_000 },
    )
    console.log(
      `office documents: ${jobs.length} made with LibreOffice in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    )
    // Renamed into place whole, so a run stopped halfway never leaves a folder that looks complete; another run
    // that made the same documents meanwhile wins the rename, and its folder serves as well.
    try {
      renameSync(out, folder)
    } catch (error) {
      if (!existsSync(folder)) throw error
    }
    return folder
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

export default function setup(project: TestProject) {
  const folder = makeOfficeDocuments()
  project.provide('officeDocumentsDir', folder)
  project.provide(
    'officeDocuments',
    Object.fromEntries(
      OFFICE_DOCUMENT_NAMES.map((name) => [name, readFileSync(join(folder, name)).toString('base64')]),
    ) as Record<OfficeDocumentName, string>,
  )
}
