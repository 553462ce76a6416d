// Which previews may be drawn: images and texts have only their first page, AVIF has a smaller box.
// Free of the request schemas (zod), so the engine Workers that draw previews bundle none of them.
import { ConversionError } from '../conversion-error'
import type { PreviewKind } from '../files/preview-kind'
import type { PreviewParams } from './params'

export function onlyFirstPage(params: PreviewParams, what: string): void {
  if (params.page !== 1)
    throw new ConversionError(`${what} has one page to preview; page ${params.page} does not exist`)
}

/**
 * AVIF previews are at most this many pixels a side. Larger, libavif's encoder heap and the decoded picture may not
 * fit a Worker's 128 MB (docs/platform-limits.md, "What is refused, and why").
 */
export const AVIF_PREVIEW_MAX_SIDE = 1024

/** What can be refused before any drawing is queued: a page other than 1 of an image or a text, an AVIF too large. */
export function checkPreviewPage(kind: PreviewKind, params: PreviewParams): void {
  if (kind === 'image') onlyFirstPage(params, 'an image')
  if (kind === 'text') onlyFirstPage(params, 'a text preview')
  if (params.format === 'avif' && Math.max(params.width, params.height) > AVIF_PREVIEW_MAX_SIDE) {
    throw new ConversionError(
      `AVIF previews are at most ${AVIF_PREVIEW_MAX_SIDE} pixels a side (its encoder's memory grows with the picture; a Worker has 128 MB): ask for w and h of at most ${AVIF_PREVIEW_MAX_SIDE}, or format=webp`,
    )
  }
}
