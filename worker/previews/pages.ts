// Which page a preview may show: images and texts have only their first. Free of the request schemas (zod), so the
// engine Workers that draw previews bundle none of them.
import { ConversionError } from '../converters/converter'
import type { PreviewKind } from './kind'
import type { PreviewParams } from './params'

export function onlyFirstPage(params: PreviewParams, what: string): void {
  if (params.page !== 1) throw new ConversionError(`${what} has one page to preview; page ${params.page} does not exist`)
}

/** What can be refused before any drawing is queued: a page other than 1 of an image or a text. */
export function checkPreviewPage(kind: PreviewKind, params: PreviewParams): void {
  if (kind === 'image') onlyFirstPage(params, 'an image')
  if (kind === 'text') onlyFirstPage(params, 'a text preview')
}
