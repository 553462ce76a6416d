// Documents that link what lies outside them, made at test time: a DOCX, an ODT, a flat ODT (FODT) and an RTF
// each linking pictures by URL (a local file:// and a loopback http://), the ways each format knows
// (DOCX: an external image relationship; ODF: draw:image xlink:href; RTF: an INCLUDEPICTURE field).
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { zip } from '../../sidecar/zip'

const text = (value: string) => new TextEncoder().encode(value)

/** A minimal DOCX whose body is `paragraphs` (WordprocessingML), with `relationships` for document.xml. */
export function docx(
  paragraphs: string,
  relationships = '',
  extra: Array<{ name: string; bytes: Uint8Array; deflate?: boolean }> = [],
) {
  const ns =
    'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture"'
  return zip([
    {
      name: '[Content_Types].xml',
      bytes: text(
        '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
      ),
    },
    {
      name: '_rels/.rels',
      bytes: text(
        '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>',
      ),
    },
    {
      name: 'word/_rels/document.xml.rels',
      bytes: text(
        `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${relationships}</Relationships>`,
      ),
    },
    {
      name: 'word/document.xml',
      bytes: text(
        `<?xml version="1.0" encoding="UTF-8"?><w:document ${ns}><w:body>${paragraphs}</w:body></w:document>`,
      ),
      deflate: true,
    },
    ...extra,
  ])
}

/** A DOCX paragraph showing the picture of relationship `relationship` (an r:link: linked, not embedded). */
export const linkedPicture = (relationship: string, id: number) =>
  `<w:p><w:r><w:drawing><wp:inline><wp:extent cx="914400" cy="914400"/><wp:docPr id="${id}" name="linked ${id}"/><a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/picture"><pic:pic><pic:nvPicPr><pic:cNvPr id="${id}" name="linked ${id}"/><pic:cNvPicPr/></pic:nvPicPr><pic:blipFill><a:blip r:link="${relationship}"/><a:stretch><a:fillRect/></a:stretch></pic:blipFill><pic:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="914400" cy="914400"/></a:xfrm><a:prstGeom prst="rect"/></pic:spPr></pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing></w:r></w:p>`

/** A PNG of the system's, outside LibreOffice's install and the fonts: the icon an attacker embedded (issue 17). */
export function systemPicture(): string {
  const icon = '/usr/share/icons/hicolor/32x32/apps/libreoffice-main.png'
  if (existsSync(icon)) return icon
  for (const folder of [
    '/usr/share/pixmaps',
    '/usr/share/icons/hicolor/48x48/apps',
    '/usr/share/doc/python3/_static',
  ]) {
    const png = existsSync(folder) ? readdirSync(folder).find((name) => name.endsWith('.png')) : undefined
    if (png) return join(folder, png)
  }
  throw new Error('no PNG under /usr/share to link')
}

const ODF_NS =
  'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" xmlns:xlink="http://www.w3.org/1999/xlink" xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0"'
const odfFrames = (urls: readonly string[]) =>
  `<text:p>Linked pictures</text:p><text:p>${urls.map((url, i) => `<draw:frame draw:name="linked ${i}" text:anchor-type="as-char" svg:width="2cm" svg:height="2cm"><draw:image xlink:href="${url}" xlink:type="simple" xlink:show="embed" xlink:actuate="onLoad"/></draw:frame>`).join('')}</text:p>`

/** `urls` linked as pictures, in each format. */
export function linkingDocuments(
  urls: readonly string[],
): Record<'linked.docx' | 'linked.odt' | 'linked.fodt' | 'linked.rtf', Uint8Array> {
  const relationships = urls
    .map(
      (url, i) =>
        `<Relationship Id="rIdLinked${i}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" Target="${url}" TargetMode="External"/>`,
    )
    .join('')
  const content = `<?xml version="1.0" encoding="UTF-8"?><office:document-content ${ODF_NS} office:version="1.3"><office:body><office:text>${odfFrames(urls)}</office:text></office:body></office:document-content>`
  const manifest =
    '<?xml version="1.0" encoding="UTF-8"?><manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.3"><manifest:file-entry manifest:full-path="/" manifest:media-type="application/vnd.oasis.opendocument.text"/><manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/></manifest:manifest>'
  const fields = urls.map((url) => `{\\field{\\*\\fldinst INCLUDEPICTURE "${url}" \\\\d}{\\fldrslt }}\\par\n`).join('')
  return {
    'linked.docx': docx(
      `<w:p><w:r><w:t>Linked pictures</w:t></w:r></w:p>${urls.map((_, i) => linkedPicture(`rIdLinked${i}`, i + 1)).join('')}`,
      relationships,
    ),
    'linked.odt': zip([
      { name: 'mimetype', bytes: text('application/vnd.oasis.opendocument.text') },
      { name: 'META-INF/manifest.xml', bytes: text(manifest), deflate: true },
      { name: 'content.xml', bytes: text(content), deflate: true },
    ]),
    'linked.fodt': text(
      `<?xml version="1.0" encoding="UTF-8"?><office:document ${ODF_NS} office:version="1.3" office:mimetype="application/vnd.oasis.opendocument.text"><office:body><office:text>${odfFrames(urls)}</office:text></office:body></office:document>`,
    ),
    'linked.rtf': text(`{\\rtf1\\ansi\\deff0{\\fonttbl{\\f0 Liberation Serif;}}\\f0 Linked pictures\\par\n${fields}}`),
  }
}
