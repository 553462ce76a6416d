// Issue 29: the AVIF Worker (worker/engine-workers/avif.ts, wrangler.engine-avif.toml) encodes the pixels the drawing
// engine Workers send it, so that none of them bundles libavif's encoder. Called here as they call it: through the
// AVIF_ENGINE service binding (Workers RPC), which vitest.config.ts points at the entrypoint test/setup/worker-entry.ts
// exports. An AVIF file is an ISO BMFF file whose FileTypeBox lists the brand "avif" (AV1 Image File Format, §7.2:
// "Files shall also include the brand avif"); header.ts reads it and the image's size, decode.ts decodes it.
import { env } from 'cloudflare:test'
import { expect, it } from 'vitest'
import { type AvifBindings, fromWire } from '../../worker/engine-workers/protocol'
import { decodeImage } from '../../worker/engines/image/decode'
import { readImageHeader } from '../../worker/engines/image/header'
import { AVIF_PREVIEW_MAX_SIDE } from '../../worker/previews/pages'
import { TEST_IMAGE_LIMITS } from '../support/conversion'

const avif = (env as unknown as AvifBindings).AVIF_ENGINE

/** An RGB picture, red on its left half and blue on its right. */
function halves(width: number, height: number) {
  const data = new Uint8Array(width * height * 3)
  for (let p = 0; p < width * height; p++) data.set((p % width) * 2 < width ? [220, 20, 20] : [20, 20, 220], p * 3)
  return { width, height, channels: 3 as const, data }
}

it('answers the pixels sent through its binding as an AVIF of their size and colours', async () => {
  const bytes = fromWire(await avif.encode(halves(64, 48)))

  expect(new TextDecoder().decode(bytes.subarray(4, 12))).toBe('ftypavif')
  expect(readImageHeader(bytes)).toMatchObject({ format: 'avif', width: 64, height: 48 })
  const decoded = await decodeImage(bytes, TEST_IMAGE_LIMITS)
  const pixel = (x: number, y: number) => [...decoded.data.subarray((y * 64 + x) * 4, (y * 64 + x) * 4 + 3)]
  // Lossy, at quality 55: each channel within 40 of what was sent, far from the other half's.
  const near = (got: number[], want: number[]) => got.every((value, channel) => Math.abs(value - want[channel]!) < 40)
  expect([pixel(8, 24), pixel(56, 24)].map((got, half) => near(got, half ? [20, 20, 220] : [220, 20, 20]))).toEqual([
    true,
    true,
  ])
})

it('encodes a picture at AVIF_PREVIEW_MAX_SIDE, and refuses, for good, one past it or with data not of its size', async () => {
  const side = AVIF_PREVIEW_MAX_SIDE
  expect(readImageHeader(fromWire(await avif.encode(halves(side, 8))))).toMatchObject({ width: side, height: 8 })
  const refusal = {
    message: `the AVIF Worker encodes pictures of at most ${side} pixels a side, their data whole`,
    retryable: false,
    code: 'CONVERSION_FAILED',
  }
  expect(await avif.encode(halves(side + 1, 8))).toEqual({ error: refusal })
  expect(await avif.encode({ ...halves(4, 4), data: new Uint8Array(47) })).toEqual({ error: refusal })
  expect(await avif.encode({ ...halves(4, 4), width: 0, data: new Uint8Array(0) })).toEqual({ error: refusal })
})
