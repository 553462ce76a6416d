// The text engine Worker (wrangler.engine-text.toml): the text layout and renderer, text → PNG and texts' previews.
import { textToPng } from '../converters/text-to-png'
import { encodePreview } from '../previews/encode'
import { textPixels } from '../previews/render-text'
import { engineEntrypoint, type PreviewRenderer } from './host'

export const renderTextPreview: PreviewRenderer = async (input, params, _settings, avif) =>
  encodePreview(await textPixels(input, params), params, avif)

export default engineEntrypoint([textToPng], { text: renderTextPreview })
