// Gotenberg 8's `variables` (pkg/modules/libreoffice/api/variables.go at v8.34.0 describes the rules) on the
// WordprocessingML itself, without LibreOffice: what is replaced, what stays, and the hostile templates and
// values (markup in values, rows that use two lists, lists that would blow a part up, not a zip at all).
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the templates hold Gotenberg's ${name} placeholders
import { inflateRawSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { entryData, zipEntries } from '../../sidecar/inspect'
import { applyVariables, parseVariables, VariablesError, type Variables } from '../../sidecar/variables'
import { zip } from '../../sidecar/zip'

const docx = (body: string) =>
  zip([
    { name: '[Content_Types].xml', bytes: new TextEncoder().encode('<Types/>') },
    {
      name: 'word/document.xml',
      bytes: new TextEncoder().encode(`<w:document><w:body>${body}</w:body></w:document>`),
      deflate: true,
    },
    { name: 'word/media/image1.png', bytes: new Uint8Array([1, 2, 3]) },
  ])
function documentXml(bytes: Uint8Array): string {
  const entry = zipEntries(bytes)!.find((candidate) => candidate.name === 'word/document.xml')!
  const data = entryData(bytes, entry)
  return new TextDecoder().decode(entry.method === 8 ? inflateRawSync(data) : data)
}
const variables = (raw: unknown) => parseVariables(JSON.stringify(raw)) as Variables
const fill = (body: string, raw: unknown) => documentXml(applyVariables('t.docx', docx(body), variables(raw)))
const texts = (xml: string) => [...xml.matchAll(/<w:t[^>]*>([^<]*)<\/w:t>/g)].map((match) => match[1]).join('|')

describe('variables', () => {
  it('fills a placeholder split over runs in the run where it starts, and leaves unknown ones', () => {
    const xml = fill('<w:p><w:r><w:t>A ${na</w:t></w:r><w:r><w:t>me} ${other}</w:t></w:r></w:p>', { name: 'x' })
    expect(texts(xml)).toBe('A x| ${other}')
  })

  it("escapes markup in values and makes line breaks and tabs the run's own", () => {
    const xml = fill('<w:p><w:r><w:t>${v}</w:t></w:r></w:p>', { v: '</w:t><w:r>&\na\tb' })
    expect(xml).toContain(
      '&lt;/w:t&gt;&lt;w:r&gt;&amp;</w:t><w:br/><w:t xml:space="preserve">a</w:t><w:tab/><w:t xml:space="preserve">b',
    )
  })

  it('never joins a placeholder across paragraphs', () => {
    expect(
      texts(fill('<w:p><w:r><w:t>${na</w:t></w:r></w:p><w:p><w:r><w:t>me}</w:t></w:r></w:p>', { name: 'x' })),
    ).toBe('${na|me}')
  })

  it('repeats a row per element, numbering with _index, and drops it for an empty list', () => {
    const table = '<w:tbl><w:tr><w:tc><w:p><w:r><w:t>${l._index}:${l.a}</w:t></w:r></w:p></w:tc></w:tr></w:tbl>'
    expect(texts(fill(table, { l: [{ a: 'x' }, { a: 'y' }] }))).toBe('1:x|2:y')
    expect(fill(table, { l: [] })).not.toContain('<w:tr>')
  })

  it('leaves the rest of the package byte for byte', () => {
    const out = applyVariables('t.docx', docx('<w:p><w:r><w:t>${a}</w:t></w:r></w:p>'), variables({ a: 'b' }))
    const image = zipEntries(out)!.find((entry) => entry.name === 'word/media/image1.png')!
    expect([...entryData(out, image)]).toEqual([1, 2, 3])
  })

  it.each([
    [
      'a row using two lists',
      '<w:tbl><w:tr><w:tc><w:p><w:r><w:t>${a.x}${b.x}</w:t></w:r></w:p></w:tc></w:tr></w:tbl>',
      { a: [{ x: '1' }], b: [{ x: '2' }] },
      /more than one list: 'a', 'b'/,
    ],
    [
      'a list that would grow the part past its bound',
      `<w:tbl><w:tr><w:tc><w:p><w:r><w:t>${'x'.repeat(10_000)}\${l.a}</w:t></w:r></w:p></w:tc></w:tr></w:tbl>`,
      { l: Array.from({ length: 10_000 }, () => ({ a: 'y' })) },
      /too large/,
    ],
  ])('refuses %s', (_, body, raw, message) => {
    expect(() => applyVariables('t.docx', docx(body), variables(raw))).toThrow(VariablesError)
    expect(() => applyVariables('t.docx', docx(body), variables(raw))).toThrow(message)
  })

  it('refuses bytes that are not a Word package', () => {
    expect(() => applyVariables('t.docx', new TextEncoder().encode('not a zip'), variables({ a: 'b' }))).toThrow(
      /not a Word document/,
    )
  })

  it.each([
    ['not JSON', 'foo', /^value is not a JSON object/],
    ['an array', '[]', /^value is not a JSON object/],
    ['a bad name', '{"1a":"x"}', /variable name '1a' is invalid/],
    ['a number', '{"a":1}', /variable 'a' is invalid: use a string, or an array of objects with string values/],
    ['a list named with a dot', '{"a.b":[{"x":"1"}]}', /list name 'a.b' is invalid/],
    ['a field named with a dot', '{"a":[{"x.y":"1"}]}', /field name 'x.y' of list 'a' is invalid/],
    ['a list and a name under it', '{"a":[{"x":"1"}],"a.x":"2"}', /variable 'a.x' is ambiguous/],
    [
      'over 10000 elements',
      JSON.stringify({ a: Array.from({ length: 10_001 }, () => ({})) }),
      /list 'a' has 10001 elements: the maximum is 10000/,
    ],
  ])('reads %s as invalid, with the reason', (_, raw, reason) => {
    expect(parseVariables(raw)).toMatch(reason)
  })
})
