// A preview's parameters: sizes only from a fixed set (so a client cannot fill storage with variants), a fit, a
// format chosen from the request's Accept header unless named, and a page.
import { z } from '@hono/zod-openapi'

/** Sides a preview box may have, in pixels. */
export const PREVIEW_SIDES = [64, 128, 256, 512, 1024, 2048] as const
export const DEFAULT_SIDE = 256

export type PreviewFormat = 'webp' | 'png' | 'avif'
export type PreviewFit = 'contain' | 'cover'

export interface PreviewParams {
  readonly width: number
  readonly height: number
  readonly fit: PreviewFit
  readonly format: PreviewFormat
  readonly page: number
}

const side = z
  .enum(PREVIEW_SIDES.map(String) as [string, ...string[]])
  .optional()
  .openapi({ description: `one of ${PREVIEW_SIDES.join(', ')}` })

export const PreviewQuery = z.object({
  w: side.openapi({
    description: `box width: one of ${PREVIEW_SIDES.join(', ')} (the height when only h is given; ${DEFAULT_SIDE} when neither)`,
  }),
  h: side.openapi({ description: `box height: one of ${PREVIEW_SIDES.join(', ')} (the width when only w is given)` }),
  fit: z
    .enum(['contain', 'cover'])
    .default('contain')
    .openapi({ description: 'contain: the whole page inside the box; cover: the box filled, centre-cropped' }),
  format: z
    .enum(['webp', 'png', 'avif'])
    .optional()
    .openapi({ description: 'default: WebP when Accept allows it, else PNG' }),
  page: z.coerce
    .number()
    .int()
    .min(1)
    .max(100_000)
    .default(1)
    .openapi({ description: 'PDF and Office documents: the page (1 = first); other kinds have only page 1' }),
  token: z.string().max(200).optional().openapi({ description: "the signed token from the record's preview_url" }),
})

export const CONTENT_TYPES: Record<PreviewFormat, string> = { webp: 'image/webp', png: 'image/png', avif: 'image/avif' }

/** Whether an Accept header allows a media type (RFC 9110 §12.5.1: no header accepts anything; q=0 refuses). */
export function accepts(accept: string | undefined, mediaType: string): boolean {
  if (!accept) return true
  const [type] = mediaType.split('/')
  let best: { specificity: number; q: number } | undefined
  for (const range of accept.split(',')) {
    const [name = '', ...parameters] = range.trim().toLowerCase().split(';')
    const q = Number(
      parameters
        .map((p) => p.trim())
        .find((p) => p.startsWith('q='))
        ?.slice(2) ?? '1',
    )
    const specificity = name === mediaType ? 3 : name === `${type}/*` ? 2 : name === '*/*' ? 1 : 0
    if (specificity > 0 && (!best || specificity > best.specificity))
      best = { specificity, q: Number.isFinite(q) ? q : 1 }
  }
  return best !== undefined && best.q > 0
}

export function previewParams(query: z.infer<typeof PreviewQuery>, accept: string | undefined): PreviewParams {
  const width = Number(query.w ?? query.h ?? DEFAULT_SIDE)
  const height = Number(query.h ?? query.w ?? DEFAULT_SIDE)
  const format = query.format ?? (accepts(accept, 'image/webp') ? 'webp' : 'png')
  return { width, height, fit: query.fit, format, page: query.page }
}

/** The part of the preview's storage key (and ETag) its parameters make. */
export function variantName(params: PreviewParams): string {
  return `${params.width}x${params.height}-${params.fit}-p${params.page}.${params.format}`
}
