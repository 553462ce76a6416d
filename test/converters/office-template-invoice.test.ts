// Gotenberg 8.34's `variables` and Factur-X fields through POST /files/:id/convert, the real queue and the real
// sidecar: the filled template's text read back by the PDF-to-text step, the Factur-X PDF read by qpdf and exiftool
// (test/setup/pdf-inspector.ts), and the requests the route refuses with 400 before any job exists. The rules
// are Gotenberg's (pkg/modules/libreoffice/api/variables.go, pkg/modules/pdfengines's Factur-X at v8.34.0), as the
// sidecar states them once in shared/form-rules.ts.
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the templates hold Gotenberg's ${name} placeholders
import { inject } from 'vitest'
import { describe, expect, it } from 'vitest'
import { zip } from '../../sidecar/zip'
import type { PdfInspection } from '../setup/pdf-inspector'
import { signUp } from '../support/accounts'
import { callJson } from '../support/api'
import { officeDocument } from '../support/office-documents'
import { downloadBytes, uploaded } from '../support/files'
import { pollJob } from '../support/jobs'

const encode = (text: string) => new TextEncoder().encode(text)

/** The smallest WordprocessingML package: Gotenberg's variables_table.docx in shape, "${company}" split over runs as Word splits it. */
function wordTemplate(body: string): Uint8Array {
  return zip([
    {
      name: '[Content_Types].xml',
      bytes: encode(
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
      ),
    },
    {
      name: '_rels/.rels',
      bytes: encode(
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>',
      ),
    },
    {
      name: 'word/document.xml',
      bytes: encode(
        `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>${body}</w:body></w:document>`,
      ),
    },
  ])
}
const paragraph = (...runs: string[]) =>
  `<w:p>${runs.map((text) => `<w:r><w:t xml:space="preserve">${text}</w:t></w:r>`).join('')}</w:p>`
const cell = (text: string) => `<w:tc><w:tcPr><w:tcW w:w="3000" w:type="dxa"/></w:tcPr>${paragraph(text)}</w:tc>`
const row = (...texts: string[]) => `<w:tr>${texts.map(cell).join('')}</w:tr>`
const table = (...rows: string[]) =>
  `<w:tbl><w:tblPr><w:tblW w:w="9000" w:type="dxa"/></w:tblPr><w:tblGrid><w:gridCol w:w="3000"/><w:gridCol w:w="3000"/><w:gridCol w:w="3000"/></w:tblGrid>${rows.join('')}</w:tbl>`

const ORDER = wordTemplate(
  paragraph('Order for ', '${comp', 'any}') +
    table(row('Item', 'Qty', 'Price'), row('${items._index} ${items.name}', '${items.qty} pcs', '${items.price} EUR')) +
    paragraph('Unknown: ${not_provided}'),
)
const VARIABLES = {
  company: 'Smith & Sons',
  items: [
    { name: 'Widget', qty: '2', price: '10.00' },
    { name: 'Gadget', qty: '5', price: '3.50' },
    { name: 'Sprocket', qty: '1', price: '99.99' },
  ],
}

/** A Factur-X MINIMUM invoice (the CII syntax of EN 16931), small but well-formed. */
const INVOICE_XML = `<?xml version="1.0" encoding="UTF-8"?>
<rsm:CrossIndustryInvoice xmlns:rsm="urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100" xmlns:ram="urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100" xmlns:udt="urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100">
  <rsm:ExchangedDocumentContext><ram:GuidelineSpecifiedDocumentContextParameter><ram:ID>urn:factur-x.eu:1p0:minimum</ram:ID></ram:GuidelineSpecifiedDocumentContextParameter></rsm:ExchangedDocumentContext>
  <rsm:ExchangedDocument><ram:ID>INV-2026-0042</ram:ID><ram:TypeCode>380</ram:TypeCode><ram:IssueDateTime><udt:DateTimeString format="102">20261124</udt:DateTimeString></ram:IssueDateTime></rsm:ExchangedDocument>
  <rsm:SupplyChainTradeTransaction>
    <ram:ApplicableHeaderTradeAgreement><ram:SellerTradeParty><ram:Name>Smith &amp; Sons</ram:Name></ram:SellerTradeParty><ram:BuyerTradeParty><ram:Name>Acme</ram:Name></ram:BuyerTradeParty></ram:ApplicableHeaderTradeAgreement>
    <ram:ApplicableHeaderTradeDelivery/>
    <ram:ApplicableHeaderTradeSettlement><ram:InvoiceCurrencyCode>EUR</ram:InvoiceCurrencyCode><ram:SpecifiedTradeSettlementHeaderMonetarySummation><ram:TaxBasisTotalAmount>137.49</ram:TaxBasisTotalAmount><ram:GrandTotalAmount>137.49</ram:GrandTotalAmount><ram:DuePayableAmount>137.49</ram:DuePayableAmount></ram:SpecifiedTradeSettlementHeaderMonetarySummation></ram:ApplicableHeaderTradeSettlement>
  </rsm:SupplyChainTradeTransaction>
</rsm:CrossIndustryInvoice>
`

async function inspectPdf(bytes: Uint8Array): Promise<PdfInspection> {
  const res = await fetch(`${inject('pdfInspectorUrl')}/inspect`, { method: 'POST', body: bytes })
  if (res.status !== 200) throw new Error(`the PDF inspector refused the PDF: ${await res.text()}`)
  return res.json()
}

describe('variables through POST /files/:id/convert (Gotenberg 8.34 "POST /forms/libreoffice/convert (Variables)")', () => {
  it("fills ${name} placeholders and repeats the table row per element: the values are in the PDF's text", async () => {
    const user = await signUp()
    const source = await uploaded(user, 'Order.docx', ORDER)
    const res = await callJson('POST', `/files/${source._id}/convert`, {
      token: user.token,
      json: { to: '.txt', options: { variables: VARIABLES } },
    })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body.map((made) => made.extension)).toEqual(['.pdf', '.txt'])
    const { bytes } = await downloadBytes(`/files/${res.body[1]!._id}/download`, { token: user.token })
    const text = new TextDecoder().decode(bytes).replace(/\s+/g, ' ')
    expect(text).toContain('Order for Smith & Sons')
    for (const [i, item] of VARIABLES.items.entries()) {
      expect(text).toContain(`${i + 1} ${item.name}`)
      expect(text).toContain(`${item.qty} pcs`)
      expect(text).toContain(`${item.price} EUR`)
    }
    // Gotenberg leaves a placeholder without a value as written; no row of the template's own stays behind.
    expect(text).toContain('Unknown: ${not_provided}')
    expect(text).not.toContain('${items')
  })

  it("keeps the variables with the job as Gotenberg's JSON text", async () => {
    const user = await signUp()
    const source = await uploaded(user, 'Order.docx', ORDER)
    const res = await callJson('POST', `/files/${source._id}/convert`, {
      token: user.token,
      json: { options: { variables: VARIABLES } },
      headers: { prefer: 'respond-async' },
    })
    expect(res.status).toBe(202)
    const job = await pollJob(res.body._id, user)
    expect(job).toMatchObject({ status: 'done', options: { variables: JSON.stringify(VARIABLES) } })
  })

  it("fails the job with the sidecar's reason when the template cannot take the variables (a row using two lists)", async () => {
    const user = await signUp()
    const source = await uploaded(user, 'Two lists.docx', wordTemplate(table(row('${a.x}', '${b.x}', ''))))
    const res = await callJson('POST', `/files/${source._id}/convert`, {
      token: user.token,
      json: { options: { variables: { a: [{ x: '1' }], b: [{ x: '2' }] } } },
    })
    expect(res.status).toBe(422)
    expect(res.body.message).toMatch(/failed: the document was refused: Bad Request: .*more than one list: 'a', 'b'/)
    const job = await pollJob(res.body.job!, user)
    expect(job).toMatchObject({ status: 'failed', files: [] })
  })
})

describe('Factur-X through POST /files/:id/convert (Gotenberg 8.34 "POST /forms/libreoffice/convert (Factur-X / ZUGFeRD)")', () => {
  it('makes a PDF/A-3b carrying factur-x.xml as an associated file, with the fx: XMP properties', async () => {
    const user = await signUp()
    const source = await uploaded(user, 'Invoice.docx', officeDocument('hello.docx'))
    const options = { facturxXml: INVOICE_XML, facturxConformanceLevel: 'MINIMUM', facturxDocumentType: 'INVOICE' }
    const res = await callJson('POST', `/files/${source._id}/convert`, { token: user.token, json: { options } })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    const pdf = res.body.find((made) => made.extension === '.pdf')
    expect(pdf).toMatchObject({ name: 'Invoice (1 of 1)', content_type: 'application/pdf', parent_file: source._id })
    const { bytes } = await downloadBytes(`/files/${pdf!._id}/download`, { token: user.token })
    const found = await inspectPdf(bytes)
    expect(found.attachments).toContain('factur-x.xml')
    expect(found.facturxXml).toBe(INVOICE_XML)
    expect(found.associatedFiles).toEqual({ 'factur-x.xml': '/Alternative' })
    expect(found.exif).toMatchObject({
      ConformanceLevel: 'MINIMUM',
      DocumentType: 'INVOICE',
      DocumentFileName: 'factur-x.xml',
      Version: 1,
      SchemasPrefix: 'fx',
      Part: 3,
      Conformance: 'B',
    })
  })
})

describe('both at their bounds in one request', () => {
  it('fits the 1 MiB JSON body, is kept with the job in D1 and converts: variables of 500,000 characters, an XML of 380,000', async () => {
    const user = await signUp()
    const source = await uploaded(user, 'Order.docx', ORDER)
    // Padding in a value no placeholder uses and in an XML comment: the document stays one page.
    const variables = { ...VARIABLES, unused: 'v'.repeat(500_000 - JSON.stringify(VARIABLES).length - 12) }
    const facturxXml = INVOICE_XML.replace(
      '<rsm:ExchangedDocument>',
      `<!-- ${'x'.repeat(380_000 - INVOICE_XML.length - 10)} --><rsm:ExchangedDocument>`,
    )
    expect(JSON.stringify(variables).length).toBeLessThanOrEqual(512 * 1024)
    const res = await callJson('POST', `/files/${source._id}/convert`, {
      token: user.token,
      json: { options: { variables, facturxXml } },
      headers: { prefer: 'respond-async' },
    })
    expect(res.status, JSON.stringify(res.body).slice(0, 500)).toBe(202)
    const job = await pollJob(res.body._id, user)
    expect(job.status, job.error ?? '').toBe('done')
    expect(job.options).toMatchObject({ variables: JSON.stringify(variables), facturxXml })
    const pdf = job.files.find((file) => file.content_type === 'application/pdf')!
    const { bytes } = await downloadBytes(`/files/${pdf._id}/download`, { token: user.token })
    expect((await inspectPdf(bytes)).facturxXml).toBe(facturxXml)
  })
})

describe('the convert route refuses with 400, before any job, what the sidecar would refuse', () => {
  const refusals: Array<[string, string, Record<string, unknown>, RegExp]> = [
    ['variables that are not an object', 'Order.docx', { variables: '{"company":"x"}' }, /variables/],
    [
      'a variable name Gotenberg refuses',
      'Order.docx',
      { variables: { 'legal address': 'x' } },
      /variable name 'legal address' is invalid/,
    ],
    ['a list whose rows are not objects of strings', 'Order.docx', { variables: { items: [{ qty: 2 }] } }, /variables/],
    ['a list name with a dot', 'Order.docx', { variables: { 'a.b': [{ x: '1' }] } }, /list name 'a\.b' is invalid/],
    [
      'variables over their bound',
      'Order.docx',
      { variables: { big: 'x'.repeat(512 * 1024) } },
      /the maximum is 524288/,
    ],
    [
      'variables for a document that is not Word',
      'Letter.odt',
      { variables: { company: 'x' } },
      /applies to Word documents \(\.docx, \.docm, \.dotx, \.dotm\) only, not to \.odt/,
    ],
    [
      'a Factur-X level without the XML',
      'Order.docx',
      { facturxConformanceLevel: 'BASIC' },
      /option 'facturxXml' is required/,
    ],
    [
      'a Factur-X type without the XML',
      'Order.docx',
      { facturxDocumentType: 'ORDER' },
      /option 'facturxXml' is required/,
    ],
    [
      'a level Factur-X does not define',
      'Order.docx',
      { facturxXml: INVOICE_XML, facturxConformanceLevel: 'GOLD' },
      /facturxConformanceLevel/,
    ],
    [
      'Factur-X with another PDF/A than 3b',
      'Order.docx',
      { facturxXml: INVOICE_XML, pdfa: 'PDF/A-2b' },
      /option 'pdfa' is invalid \(got 'PDF\/A-2b', resulting to Factur-X needs PDF\/A-3b\)/,
    ],
    [
      'Factur-X with encryption',
      'Order.docx',
      { facturxXml: INVOICE_XML, userPassword: 'p4ss' },
      /option 'userPassword' is invalid \(resulting to a Factur-X PDF is PDF\/A-3b, which cannot be encrypted\)/,
    ],
    ['a Factur-X "XML" that is not XML', 'Order.docx', { facturxXml: 'INV-2026-0042;137.49' }, /must be XML/],
    ['a Factur-X XML over its bound', 'Order.docx', { facturxXml: `<x>${'y'.repeat(384 * 1024)}</x>` }, /facturxXml/],
    [
      'Factur-X on a file that is not an Office document',
      'notes.txt',
      { facturxXml: INVOICE_XML },
      /option 'facturxXml' applies to Office documents converted to PDF only, not to \.txt/,
    ],
  ]
  it.each(refusals)('refuses %s', async (_, name, options, message) => {
    const user = await signUp()
    const bytes = name.endsWith('.odt')
      ? officeDocument('hello.odt')
      : name.endsWith('.txt')
        ? encode('Invoice notes\n')
        : ORDER
    const source = await uploaded(user, name, bytes)
    const res = await callJson('POST', `/files/${source._id}/convert`, { token: user.token, json: { options } })
    expect(res.status, JSON.stringify(res.body).slice(0, 500)).toBe(400)
    expect(res.body).toMatchObject({ code: 'VALIDATION_FAILED' })
    expect(res.body.message).toMatch(message)
    const jobs = await callJson('GET', `/files/${source._id}/jobs`, { token: user.token })
    expect(jobs.body).toEqual([])
  })
})
