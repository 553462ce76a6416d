// Which kind of preview a stored file gets, from its sniffed type and the converter its extension goes to.
// In files/ because a file record answers it (its preview_url); previews ask it what to draw.
import { converterForFile } from '../converters/registry'

export type PreviewKind = 'image' | 'pdf' | 'office' | 'text'

const IMAGE_TYPES = new Set([
  'image/jpeg',
  'image/png',
  'image/webp',
  'image/gif',
  'image/bmp',
  'image/tiff',
  'image/avif',
])

export function previewKind(file: {
  readonly name: string
  readonly extension: string
  readonly contentType: string
}): PreviewKind | undefined {
  if (file.contentType === 'application/pdf') return 'pdf'
  if (IMAGE_TYPES.has(file.contentType)) return 'image'
  const { converter } = converterForFile(file)
  // Office documents are the files whose default chain starts with a PDF (the sidecar makes it).
  if (converter?.to === '.pdf') return 'office'
  if (file.extension === '.txt' || file.contentType === 'text/plain') return 'text'
  return undefined
}
