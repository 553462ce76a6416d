// The AVIF Worker (wrangler.engine-avif.toml): encodes a preview's pixels as AVIF for the drawing engine Workers (PDF,
// image, text), which call it through their AVIF_ENGINE service binding (Workers RPC). libavif's encoder is 3.5 MB of
// WASM that workerd compiles at each cold start of a Worker that bundles it, and a 35 MiB heap while it encodes: here,
// only an AVIF preview pays them, in an isolate of its own (docs/platform-limits.md). No binding, no setting.
import { WorkerEntrypoint } from 'cloudflare:workers'
import { ConversionError } from '../conversion-error'
import { encodeAvif } from '../engines/image/avif-encode'
import type { RawImage } from '../engines/png/encode'
import { AVIF_PREVIEW_MAX_SIDE } from '../previews/pages'
import { type AvifService, asWireResult } from './protocol'

/** Whether `image` is a picture this Worker encodes: whole pixels, at most AVIF_PREVIEW_MAX_SIDE a side. */
function isPreviewPicture(image: RawImage): boolean {
  const { width, height, channels, data } = image
  const side = (n: number) => Number.isInteger(n) && n >= 1 && n <= AVIF_PREVIEW_MAX_SIDE
  return (
    side(width) &&
    side(height) &&
    [1, 2, 3, 4].includes(channels) &&
    (data instanceof Uint8Array || data instanceof Uint8ClampedArray) &&
    data.byteLength === width * height * channels
  )
}

export default class AvifWorker extends WorkerEntrypoint implements AvifService {
  encode(image: RawImage) {
    return asWireResult(async () => {
      // The drawing Workers send no other picture (checkPreviewPage refuses a larger box before the drawing is
      // queued); one would be drawn the same way again, so its refusal is permanent: the preview fails, unretried.
      if (!isPreviewPicture(image))
        throw new ConversionError(
          `the AVIF Worker encodes pictures of at most ${AVIF_PREVIEW_MAX_SIDE} pixels a side, their data whole`,
        )
      return encodeAvif(image)
    })
  }
}
