// The image engine Worker (wrangler.engine-image.toml): the image decoders, image → PNG and images' previews.
import { imageToPng } from '../converters/image-to-png'
import { encodePreview } from '../previews/encode'
import { imagePixels } from '../previews/render-image'
import { engineEntrypoint, type PreviewRenderer } from './host'

export const renderImagePreview: PreviewRenderer = async (input, params, settings, avif) =>
  encodePreview(await imagePixels(input, params, settings), params, avif)

export default engineEntrypoint([imageToPng], { image: renderImagePreview })
