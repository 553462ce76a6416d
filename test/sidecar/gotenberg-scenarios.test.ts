// Gotenberg 8's own integration scenarios (gotenberg/gotenberg, test/integration/features/libreoffice_convert.feature,
// health.feature and version.feature), one test per scenario, named after it, replayed against the real sidecar
// and real LibreOffice. The fixtures have the content of Gotenberg's (page_1.docx reads "Page 1", pages_3.docx has
// three pages, …) and are made by test/setup/office-documents.ts; the PDFs are checked with poppler (pdfinfo,
// pdftotext, pdfimages), qpdf and exiftool. Where Gotenberg checks with veraPDF (PDF/A, PDF/UA validity), which
// Debian does not ship, the test checks the conformance the PDF declares in its XMP instead.
// The Office to PDF section of docs/conversion-and-previews.md lists the scenarios that do not apply here, and why.
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { EXTENSIONS, GOTENBERG_VERSION, optionsFromEnv, startSidecar, type RunningSidecar } from '../../sidecar/server'
import { zip } from '../../sidecar/zip'
import { startReceiver } from '../support/loopback-receiver'

const CONVERT = '/forms/libreoffice/convert'
const SLOW = 600_000
const scratch = mkdtempSync(join(tmpdir(), 'gotenberg-scenarios-'))
const fixtureBytes = (name: string) => readFileSync(join(inject('officeDocumentsDir'), name))

type Part = [field: string, value: string] | [field: string, name: string, bytes: Uint8Array]

function formOf(parts: readonly Part[]): FormData {
  const form = new FormData()
  for (const part of parts) {
    if (part.length === 2) form.append(part[0], part[1])
    else form.append(part[0], new Blob([part[2]]), part[1])
  }
  return form
}

/** A file part with a fixture's bytes, under the fixture's name or another. */
const file = (fixture: string, as = fixture, field = 'files'): Part => [field, as, fixtureBytes(fixture)]

let sidecar: RunningSidecar
let guarded: RunningSidecar
let rooted: RunningSidecar
let quiet: RunningSidecar
let outward: RunningSidecar
const logs: Record<string, unknown>[] = []
const quietLogs: Record<string, unknown>[] = []

async function post(parts: readonly Part[], headers: Record<string, string> = {}, on = () => sidecar, path = CONVERT) {
  return fetch(`${on().url}${path}`, { method: 'POST', body: formOf(parts), headers })
}

function save(bytes: ArrayBuffer | Uint8Array, name = `${Math.random()}.pdf`): string {
  const path = join(scratch, name)
  writeFileSync(path, Buffer.from(bytes as ArrayBuffer))
  return path
}

const run = (command: string, args: string[]) => execFileSync(command, args, { encoding: 'utf8' })
const pageCount = (path: string) => Number(/Pages:\s+(\d+)/.exec(run('pdfinfo', [path]))?.[1])
const pageText = (path: string, page: number) =>
  run('pdftotext', ['-f', String(page), '-l', String(page), '-layout', path, '-'])
/** The page's text in content order with the spaces and line breaks gone: turned text (watermarks) reads whole. */
const flatText = (path: string, page: number) =>
  run('pdftotext', ['-raw', '-f', String(page), '-l', String(page), path, '-']).replace(/\s+/g, '')
const imageCount = (path: string) => run('pdfimages', ['-list', path]).trim().split('\n').length - 2
const attachments = (path: string) => run('qpdf', ['--list-attachments', path])
const exif = (path: string) =>
  JSON.parse(run('exiftool', ['-j', '-a', '-XMP:all', '-PDF:all', path]))[0] as Record<string, unknown>
function isLandscape(path: string): boolean {
  const [, width, height] = /Page size:\s+([\d.]+) x ([\d.]+)/.exec(run('pdfinfo', [path]))!
  return Number(width) > Number(height)
}
function isEncrypted(path: string): boolean {
  try {
    return !run('qpdf', ['--show-encryption', path]).includes('File is not encrypted')
  } catch {
    return true // qpdf cannot open a PDF whose user password it was not given
  }
}

/** The response's files as Gotenberg's steps see them: the PDF itself, or each entry of the zip. */
async function filesOf(res: Response): Promise<Map<string, string>> {
  const disposition = res.headers.get('content-disposition') ?? ''
  const name = decodeURIComponent(
    /filename\*=UTF-8''([^;]+)/.exec(disposition)?.[1] ?? /filename="([^"]+)"/.exec(disposition)?.[1] ?? 'response',
  )
  const body = new Uint8Array(await res.arrayBuffer())
  const files = new Map<string, string>()
  if (res.headers.get('content-type') === 'application/zip') {
    const folder = join(scratch, `zip-${Math.random()}`)
    mkdirSync(folder)
    run('unzip', ['-q', save(body, `${Math.random()}.zip`), '-d', folder])
    files.set(name, folder)
    for (const entry of readdirSync(folder)) files.set(entry, join(folder, entry))
  } else files.set(name, save(body))
  return files
}

const pdfsIn = (files: Map<string, string>) => [...files.keys()].filter((name) => name.endsWith('.pdf'))
/** Gotenberg's "*_0.pdf": the one file whose name ends so. */
const matching = (files: Map<string, string>, suffix: string) =>
  [...files.entries()].find(([name]) => name.endsWith(suffix))![1]

beforeAll(async () => {
  const options = {
    ...optionsFromEnv({}),
    port: 0,
    processes: 1,
    queueSize: 32,
    log: (entry: Record<string, unknown>) => void logs.push(entry),
  }
  sidecar = await startSidecar(options)
  // The scenarios that start Gotenberg with flags get a server with the sidecar's equivalent setting, on the same LibreOffice.
  guarded = await startSidecar({ ...options, username: 'foo', password: 'bar' }, sidecar.pool, sidecar.chromium)
  rooted = await startSidecar({ ...options, rootPath: '/foo/' }, sidecar.pool, sidecar.chromium)
  quiet = await startSidecar(
    { ...options, healthLogging: false, log: (entry) => void quietLogs.push(entry) },
    sidecar.pool,
    sidecar.chromium,
  )
  // Webhooks and downloads reach the test's loopback servers only where 127.0.0.1 is allowed by name.
  outward = await startSidecar(
    {
      ...optionsFromEnv({ SIDECAR_ALLOWED_PRIVATE_HOSTS: '127.0.0.1' }),
      port: 0,
      processes: 1,
      queueSize: 32,
      log: (entry) => void logs.push(entry),
    },
    sidecar.pool,
    sidecar.chromium,
  )
}, SLOW)
afterAll(async () => {
  await Promise.all([guarded?.close(), rooted?.close(), quiet?.close(), outward?.close()])
  await sidecar?.close()
})

describe('Gotenberg 8 libreoffice_convert.feature', () => {
  it(
    'Scenario: POST /forms/libreoffice/convert (Single Document)',
    async () => {
      const res = await post([file('page_1.docx')], { 'Gotenberg-Output-Filename': 'foo' })
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe('application/pdf')
      const files = await filesOf(res)
      expect([...files.keys()]).toEqual(['foo.pdf'])
      expect(pageCount(files.get('foo.pdf')!)).toBe(1)
      expect(pageText(files.get('foo.pdf')!, 1)).toContain('Page 1')
    },
    SLOW,
  )

  it(
    'Scenario: POST /forms/libreoffice/convert (PowerPoint Show .ppsx)',
    async () => {
      const res = await post([file('slideshow.ppsx')], { 'Gotenberg-Output-Filename': 'foo' })
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe('application/pdf')
      expect(pageCount((await filesOf(res)).get('foo.pdf')!)).toBe(1)
    },
    SLOW,
  )

  it(
    'Scenario: POST /forms/libreoffice/convert (PowerPoint Show .ppsm)',
    async () => {
      // An OOXML show under the .ppsm name: LibreOffice reads it by content, as Gotenberg's comment says.
      const res = await post([file('slideshow.ppsx', 'slideshow.ppsm')], { 'Gotenberg-Output-Filename': 'foo' })
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe('application/pdf')
      expect(pageCount((await filesOf(res)).get('foo.pdf')!)).toBe(1)
    },
    SLOW,
  )

  it(
    'Scenario: POST /forms/libreoffice/convert (CSV Without Sheet Name Header)',
    async () => {
      const res = await post([['files', 'sheet.csv', new TextEncoder().encode('name,age\nAlice,30\nBob,25\n')]], {
        'Gotenberg-Output-Filename': 'foo',
      })
      expect(res.status).toBe(200)
      const pdf = (await filesOf(res)).get('foo.pdf')!
      expect(pageCount(pdf)).toBe(1)
      expect(pageText(pdf, 1)).toContain('Alice')
      expect(pageText(pdf, 1)).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/)
    },
    SLOW,
  )

  it(
    'Scenario: POST /forms/libreoffice/convert (Many Documents)',
    async () => {
      const res = await post([file('page_1.docx'), file('page_2.docx')], { 'Gotenberg-Output-Filename': 'foo' })
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe('application/zip')
      const files = await filesOf(res)
      expect(files.has('foo.zip')).toBe(true)
      expect(pdfsIn(files).sort()).toEqual(['page_1.docx.pdf', 'page_2.docx.pdf'])
      expect(pageCount(files.get('page_1.docx.pdf')!)).toBe(1)
      expect(pageText(files.get('page_1.docx.pdf')!, 1)).toContain('Page 1')
      expect(pageText(files.get('page_2.docx.pdf')!, 1)).toContain('Page 2')
    },
    SLOW,
  )

  it(
    'Scenario: POST /forms/libreoffice/convert (Non-basic Latin Characters)',
    async () => {
      const res = await post([file('page_1.docx', 'Special_Chars_ß.docx')], { 'Gotenberg-Output-Filename': 'foo' })
      expect(res.status).toBe(200)
      const pdf = (await filesOf(res)).get('foo.pdf')!
      expect(pageCount(pdf)).toBe(1)
      expect(pageText(pdf, 1)).toContain('Page 1')
    },
    SLOW,
  )

  it(
    'Scenario: POST /forms/libreoffice/convert (Protected)',
    async () => {
      const refused = await post([file('protected_page_1.docx')])
      expect(refused.status).toBe(400)
      expect(refused.headers.get('content-type')).toBe('text/plain; charset=UTF-8')
      expect(await refused.text()).toBe(
        'LibreOffice failed to process a document: a password may be required, or, if one has been given, it is invalid. In any case, the exact cause is uncertain.',
      )
      const opened = await post([file('protected_page_1.docx'), ['password', 'foo']])
      expect(opened.status).toBe(200)
      expect(opened.headers.get('content-type')).toBe('application/pdf')
      expect(pageText([...(await filesOf(opened)).values()][0]!, 1)).toContain('Page 1')
    },
    SLOW,
  )

  it(
    'Scenario: POST /forms/libreoffice/convert (Landscape)',
    async () => {
      const portrait = await filesOf(await post([file('page_1.docx')], { 'Gotenberg-Output-Filename': 'foo' }))
      expect(isLandscape(portrait.get('foo.pdf')!)).toBe(false)
      const landscape = await filesOf(
        await post([file('page_1.docx'), ['landscape', 'true']], { 'Gotenberg-Output-Filename': 'foo' }),
      )
      expect(isLandscape(landscape.get('foo.pdf')!)).toBe(true)
    },
    SLOW,
  )

  it(
    'Scenario: POST /forms/libreoffice/convert (Native Page Ranges - Single Document)',
    async () => {
      const res = await post([file('pages_3.docx'), ['nativePageRanges', '2-3']], {
        'Gotenberg-Output-Filename': 'foo',
      })
      expect(res.status).toBe(200)
      const pdf = (await filesOf(res)).get('foo.pdf')!
      expect(pageCount(pdf)).toBe(2)
      expect(pageText(pdf, 1)).toContain('Page 2')
      expect(pageText(pdf, 2)).toContain('Page 3')
    },
    SLOW,
  )

  it(
    'Scenario: POST /forms/libreoffice/convert (Native Page Ranges - Many Documents)',
    async () => {
      const res = await post([file('pages_3.docx'), file('pages_12.docx'), ['nativePageRanges', '2-3']], {
        'Gotenberg-Output-Filename': 'foo',
      })
      expect(res.headers.get('content-type')).toBe('application/zip')
      const files = await filesOf(res)
      expect(pdfsIn(files).sort()).toEqual(['pages_12.docx.pdf', 'pages_3.docx.pdf'])
      for (const name of ['pages_3.docx.pdf', 'pages_12.docx.pdf']) {
        expect(pageCount(files.get(name)!)).toBe(2)
        expect(pageText(files.get(name)!, 1)).toContain('Page 2')
        expect(pageText(files.get(name)!, 2)).toContain('Page 3')
      }
    },
    SLOW,
  )

  it(
    'Scenario: POST /forms/libreoffice/convert (Bad Request)',
    async () => {
      const invalid: [string, string][] = [
        ...[
          'landscape',
          'exportFormFields',
          'allowDuplicateFieldNames',
          'exportBookmarks',
          'exportBookmarksToPdfDestination',
          'exportPlaceholders',
          'exportNotes',
          'exportNotesPages',
          'exportOnlyNotesPages',
          'exportNotesInMargin',
          'convertOooTargetToPdfTarget',
          'exportLinksRelativeFsys',
          'exportHiddenSlides',
          'skipEmptyPages',
          'addOriginalDocumentAsStream',
          'singlePageSheets',
          'firstPageOnLeft',
          'resizeWindowToInitialPage',
          'centerWindow',
          'openInFullScreenMode',
          'displayPDFDocumentTitle',
          'hideViewerMenubar',
          'hideViewerToolbar',
          'hideViewerWindowControls',
          'useTransitionEffects',
          'losslessImageCompression',
          'reduceImageResolution',
        ].map((name): [string, string] => [name, 'foo']),
        ['initialView', '5'],
        ['initialPage', '-1'],
        ['magnification', '9'],
        ['zoom', '-1'],
        ['pageLayout', '7'],
        ['openBookmarkLevels', '15'],
        ['quality', '-1'],
        ['maxImageResolution', '10'],
      ]
      const all = await post(invalid)
      expect(all.status).toBe(400)
      expect(all.headers.get('content-type')).toBe('text/plain; charset=UTF-8')
      const lines = (await all.text()).split('\n')
      expect(lines[0]).toBe(
        `Invalid form data: no form file found for extensions: [${EXTENSIONS.map((e) => `.${e}`).join(' ')}]`,
      )
      expect(lines).toContain(
        `form field 'landscape' is invalid (got 'foo', resulting to strconv.ParseBool: parsing "foo": invalid syntax)`,
      )
      expect(lines).toContain(`form field 'initialView' is invalid (got '5', resulting to value is not 0, 1 or 2)`)
      expect(lines).toContain(`form field 'initialPage' is invalid (got '-1', resulting to value is inferior to 1)`)
      expect(lines).toContain(
        `form field 'magnification' is invalid (got '9', resulting to value is not 0, 1, 2, 3 or 4)`,
      )
      expect(lines).toContain(`form field 'pageLayout' is invalid (got '7', resulting to value is not 0, 1, 2 or 3)`)
      expect(lines).toContain(
        `form field 'openBookmarkLevels' is invalid (got '15', resulting to value is not -1 or between 1 and 10)`,
      )
      expect(lines).toContain(`form field 'quality' is invalid (got '-1', resulting to value is inferior to 1)`)
      expect(lines).toContain(
        `form field 'maxImageResolution' is invalid (got '10', resulting to value is not 75, 150, 300, 600 or 1200)`,
      )
      // One line for every invalid field: none accepted and ignored.
      expect(lines).toHaveLength(invalid.length + 1)

      const cases: [Part[], string][] = [
        [
          [file('page_1.docx'), ['nativePageRanges', 'foo']],
          "LibreOffice failed to process a document: possible causes include malformed page ranges 'foo' (nativePageRanges), or, if a password has been provided, it may not be required. In any case, the exact cause is uncertain.",
        ],
        [
          [file('page_1.docx'), ['password', 'foo']],
          "LibreOffice failed to process a document: possible causes include malformed page ranges '' (nativePageRanges), or, if a password has been provided, it may not be required. In any case, the exact cause is uncertain.",
        ],
        [
          [file('protected_page_1.docx'), ['password', 'bar']],
          'LibreOffice failed to process a document: a password may be required, or, if one has been given, it is invalid. In any case, the exact cause is uncertain.',
        ],
        [
          [file('page_1.docx'), file('page_2.docx'), ['merge', 'foo']],
          `Invalid form data: form field 'merge' is invalid (got 'foo', resulting to strconv.ParseBool: parsing "foo": invalid syntax)`,
        ],
        [
          [file('pages_3.docx'), ['splitMode', 'foo'], ['splitSpan', '2']],
          "Invalid form data: form field 'splitMode' is invalid (got 'foo', resulting to wrong value, expected either 'intervals' or 'pages')",
        ],
        [
          [file('pages_3.docx'), ['splitMode', 'intervals'], ['splitSpan', 'foo']],
          `Invalid form data: form field 'splitSpan' is invalid (got 'foo', resulting to strconv.Atoi: parsing "foo": invalid syntax)`,
        ],
        [
          [file('pages_3.docx'), ['splitMode', 'pages'], ['splitSpan', 'foo']],
          "The requested split mode is not supported, or no PDF engine could process it. Valid modes: 'intervals', 'pages'.",
        ],
        [
          [file('pages_3.docx'), ['pdfa', 'foo']],
          "The PDF format 'foo' is not supported. Valid formats include PDF/A-1b, PDF/A-2b, PDF/A-3b, and PDF/UA.",
        ],
        [
          [file('page_1.docx'), ['pdfua', 'foo']],
          `Invalid form data: form field 'pdfua' is invalid (got 'foo', resulting to strconv.ParseBool: parsing "foo": invalid syntax)`,
        ],
      ]
      for (const [parts, message] of cases) {
        const res = await post(parts)
        expect(res.status, message).toBe(400)
        expect(res.headers.get('content-type')).toBe('text/plain; charset=UTF-8')
        expect(await res.text()).toBe(message)
      }
      const metadata = await post([file('page_1.docx'), ['metadata', 'foo']])
      expect(metadata.status).toBe(400)
      // Go's JSON error text differs from JavaScript's; the meaning is the same.
      expect(await metadata.text()).toMatch(
        /^Invalid form data: form field 'metadata' is invalid \(got 'foo', resulting to unmarshal metadata: .+\)$/,
      )
    },
    SLOW,
  )

  it(
    'Scenario: POST /forms/libreoffice/convert (Merge)',
    async () => {
      // Sent in the other order: Gotenberg merges in file-name order.
      const res = await post([file('page_2.docx'), file('page_1.docx'), ['merge', 'true']], {
        'Gotenberg-Output-Filename': 'foo',
      })
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe('application/pdf')
      const pdf = (await filesOf(res)).get('foo.pdf')!
      expect(pageCount(pdf)).toBe(2)
      expect(pageText(pdf, 1)).toContain('Page 1')
      expect(pageText(pdf, 2)).toContain('Page 2')
    },
    SLOW,
  )

  it(
    'Scenario: POST /forms/libreoffice/convert (Merge & Split)',
    async () => {
      const res = await post([
        file('page_1.docx'),
        file('page_2.docx'),
        ['merge', 'true'],
        ['splitMode', 'intervals'],
        ['splitSpan', '1'],
      ])
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe('application/zip')
      const files = await filesOf(res)
      expect(pdfsIn(files)).toHaveLength(2)
      expect(pageCount(matching(files, '_0.pdf'))).toBe(1)
      expect(pageText(matching(files, '_0.pdf'), 1)).toContain('Page 1')
      expect(pageText(matching(files, '_1.pdf'), 1)).toContain('Page 2')
    },
    SLOW,
  )

  it(
    'Scenario: POST /forms/libreoffice/convert (Split Intervals)',
    async () => {
      const res = await post([file('pages_3.docx'), ['splitMode', 'intervals'], ['splitSpan', '2']])
      expect(res.headers.get('content-type')).toBe('application/zip')
      const files = await filesOf(res)
      expect(pdfsIn(files).sort()).toEqual(['pages_3.docx_0.pdf', 'pages_3.docx_1.pdf'])
      expect(pageCount(files.get('pages_3.docx_0.pdf')!)).toBe(2)
      expect(pageCount(files.get('pages_3.docx_1.pdf')!)).toBe(1)
      expect(pageText(files.get('pages_3.docx_0.pdf')!, 2)).toContain('Page 2')
      expect(pageText(files.get('pages_3.docx_1.pdf')!, 1)).toContain('Page 3')
    },
    SLOW,
  )

  it(
    'Scenario: POST /forms/libreoffice/convert (Split Pages)',
    async () => {
      const res = await post([file('pages_3.docx'), ['splitMode', 'pages'], ['splitSpan', '2-']])
      expect(res.headers.get('content-type')).toBe('application/zip')
      const files = await filesOf(res)
      expect(pdfsIn(files).sort()).toEqual(['pages_3.docx_0.pdf', 'pages_3.docx_1.pdf'])
      expect(pageText(files.get('pages_3.docx_0.pdf')!, 1)).toContain('Page 2')
      expect(pageText(files.get('pages_3.docx_1.pdf')!, 1)).toContain('Page 3')
    },
    SLOW,
  )

  it(
    'Scenario: POST /forms/libreoffice/convert (Split Pages & Unify)',
    async () => {
      const res = await post([
        file('pages_3.docx'),
        ['splitMode', 'pages'],
        ['splitSpan', '2-'],
        ['splitUnify', 'true'],
      ])
      expect(res.headers.get('content-type')).toBe('application/pdf')
      const files = await filesOf(res)
      expect([...files.keys()]).toEqual(['pages_3.docx.pdf'])
      expect(pageCount(files.get('pages_3.docx.pdf')!)).toBe(2)
      expect(pageText(files.get('pages_3.docx.pdf')!, 1)).toContain('Page 2')
      expect(pageText(files.get('pages_3.docx.pdf')!, 2)).toContain('Page 3')
    },
    SLOW,
  )

  it(
    'Scenario: POST /forms/libreoffice/convert (Split Many PDFs - Lot of Pages)',
    async () => {
      const res = await post([
        file('pages_12.docx'),
        file('pages_3.docx'),
        ['splitMode', 'intervals'],
        ['splitSpan', '1'],
      ])
      expect(res.headers.get('content-type')).toBe('application/zip')
      const files = await filesOf(res)
      expect(pdfsIn(files).sort()).toEqual(
        [
          ...Array.from({ length: 12 }, (_, i) => `pages_12.docx_${i}.pdf`),
          ...[0, 1, 2].map((i) => `pages_3.docx_${i}.pdf`),
        ].sort(),
      )
      expect(pageText(files.get('pages_3.docx_2.pdf')!, 1)).toContain('Page 3')
      expect(pageText(files.get('pages_12.docx_11.pdf')!, 1)).toContain('Page 12')
      expect(pageCount(files.get('pages_12.docx_0.pdf')!)).toBe(1)
    },
    SLOW,
  )

  /** The PDF/A part and conformance a PDF declares in its XMP. With PDF/UA LibreOffice tags the PDF and declares
   * level A, a superset of B: veraPDF's PDF/A-1b check, Gotenberg's, accepts it. */
  const conformance = (path: string) => {
    const tags = exif(path)
    return { pdfa: `${tags.Part ?? ''}${tags.Conformance ?? ''}`.replace(/^(\d)A$/, '$1B') }
  }

  it(
    'Scenario: POST /forms/libreoffice/convert (PDF/A-1b & PDF/UA-1)',
    async () => {
      const res = await post([file('page_1.docx'), ['pdfa', 'PDF/A-1b'], ['pdfua', 'true']])
      expect(res.status).toBe(200)
      const pdf = [...(await filesOf(res)).values()][0]!
      expect(conformance(pdf).pdfa).toBe('1B')
      expect(run('exiftool', ['-XMP-pdfuaid:part', '-s3', pdf]).trim()).toBe('1')
    },
    SLOW,
  )

  it(
    'Scenario: POST /forms/libreoffice/convert (Split & PDF/A-1b & PDF/UA-1)',
    async () => {
      const res = await post([
        file('pages_3.docx'),
        ['splitMode', 'intervals'],
        ['splitSpan', '2'],
        ['pdfa', 'PDF/A-1b'],
        ['pdfua', 'true'],
      ])
      const files = await filesOf(res)
      expect(pdfsIn(files).sort()).toEqual(['pages_3.docx_0.pdf', 'pages_3.docx_1.pdf'])
      expect(pageCount(files.get('pages_3.docx_0.pdf')!)).toBe(2)
      expect(pageText(files.get('pages_3.docx_1.pdf')!, 1)).toContain('Page 3')
      for (const name of pdfsIn(files)) {
        expect(conformance(files.get(name)!).pdfa).toBe('1B')
        expect(run('exiftool', ['-XMP-pdfuaid:part', '-s3', files.get(name)!]).trim()).toBe('1')
      }
    },
    SLOW,
  )

  const METADATA = {
    Author: 'Julien Neuhart',
    Copyright: 'Julien Neuhart',
    CreateDate: '2006-09-18T16:27:50-04:00',
    Creator: 'Gotenberg',
    Keywords: ['first', 'second'],
    Marked: true,
    ModDate: '2006-09-18T16:27:50-04:00',
    PDFVersion: 1.7,
    Producer: 'Gotenberg',
    Subject: 'Sample',
    Title: 'Sample',
    Trapped: 'Unknown',
  }
  const readBack = (path: string) =>
    JSON.parse(
      run('exiftool', [
        '-j',
        '-Author',
        '-Copyright',
        '-CreateDate',
        '-Creator',
        '-Keywords',
        '-Marked',
        '-ModDate',
        '-Producer',
        '-Subject',
        '-Title',
        '-Trapped',
        path,
      ]),
    )[0]

  it(
    'Scenario: POST /forms/libreoffice/convert (Metadata)',
    async () => {
      const res = await post([file('page_1.docx'), ['metadata', JSON.stringify(METADATA)]], {
        'Gotenberg-Output-Filename': 'foo',
      })
      expect(res.status).toBe(200)
      const tags = readBack((await filesOf(res)).get('foo.pdf')!)
      expect(tags).toMatchObject({
        Author: 'Julien Neuhart',
        Copyright: 'Julien Neuhart',
        CreateDate: '2006:09:18 16:27:50-04:00',
        Creator: 'Gotenberg',
        Marked: true,
        ModDate: '2006:09:18 16:27:50-04:00',
        Producer: 'Gotenberg',
        Subject: 'Sample',
        Title: 'Sample',
        Trapped: 'Unknown',
      })
      expect(String(tags.Keywords)).toMatch(/first.*second/)
    },
    SLOW,
  )

  /** Gotenberg's "should be flatten": no interactive form and no annotation left. */
  const isFlat = (path: string) => {
    const json = JSON.parse(run('qpdf', ['--json', '--json-key=acroform', path]))
    const uncompressed = execFileSync('qpdf', ['--qdf', '--object-streams=disable', path, '-']).toString('latin1')
    return json.acroform.fields.length === 0 && !uncompressed.includes('/Annots')
  }

  it(
    'Scenario: POST /forms/libreoffice/convert (Flatten)',
    async () => {
      const res = await post([file('page_1.docx'), ['flatten', 'true']])
      expect(res.status).toBe(200)
      expect(isFlat([...(await filesOf(res)).values()][0]!)).toBe(true)
    },
    SLOW,
  )

  it(
    'Scenario: POST /forms/libreoffice/convert (Encrypt - user password only)',
    async () => {
      const res = await post([file('page_1.docx'), ['userPassword', 'foo']])
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe('application/pdf')
      const pdf = [...(await filesOf(res)).values()][0]!
      expect(isEncrypted(pdf)).toBe(true)
      expect(run('pdftotext', ['-upw', 'foo', pdf, '-'])).toContain('Page 1')
    },
    SLOW,
  )

  it(
    'Scenario: POST /forms/libreoffice/convert (Encrypt - both user and owner passwords)',
    async () => {
      const res = await post([file('page_1.docx'), ['userPassword', 'foo'], ['ownerPassword', 'bar']])
      expect(res.status).toBe(200)
      const pdf = [...(await filesOf(res)).values()][0]!
      expect(isEncrypted(pdf)).toBe(true)
      expect(run('qpdf', ['--password=bar', '--show-encryption', pdf])).toMatch(/R = 6/)
    },
    SLOW,
  )

  it(
    'Scenario: POST /forms/libreoffice/convert (Watermark - Text)',
    async () => {
      const res = await post([
        file('page_1.docx'),
        ['watermarkSource', 'text'],
        ['watermarkExpression', 'CONFIDENTIAL'],
      ])
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe('application/pdf')
      const pdf = [...(await filesOf(res)).values()][0]!
      expect(flatText(pdf, 1)).toContain('CONFIDENTIAL')
      expect(pageText(pdf, 1)).toContain('Page 1')
    },
    SLOW,
  )

  it(
    'Scenario: POST /forms/libreoffice/convert (Stamp - Text)',
    async () => {
      const res = await post([file('page_1.docx'), ['stampSource', 'text'], ['stampExpression', 'DRAFT']])
      expect(res.status).toBe(200)
      expect(flatText([...(await filesOf(res)).values()][0]!, 1)).toContain('DRAFT')
    },
    SLOW,
  )

  it(
    'Scenario: POST /forms/libreoffice/convert (Rotate 90)',
    async () => {
      const res = await post([file('page_1.docx'), ['rotateAngle', '90']])
      expect(res.status).toBe(200)
      expect(run('pdfinfo', [[...(await filesOf(res)).values()][0]!])).toMatch(/Page rot:\s+90/)
    },
    SLOW,
  )

  it(
    'Scenario: POST /forms/libreoffice/convert (Native Watermark - Text)',
    async () => {
      const res = await post([file('page_1.docx'), ['nativeWatermarkText', 'CONFIDENTIAL']])
      expect(res.status).toBe(200)
      expect(flatText([...(await filesOf(res)).values()][0]!, 1)).toContain('CONFIDENTIAL')
    },
    SLOW,
  )

  it(
    'Scenario: POST /forms/libreoffice/convert (Native Watermark - Text with Options)',
    async () => {
      const res = await post([
        file('page_1.docx'),
        ['nativeWatermarkText', 'DRAFT'],
        ['nativeWatermarkColor', '16711680'],
        ['nativeWatermarkFontHeight', '48'],
        ['nativeWatermarkRotateAngle', '450'],
        ['nativeWatermarkFontName', 'Courier'],
      ])
      expect(res.status).toBe(200)
      expect(flatText([...(await filesOf(res)).values()][0]!, 1)).toContain('DRAFT')
    },
    SLOW,
  )

  it(
    'Scenario: POST /forms/libreoffice/convert (Native Watermark - Tiled)',
    async () => {
      const res = await post([file('page_1.docx'), ['nativeTiledWatermarkText', 'CONFIDENTIAL']])
      expect(res.status).toBe(200)
      expect(flatText([...(await filesOf(res)).values()][0]!, 1)).toContain('CONFIDENTIAL')
    },
    SLOW,
  )

  const EMBED_1 = new TextEncoder().encode('<?xml version="1.0"?><invoice><number>1</number></invoice>\n')
  const EMBED_2 = new TextEncoder().encode('<?xml version="1.0"?><invoice><number>2</number></invoice>\n')

  it(
    'Scenario: POST /forms/libreoffice/convert (Embeds)',
    async () => {
      const res = await post(
        [file('page_1.docx'), ['embeds', 'embed_1.xml', EMBED_1], ['embeds', 'embed_2.xml', EMBED_2]],
        { 'Gotenberg-Output-Filename': 'foo' },
      )
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe('application/pdf')
      const files = await filesOf(res)
      expect([...files.keys()]).toEqual(['foo.pdf'])
      expect(attachments(files.get('foo.pdf')!)).toMatch(/embed_1\.xml[\s\S]*embed_2\.xml/)
    },
    SLOW,
  )

  /** The attachments the catalog's /AF array lists, each with its /AFRelationship (qpdf's JSON of the objects). */
  function associatedFiles(path: string): Record<string, string> {
    const objects = JSON.parse(run('qpdf', ['--json-output=2', '--json-key=qpdf', '--json-stream-data=none', path]))
      .qpdf[1]
    const catalog = objects[`obj:${objects.trailer.value['/Root']}`].value
    return Object.fromEntries(
      (catalog['/AF'] ?? []).map((ref: string) => [
        objects[`obj:${ref}`].value['/UF'].replace(/^u:/, ''),
        objects[`obj:${ref}`].value['/AFRelationship'],
      ]),
    )
  }

  it(
    'Scenario: POST /forms/libreoffice/convert (Factur-X / ZUGFeRD)',
    async () => {
      const res = await post(
        [file('page_1.docx'), ['facturxXml', 'embed_1.xml', EMBED_1], ['facturxConformanceLevel', 'EN 16931']],
        { 'Gotenberg-Output-Filename': 'foo' },
      )
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe('application/pdf')
      const files = await filesOf(res)
      expect([...files.keys()]).toEqual(['foo.pdf'])
      const pdf = files.get('foo.pdf')!
      // No pdfa field: Factur-X makes it PDF/A-3b (veraPDF is not in Debian: the declared conformance is checked).
      expect(conformance(pdf).pdfa).toBe('3B')
      expect(associatedFiles(pdf)).toEqual({ 'factur-x.xml': '/Alternative' })
      expect(attachments(pdf)).toContain('factur-x.xml')
      expect(run('qpdf', ['--show-attachment=factur-x.xml', pdf])).toBe(new TextDecoder().decode(EMBED_1))
      expect(exif(pdf)).toMatchObject({
        ConformanceLevel: 'EN 16931',
        DocumentType: 'INVOICE',
        DocumentFileName: 'factur-x.xml',
        Version: 1,
        SchemasPrefix: 'fx',
      })
      expect(run('qpdf', ['--check', pdf])).toContain('No syntax or stream encoding errors found')
      // The half-specified request of Gotenberg's "POST /forms/pdfengines/factur-x (Bad Request)" is a 400 here too.
      const half = await post([file('page_1.docx'), ['facturxConformanceLevel', 'EN 16931']])
      expect(half.status).toBe(400)
      expect(await half.text()).toContain("form field 'facturxXml' is required")
    },
    SLOW,
  )

  it(
    'Scenario: POST /forms/libreoffice/convert (PDF/A-3b & PDF/UA-1 & Metadata & Watermark & Stamp & Rotate & Flatten & Embeds)',
    async () => {
      const res = await post(
        [
          file('page_1.docx'),
          ['pdfa', 'PDF/A-3b'],
          ['pdfua', 'true'],
          ['metadata', JSON.stringify(METADATA)],
          ['watermarkSource', 'text'],
          ['watermarkExpression', 'CONFIDENTIAL'],
          ['stampSource', 'text'],
          ['stampExpression', 'DRAFT'],
          ['rotateAngle', '90'],
          ['flatten', 'true'],
          ['embeds', 'embed_1.xml', EMBED_1],
          ['embeds', 'embed_2.xml', EMBED_2],
        ],
        { 'Gotenberg-Output-Filename': 'foo' },
      )
      expect(res.status).toBe(200)
      const pdf = (await filesOf(res)).get('foo.pdf')!
      expect(conformance(pdf).pdfa).toBe('3B')
      expect(isFlat(pdf)).toBe(true)
      expect(attachments(pdf)).toMatch(/embed_1\.xml[\s\S]*embed_2\.xml/)
      expect(readBack(pdf)).toMatchObject({
        Author: 'Julien Neuhart',
        Copyright: 'Julien Neuhart',
        Creator: 'Gotenberg',
        Marked: true,
        Producer: 'Gotenberg',
        Subject: 'Sample',
        Title: 'Sample',
        Trapped: 'Unknown',
      })
      expect(run('pdfinfo', [pdf])).toMatch(/Page rot:\s+90/)
      expect(flatText(pdf, 1)).toMatch(/CONFIDENTIAL|DRAFT/)
    },
    SLOW,
  )

  it(
    'Scenario: POST /forms/libreoffice/convert (Gotenberg Trace)',
    async () => {
      const res = await post([file('page_1.docx')], { 'Gotenberg-Trace': 'forms_libreoffice_convert' })
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe('application/pdf')
      expect(res.headers.get('gotenberg-trace')).toBe('forms_libreoffice_convert')
      await res.arrayBuffer()
      expect(logs.some((entry) => entry.correlation_id === 'forms_libreoffice_convert')).toBe(true)
    },
    SLOW,
  )

  it(
    'Scenario: POST /forms/libreoffice/convert (Download From) — SIDECAR_ALLOWED_PRIVATE_HOSTS=127.0.0.1',
    async () => {
      // Gotenberg's "static server" serves testdata/page_1.docx; the sidecar fetches it with the extra header.
      const server = await startReceiver((request, response) => {
        if (request.path !== '/static/testdata/page_1.docx') return void response.writeHead(404).end()
        response
          .writeHead(200, {
            'content-type': 'application/octet-stream',
            'content-disposition': 'attachment; filename="page_1.docx"',
          })
          .end(fixtureBytes('page_1.docx'))
      })
      try {
        const res = await post(
          [
            [
              'downloadFrom',
              JSON.stringify([
                { url: `${server.url}/static/testdata/page_1.docx`, extraHttpHeaders: { 'X-Foo': 'bar' } },
              ]),
            ],
          ],
          {},
          () => outward,
        )
        expect(res.status).toBe(200)
        expect((await server.request('/static/testdata/page_1.docx')).headers['x-foo']).toBe('bar')
        expect(res.headers.get('content-type')).toBe('application/pdf')
        expect(pageText(save(await res.arrayBuffer()), 1)).toContain('Page 1')
      } finally {
        await server.close()
      }
    },
    SLOW,
  )

  it(
    'Scenario: POST /forms/libreoffice/convert (Webhook) — SIDECAR_ALLOWED_PRIVATE_HOSTS=127.0.0.1',
    async () => {
      // Gotenberg's "webhook server": /webhook takes the result, /webhook/error an error.
      const server = await startReceiver()
      try {
        const res = await post(
          [file('page_1.docx')],
          {
            'Gotenberg-Output-Filename': 'foo',
            'Gotenberg-Webhook-Url': `${server.url}/webhook`,
            'Gotenberg-Webhook-Error-Url': `${server.url}/webhook/error`,
          },
          () => outward,
        )
        expect(res.status).toBe(204)
        expect(await res.text()).toBe('')
        const delivery = await server.request('/webhook')
        expect(delivery.method).toBe('POST')
        expect(delivery.headers['content-type']).toBe('application/pdf')
        expect(delivery.headers['content-disposition']).toBe('attachment; filename="foo.pdf"')
        const pdf = save(delivery.body, 'webhook-foo.pdf')
        expect(pageCount(pdf)).toBe(1)
        expect(pageText(pdf, 1)).toContain('Page 1')
        expect(server.received.filter((entry) => entry.path === '/webhook/error')).toEqual([])
      } finally {
        await server.close()
      }
    },
    SLOW,
  )

  it(
    'Scenario: POST /forms/libreoffice/convert (Basic Auth) — SIDECAR_USERNAME/SIDECAR_PASSWORD',
    async () => {
      const res = await post([file('page_1.docx')], {}, () => guarded)
      expect(res.status).toBe(401)
    },
    SLOW,
  )

  it(
    'Scenario: POST /foo/forms/libreoffice/convert (Root Path) — SIDECAR_ROOT_PATH',
    async () => {
      const res = await post([file('page_1.docx')], {}, () => rooted, `/foo${CONVERT}`)
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe('application/pdf')
      expect((await post([file('page_1.docx')], {}, () => rooted)).status).toBe(404)
    },
    SLOW,
  )

  it(
    'Scenario: POST /forms/libreoffice/convert (stampSource=pdf without uploaded stamp file => 400)',
    async () => {
      const res = await post([file('page_1.docx'), ['stampSource', 'pdf'], ['stampExpression', '/etc/hostname']])
      expect(res.status).toBe(400)
      expect(await res.text()).toBe('Invalid form data: a stamp file is required for image or pdf source')
    },
    SLOW,
  )

  it(
    'Scenario: POST /forms/libreoffice/convert (watermarkSource=pdf without uploaded watermark file => 400)',
    async () => {
      const res = await post([
        file('page_1.docx'),
        ['watermarkSource', 'pdf'],
        ['watermarkExpression', '/etc/hostname'],
      ])
      expect(res.status).toBe(400)
      expect(await res.text()).toBe('Invalid form data: a watermark file is required for image or pdf source')
    },
    SLOW,
  )

  it(
    'Scenario: POST /forms/libreoffice/convert (Long Filename)',
    async () => {
      const long =
        'Longitudinell_jämförelse_mellan_laserkirurgi_och_strålbehandling_gällande_röstkvalitet_och_självskattad_kommunikation_upp_till_två_år_efter_tidig_stämbandscancer_i_ett_randomiserat_kontrollerat_försök.docx'
      const res = await post([file('page_1.docx', long)], { 'Gotenberg-Output-Filename': 'foo' })
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe('application/pdf')
      expect(pageCount((await filesOf(res)).get('foo.pdf')!)).toBe(1)
      // The extension survives the shortening: a long .csv name still converts as a sheet, through Calc.
      const csv = await post([['files', `${'x'.repeat(240)}.csv`, new TextEncoder().encode('name,age\nAlice,30\n')]], {
        'Gotenberg-Output-Filename': 'foo',
      })
      expect(csv.status).toBe(200)
      expect(pageText((await filesOf(csv)).get('foo.pdf')!, 1)).toMatch(/Alice\s+30/)
    },
    SLOW,
  )

  const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAgAAAAICAIAAABLbSncAAAAEklEQVR4nGP4z8CAFWEXHbQSACj/P8Fu7N9hAAAAAElFTkSuQmCC'
  const fodt = (frame: string) =>
    new TextEncoder().encode(`<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0" xmlns:xlink="http://www.w3.org/1999/xlink" office:version="1.3" office:mimetype="application/vnd.oasis.opendocument.text">
 <office:body><office:text><text:p>Picture: <draw:frame draw:name="p" text:anchor-type="as-char" svg:width="2cm" svg:height="2cm">${frame}</draw:frame></text:p></office:text></office:body>
</office:document>
`)

  it(
    'Scenario: POST /forms/libreoffice/convert (Embedded Image Survives)',
    async () => {
      const res = await post(
        [
          [
            'files',
            'embedded-image.fodt',
            fodt(`<draw:image><office:binary-data>${PNG}</office:binary-data></draw:image>`),
          ],
        ],
        { 'Gotenberg-Output-Filename': 'foo' },
      )
      expect(res.status).toBe(200)
      expect(imageCount((await filesOf(res)).get('foo.pdf')!)).toBe(1)
    },
    SLOW,
  )

  it(
    'Scenario: POST /forms/libreoffice/convert (Linked External Resource Blocked)',
    async () => {
      const picture = save(Buffer.from(PNG, 'base64'), 'linked.png')
      const res = await post(
        [
          [
            'files',
            'linked-external.fodt',
            fodt(
              `<draw:image xlink:href="file://${picture}" xlink:type="simple" xlink:show="embed" xlink:actuate="onLoad"/>`,
            ),
          ],
        ],
        { 'Gotenberg-Output-Filename': 'foo' },
      )
      expect(res.status).toBe(200)
      expect(imageCount((await filesOf(res)).get('foo.pdf')!)).toBe(0)
    },
    SLOW,
  )

  it(
    'Scenario: POST /forms/libreoffice/convert (SinglePageSheets renders a scrolled workbook in full)',
    async () => {
      // tall.xlsx saved as if scrolled to row 37, as Gotenberg's singlepagesheets-scrolled.xlsx is.
      const folder = join(scratch, `scrolled-${Math.random()}`)
      mkdirSync(folder)
      run('unzip', ['-q', join(inject('officeDocumentsDir'), 'tall.xlsx'), '-d', folder])
      const sheet = join(folder, 'xl', 'worksheets', 'sheet1.xml')
      const xml = readFileSync(sheet, 'utf8')
      writeFileSync(
        sheet,
        / topLeftCell="[^"]*"/.test(xml)
          ? xml.replace(/ topLeftCell="[^"]*"/, ' topLeftCell="A37"')
          : xml.replace('<sheetView ', '<sheetView topLeftCell="A37" '),
      )
      expect(readFileSync(sheet, 'utf8')).toContain('topLeftCell="A37"')
      execFileSync('zip', ['-q', '-r', '../scrolled.xlsx', '.'], { cwd: folder })
      const res = await post(
        [
          ['files', 'singlepagesheets-scrolled.xlsx', readFileSync(join(folder, '..', 'scrolled.xlsx'))],
          ['singlePageSheets', 'true'],
        ],
        { 'Gotenberg-Output-Filename': 'foo' },
      )
      expect(res.status).toBe(200)
      const pdf = (await filesOf(res)).get('foo.pdf')!
      expect(pageCount(pdf)).toBe(1)
      expect(pageText(pdf, 1)).toContain('Meteor')
    },
    SLOW,
  )

  // Gotenberg's variables.docx and variables_table.docx, written here as the smallest WordprocessingML packages:
  // "${company_name}" is split over three runs, as Word splits what is typed in pieces.
  const wordDocument = (body: string) =>
    zip([
      {
        name: '[Content_Types].xml',
        bytes: new TextEncoder().encode(
          '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
        ),
        deflate: true,
      },
      {
        name: '_rels/.rels',
        bytes: new TextEncoder().encode(
          '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>',
        ),
        deflate: true,
      },
      {
        name: 'word/document.xml',
        bytes: new TextEncoder().encode(
          `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>${body}</w:body></w:document>`,
        ),
        deflate: true,
      },
    ])
  const paragraph = (...runs: string[]) =>
    `<w:p>${runs.map((text) => `<w:r><w:t xml:space="preserve">${text}</w:t></w:r>`).join('')}</w:p>`
  const cell = (text: string) => `<w:tc><w:tcPr><w:tcW w:w="3000" w:type="dxa"/></w:tcPr>${paragraph(text)}</w:tc>`
  const row = (...texts: string[]) => `<w:tr>${texts.map(cell).join('')}</w:tr>`
  // biome-ignore-start lint/suspicious/noTemplateCurlyInString: Gotenberg's ${name} placeholders, written into the templates
  const VARIABLES_DOCX = wordDocument(
    paragraph('Company: ', '${comp', 'any_na', 'me}') +
      paragraph('Address: ${legal_address} (registered)') +
      paragraph('Contract ${contract_number}') +
      paragraph('Unknown: ${not_provided}'),
  )
  const VARIABLES_TABLE_DOCX = wordDocument(
    paragraph('Order for ${company}') +
      `<w:tbl><w:tblPr><w:tblW w:w="9000" w:type="dxa"/></w:tblPr><w:tblGrid><w:gridCol w:w="3000"/><w:gridCol w:w="3000"/><w:gridCol w:w="3000"/></w:tblGrid>${row('Item', 'Qty', 'Price')}${row('${items._index} ${items.name}', '${items.qty} pcs', '${items.price} ${currency}')}${row('Total', '', '${total} ${currency}')}</w:tbl>` +
      paragraph('Outside a table: ${items.name}'),
  )
  // biome-ignore-end lint/suspicious/noTemplateCurlyInString: Gotenberg's ${name} placeholders, written into the templates
  const variablesDocx = (name = 'variables.docx'): Part => ['files', name, VARIABLES_DOCX]
  const variablesTableDocx = (): Part => ['files', 'variables_table.docx', VARIABLES_TABLE_DOCX]

  it(
    'Scenario: POST /forms/libreoffice/convert (Variables)',
    async () => {
      const variables = {
        company_name: 'Smith & Sons <Ltd>',
        legal_address: '221B Baker Street\nLondon NW1 6XE',
        contract_number: 'C-2026-042',
      }
      const res = await post([variablesDocx(), ['variables', JSON.stringify(variables)]], {
        'Gotenberg-Output-Filename': 'foo',
      })
      expect(res.status).toBe(200)
      const text = pageText((await filesOf(res)).get('foo.pdf')!, 1)
      expect(text).toMatch(/Company: Smith & Sons <Ltd>/)
      expect(text).toMatch(/Address: 221B Baker Street\s*\n\s*London NW1 6XE \(registered\)/)
      expect(text).toMatch(/Contract C-2026-042/)
      expect(text).toMatch(/Unknown: \$\{not_provided\}/)
      expect(text).not.toMatch(/legal_address/)
    },
    SLOW,
  )

  it(
    'Scenario: POST /forms/libreoffice/convert (Variables - Bad Request)',
    async () => {
      const notJson = await post([variablesDocx(), ['variables', 'foo']])
      expect(notJson.status).toBe(400)
      expect(notJson.headers.get('content-type')).toBe('text/plain; charset=UTF-8')
      expect(await notJson.text()).toContain("form field 'variables' is invalid")
      const badName = await post([variablesDocx(), ['variables', '{"legal address":"foo"}']])
      expect(badName.status).toBe(400)
      expect(badName.headers.get('content-type')).toBe('text/plain; charset=UTF-8')
      expect(await badName.text()).toContain(
        `form field 'variables' is invalid (got '{"legal address":"foo"}', resulting to variable name 'legal address' is invalid: use letters, digits, '_', '.' or '-', starting with a letter or '_')`,
      )
      const notWord = await post([
        file('page_1.docx'),
        ['files', 'sheet.csv', new TextEncoder().encode('name,age\nAlice,30\n')],
        ['variables', '{"legal_address":"foo"}'],
      ])
      expect(notWord.status).toBe(400)
      expect(notWord.headers.get('content-type')).toBe('text/plain; charset=UTF-8')
      expect(await notWord.text()).toBe(
        "The 'variables' form field only applies to Word documents (.docx, .docm, .dotx, .dotm), but 'sheet.csv' is not one. Remove the 'variables' form field or convert 'sheet.csv' in a separate request.",
      )
      const badList = await post([variablesTableDocx(), ['variables', '{"items":[{"name":1}]}']])
      expect(badList.status).toBe(400)
      expect(badList.headers.get('content-type')).toBe('text/plain; charset=UTF-8')
      expect(await badList.text()).toContain(
        `form field 'variables' is invalid (got '{"items":[{"name":1}]}', resulting to variable 'items' is invalid: use a string, or an array of objects with string values to repeat a table row)`,
      )
    },
    SLOW,
  )

  it(
    'Scenario: POST /forms/libreoffice/convert (Variables - Table Rows)',
    async () => {
      const variables = {
        company: 'Smith & Sons',
        currency: 'USD',
        total: '250',
        items: [
          { name: 'Router', qty: '2', price: '100' },
          { name: 'Cable <5m>', qty: '5', price: '10' },
        ],
      }
      const res = await post([variablesTableDocx(), ['variables', JSON.stringify(variables)]], {
        'Gotenberg-Output-Filename': 'foo',
      })
      expect(res.status).toBe(200)
      const pdf = (await filesOf(res)).get('foo.pdf')!
      const text = pageText(pdf, 1)
      expect(text).toMatch(/Order for Smith & Sons/)
      // Gotenberg reads the table column by column; -layout reads it row by row: the same cells in the same rows.
      expect(text).toMatch(
        /Item\s+Qty\s+Price\s+1 Router\s+2 pcs\s+100 USD\s+2 Cable <5m>\s+5 pcs\s+10 USD\s+Total\s+250 USD/,
      )
      expect(text).toMatch(/Outside a table: \$\{items\.name\}/)
      expect(text).not.toMatch(/Qty[\s\S]*Qty/)
      const empty = await post(
        [variablesTableDocx(), ['variables', JSON.stringify({ currency: 'USD', total: '0', items: [] })]],
        { 'Gotenberg-Output-Filename': 'foo' },
      )
      expect(empty.status).toBe(200)
      const emptyText = pageText((await filesOf(empty)).get('foo.pdf')!, 1)
      expect(emptyText).toMatch(/Item\s+Qty\s+Price\s+Total\s+0 USD/)
      expect(emptyText).not.toMatch(/pcs/)
    },
    SLOW,
  )
})

describe('Gotenberg 8 health.feature', () => {
  it.each(['GET', 'HEAD'])('Scenario: %s /health', async (method) => {
    const before = logs.length
    const res = await fetch(`${sidecar.url}/health`, { method })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8')
    const body = await res.text()
    if (method === 'HEAD') expect(body).toBe('')
    else
      expect(JSON.parse(body)).toMatchObject({
        status: 'up',
        details: {
          chromium: { status: 'up', timestamp: expect.any(String) },
          libreoffice: { status: 'up', timestamp: expect.any(String) },
        },
      })
    expect(logs.slice(before).some((entry) => entry.path === '/health')).toBe(true)
  })

  it.each(['GET', 'HEAD'])('Scenario: %s /health (No Logging) — SIDECAR_HEALTH_LOGGING=false', async (method) => {
    const res = await fetch(`${quiet.url}/health`, { method })
    expect(res.status).toBe(200)
    await res.text()
    expect((await fetch(`${quiet.url}/version`)).status).toBe(200)
    expect(quietLogs.some((entry) => entry.path === '/health')).toBe(false)
    expect(quietLogs.some((entry) => entry.path === '/version')).toBe(true)
  })

  it.each(['GET', 'HEAD'])('Scenario: %s /health (Basic Auth) — open without credentials', async (method) => {
    expect((await fetch(`${guarded.url}/health`, { method })).status).toBe(200)
  })

  it.each(['GET', 'HEAD'])('Scenario: %s /foo/health (Root Path) — SIDECAR_ROOT_PATH', async (method) => {
    expect((await fetch(`${rooted.url}/foo/health`, { method })).status).toBe(200)
  })
})

describe('Gotenberg 8 version.feature', () => {
  it('Scenario: GET /version', async () => {
    const res = await fetch(`${sidecar.url}/version`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/plain; charset=UTF-8')
    expect(await res.text()).toBe(GOTENBERG_VERSION)
  })

  it('Scenario: GET /version (Gotenberg Trace)', async () => {
    const res = await fetch(`${sidecar.url}/version`, { headers: { 'Gotenberg-Trace': 'version' } })
    expect(res.status).toBe(200)
    expect(res.headers.get('gotenberg-trace')).toBe('version')
    await res.text()
    expect(logs.some((entry) => entry.trace === 'version' && entry.path === '/version')).toBe(true)
  })

  it('Scenario: GET /version (Basic Auth)', async () => {
    expect((await fetch(`${guarded.url}/version`)).status).toBe(401)
    const authorization = `Basic ${Buffer.from('foo:bar').toString('base64')}`
    expect(await (await fetch(`${guarded.url}/version`, { headers: { authorization } })).text()).toBe(GOTENBERG_VERSION)
  })

  it('Scenario: GET /foo/version (Root Path) — SIDECAR_ROOT_PATH', async () => {
    expect((await fetch(`${rooted.url}/foo/version`)).status).toBe(200)
  })
})
