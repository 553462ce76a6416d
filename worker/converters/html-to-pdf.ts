// HTML and Markdown → PDF through Gotenberg's Chromium routes (the sidecar's Chromium, or the official image's):
// an .html upload is the page's index.html, a .md upload is rendered into a plain page (GitHub's flavour, tables
// included) by /forms/chromium/convert/markdown. The PDF then goes on to PNG pages like any PDF. The page reaches
// what the sidecar's policy allows and nothing of the Worker: no cookie, no credential, no local file.
import { GotenbergError, gotenbergSettings, postForm } from '../engines/gotenberg'
import { htmlToPdfInfo } from './catalog/html-to-pdf'
import { ConversionError, defineConverter } from './converter'
import { toConversionError } from './office-to-pdf'

/** The page a Markdown upload is rendered into: Gotenberg's template call, and type that prints well. */
const MARKDOWN_PAGE =
  '<!doctype html><html><head><meta charset="utf-8"><style>body{font-family:sans-serif;line-height:1.45;margin:0}' +
  'table{border-collapse:collapse}th,td{border:1px solid #999;padding:4px 8px}pre{white-space:pre-wrap}</style></head>' +
  '<body>{{ toHTML "document.md" }}</body></html>'

export const htmlToPdf = defineConverter({
  ...htmlToPdfInfo,
  async *convert(input, ctx) {
    if (input.size === 0) throw new ConversionError(`"${input.name}" is empty: there is nothing to convert`)
    // FormData needs the bytes: OFFICE_MAX_BYTES bounds them.
    const bytes = await input.bytes(ctx.settings.OFFICE_MAX_BYTES)
    const isMarkdown = input.extension === '.md'
    if (isMarkdown) {
      try {
        new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes)
      } catch {
        throw new ConversionError(`"${input.name}" is not UTF-8 text: Markdown is converted from UTF-8 only`)
      }
    }
    const form = new FormData()
    if (isMarkdown) {
      form.append('files', new File([MARKDOWN_PAGE], 'index.html', { type: 'text/html' }))
      form.append('files', new File([bytes], 'document.md', { type: 'text/markdown' }))
    } else form.append('files', new File([bytes], 'index.html', { type: 'text/html' }))
    form.append('printBackground', 'true')
    const pdf = await postForm(
      gotenbergSettings(ctx),
      `/forms/chromium/convert/${isMarkdown ? 'markdown' : 'html'}`,
      form,
      ctx.jobId,
    ).catch((error: unknown) => {
      throw error instanceof GotenbergError ? toConversionError(error) : error
    })
    yield { index: 0, total: 1, extension: '.pdf', contentType: 'application/pdf', body: pdf }
  },
})
