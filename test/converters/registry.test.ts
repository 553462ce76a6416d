// The registry: one converter per extension and per sniffed type (refused at start-up otherwise), and the choice
// for a stored file by its extension and the type sniffed from its bytes (and the extensions a converter refuses).
import { describe, expect, it } from 'vitest'
import type { Converter } from '../../worker/converters/converter'
import {
  buildRegistry,
  converterForFile,
  JobOptionsRequest,
  OPTION_MAX_CHARS,
  registerConverter,
  SECRET_OPTIONS,
  storedJobOptions,
} from '../../worker/converters/registry'

const stub = (name: string, from: string[], accepts?: string[]): Converter => ({
  name,
  from,
  accepts,
  to: '.out',
  async *convert() {},
})

describe('buildRegistry', () => {
  it('refuses two converters claiming one extension', () => {
    expect(() => buildRegistry([stub('a', ['.one', '.two']), stub('b', ['.two'])])).toThrow(
      'converters a and b both claim .two',
    )
  })

  it('refuses two converters claiming one sniffed type', () => {
    expect(() => buildRegistry([stub('a', ['.one'], ['x/one']), stub('b', ['.two'], ['x/one'])])).toThrow(
      'converters a and b both claim x/one',
    )
  })

  it('refuses at run time an extension the shipped converters claim, and keeps the registry as it was', () => {
    expect(() => registerConverter(stub('second-txt', ['.txt']))).toThrow(
      'converters text-to-png and second-txt both claim .txt',
    )
    expect(converterForFile({ name: 'a.txt', extension: '.txt', contentType: 'text/plain' }).converter?.name).toBe(
      'text-to-png',
    )
  })
})

describe("converters' options", () => {
  const withOption = (name: string, from: string): Converter => ({
    ...stub(name, [from]),
    options: { fields: { password: JobOptionsRequest.shape.password! }, storedMaxChars: 256 },
  })

  it('refuses two converters declaring one option', () => {
    expect(() => buildRegistry([withOption('a', '.one'), withOption('b', '.two')])).toThrow(
      'converters a and b both claim option password',
    )
  })

  it("joins every converter's options into the request's schema, and refuses an unknown one", () => {
    expect(JobOptionsRequest.safeParse({ landscape: true, password: 'x' }).success).toBe(true)
    const unknown = JobOptionsRequest.safeParse({ landscape: true, dpi: 300 })
    expect(unknown.error?.issues).toEqual([expect.objectContaining({ code: 'unrecognized_keys', keys: ['dpi'] })])
  })

  it("applies a converter's rule across its fields (Factur-X is PDF/A-3b)", () => {
    const result = JobOptionsRequest.safeParse({ facturxXml: '<x/>', pdfa: 'PDF/A-2b' })
    expect(result.error?.issues.map((issue) => issue.message)).toEqual([
      "option 'pdfa' is invalid (got 'PDF/A-2b', resulting to Factur-X needs PDF/A-3b)",
    ])
  })

  it('stores each option as its converter keeps it, or says why the source cannot take it', () => {
    expect(storedJobOptions('.docx', { landscape: true, variables: { name: 'Ada' } })).toEqual({
      options: { landscape: true, variables: '{"name":"Ada"}' },
    })
    expect(storedJobOptions('.xlsx', { variables: { name: 'Ada' } })).toEqual({
      refusal: "option 'variables' applies to Word documents (.docx, .docm, .dotx, .dotm) only, not to .xlsx",
    })
    expect(storedJobOptions('.pdf', { password: 'x' })).toEqual({ options: { password: 'x' } })
  })

  it('takes the secrets and the longest stored value from the converters that declare them', () => {
    expect([...SECRET_OPTIONS].sort()).toEqual(['ownerPassword', 'password', 'userPassword'])
    expect(OPTION_MAX_CHARS).toBe(512 * 1024)
  })
})

describe('converterForFile', () => {
  it.each([
    ['photo.jpg', '.jpg', 'image/jpeg', 'image-to-png'],
    ['photo.png', '.png', 'image/jpeg', 'image-to-png'],
    ['photo.bin', '.bin', 'image/jpeg', 'image-to-png'],
    ['scan', '', 'image/tiff', 'image-to-png'],
    ['notes.txt', '.txt', 'text/plain', 'text-to-png'],
    ['report.docx', '.docx', 'application/zip', 'office-to-pdf'],
  ])('chooses for %s (%s, %s)', (name, extension, contentType, converter) => {
    expect(converterForFile({ name, extension, contentType })).toEqual({
      converter: expect.objectContaining({ name: converter }),
    })
  })

  it.each([
    [
      'x.jpg',
      '.jpg',
      'text/plain',
      'NOT_CONVERTIBLE',
      '"x.jpg" is named .jpg but its content is text/plain; image-to-png reads only image/jpeg, image/png, image/webp, image/gif, image/bmp, image/tiff, image/avif',
    ],
    [
      'x.png',
      '.png',
      'application/octet-stream',
      'NOT_CONVERTIBLE',
      '"x.png" is named .png but its content is application/octet-stream; image-to-png reads only image/jpeg, image/png, image/webp, image/gif, image/bmp, image/tiff, image/avif',
    ],
    [
      'song.wma',
      '.wma',
      'application/octet-stream',
      'NOT_CONVERTIBLE',
      expect.stringMatching(/^"song\.wma" cannot be converted: Windows Media Audio /),
    ],
    ['pic.wma', '.wma', 'image/jpeg', 'NOT_CONVERTIBLE', expect.stringMatching(/^"pic\.wma" cannot be converted: /)],
    [
      'data.bin',
      '.bin',
      'application/octet-stream',
      'UNSUPPORTED_FORMAT',
      expect.stringMatching(
        /^no converter accepts \.bin; these extensions convert: \.avif, \.bmp, .*\.docx, .*\.pdf, .*\.txt/,
      ),
    ],
    [
      'README',
      '',
      'text/plain',
      'UNSUPPORTED_FORMAT',
      expect.stringMatching(/^no converter accepts files without an extension; these extensions convert: \.avif/),
    ],
  ])('refuses %s (%s, %s) with %s and a reason', (name, extension, contentType, code, refusal) => {
    expect(converterForFile({ name, extension, contentType })).toEqual({ refusal, code })
  })
})

// The consumer Worker runs each converter's work where its engines are (worker/engine-workers/engines.ts): in an
// engine Worker through a binding, or in the consumer itself. Whichever it is, the converter it gets must be the one
// the registry lists, with the same info and a plan exactly when the converter's own work has one.
describe("the consumer's converters, wherever their work runs", () => {
  it('are every listed converter, each with its info, planning exactly when its work plans', async () => {
    const { remoteEngines } = await import('../../worker/engine-workers/engines')
    const { runnableConverter } = await import('../../worker/converters/runnable')
    const { allConverters } = await import('../../worker/converters/registry')
    const unused = {} as never
    const engines = remoteEngines({ PDF_ENGINE: unused, IMAGE_ENGINE: unused, TEXT_ENGINE: unused })
    const builtIn = allConverters().filter((info) => !info.name.startsWith('test-'))
    expect(builtIn.length).toBeGreaterThan(5)
    for (const info of builtIn) {
      const remote = engines.converter(info.name)
      const local = runnableConverter(info.name)!
      expect(remote, info.name).toMatchObject({ name: info.name, from: info.from, to: info.to })
      expect([info.name, typeof remote?.plan]).toEqual([info.name, typeof local.plan])
    }
  })
})
