// image → PNG on real images, through the converter and through the whole pipeline.
import { describe, expect, it } from 'vitest'
import { imageToPng } from '../../worker/converters/image-to-png'
import { decodeImage } from '../../worker/engines/image/decode'
import { readPngHeader } from '../../worker/engines/png/encode'
import * as fixtures from '../fixtures/images/images'
import { call, callJson } from '../support/api'
import { signUp } from '../support/accounts'
import { convertAll, inputFromBytes, outputBytes, TEST_IMAGE_LIMITS, testContext } from '../support/conversion'
import { uploaded } from '../support/files'

/** The pixel at (x, y) of a decoded image, RGB. */
async function pixelOf(png: Uint8Array, x: number, y: number) {
  const image = await decodeImage(png, TEST_IMAGE_LIMITS)
  const i = (y * image.width + x) * 4
  return [...image.data.subarray(i, i + 3)]
}

describe('image-to-png converter', () => {
  it.each([
    ['pattern.jpg', fixtures.pattern_jpg, 'jpeg'],
    ['pattern.webp', fixtures.pattern_webp, 'webp'],
    ['pattern.gif', fixtures.pattern_gif, 'gif'],
    ['pattern.bmp', fixtures.pattern_bmp, 'bmp'],
    ['pattern.tiff', fixtures.pattern_tiff, 'tiff'],
    ['pattern.avif', fixtures.pattern_avif, 'avif'],
  ])('turns %s into a PNG of the same picture', async (name, bytes, format) => {
    const [output] = await convertAll(imageToPng, inputFromBytes(name, bytes), testContext())
    expect(output).toMatchObject({
      index: 0,
      total: 1,
      extension: '.png',
      contentType: 'image/png',
      metadata: { width: 64, height: 48, source_format: format },
    })
    const png = await outputBytes(output!)
    expect(readPngHeader(png)).toMatchObject({ width: 64, height: 48, colorType: 2 })
    // The test pattern's top-left area is a saturated colour bar; lossy formats stay close to it.
    const reference = await pixelOf(
      await outputBytes(
        (await convertAll(imageToPng, inputFromBytes('b.bmp', fixtures.pattern_bmp), testContext()))[0]!,
      ),
      4,
      4,
    )
    const pixel = await pixelOf(png, 4, 4)
    for (let c = 0; c < 3; c++) expect(Math.abs(pixel[c]! - reference[c]!)).toBeLessThan(40)
  })

  it('writes gray images as grayscale, and makes no output when a PNG would not get smaller', async () => {
    const [output] = await convertAll(imageToPng, inputFromBytes('gray.png', fixtures.gray_png), testContext())
    const png = await outputBytes(output!)
    expect(readPngHeader(png)).toMatchObject({ width: 40, height: 30, colorType: 0 })
    expect(png.byteLength).toBeLessThan(fixtures.gray_png.byteLength)
    expect(await convertAll(imageToPng, inputFromBytes('again.png', png), testContext())).toEqual([])
  })

  it('downscales to IMAGE_MAX_DIMENSION', async () => {
    const [output] = await convertAll(
      imageToPng,
      inputFromBytes('big.bmp', fixtures.pattern_bmp),
      testContext({ settings: { IMAGE_MAX_DIMENSION: 16 } }),
    )
    expect(output!.metadata).toMatchObject({ width: 16, height: 12 })
    expect(readPngHeader(await outputBytes(output!))).toMatchObject({ width: 16, height: 12 })
  })

  it('refuses a pixel flood from the header, before decoding', async () => {
    const flood = fixtures.pattern_png.slice()
    new DataView(flood.buffer).setUint32(16, 60000)
    new DataView(flood.buffer).setUint32(20, 60000)
    await expect(convertAll(imageToPng, inputFromBytes('flood.png', flood), testContext())).rejects.toMatchObject({
      retryable: false,
      message: 'the image is 60000×60000; the limit is 20000 pixels a side (IMAGE_MAX_SIDE)',
    })
  })

  it.each([
    ['truncated JPEG', 'cut.jpg', fixtures.pattern_jpg.slice(0, 600)],
    ['corrupt PNG', 'bad.png', fixtures.pattern_png.map((byte, i) => (i > 40 ? byte ^ 0x5a : byte))],
    ['not an image', 'fake.jpg', new TextEncoder().encode('just some text, honestly')],
  ])('fails a %s permanently with a reason', async (_case, name, bytes) => {
    const failure = await convertAll(imageToPng, inputFromBytes(name, bytes), testContext()).catch((error) => error)
    expect(failure).toMatchObject({ name: 'ConversionError', retryable: false })
    expect(failure.message.length).toBeGreaterThan(10)
  })
})

describe('JPEG → PNG through the pipeline', () => {
  it('converts an uploaded JPEG into a PNG child and downloads it', async () => {
    const user = await signUp()
    const jpeg = await uploaded(user, 'Holiday photo.jpg', fixtures.pattern_jpg)
    expect(jpeg.content_type).toBe('image/jpeg')
    const res = await callJson('POST', `/files/${jpeg._id}/convert`, { token: user.token })
    expect(res.status).toBe(200)
    expect(res.body).toHaveLength(1)
    expect(res.body[0]).toMatchObject({
      name: 'Holiday photo (1 of 1)',
      extension: '.png',
      content_type: 'image/png',
      parent_file: jpeg._id,
      metadata: { width: 64, height: 48 },
    })
    const download = await call('GET', `/files/${res.body[0]!._id}/download`, { token: user.token })
    expect(readPngHeader(new Uint8Array(await download.arrayBuffer()))).toMatchObject({ width: 64, height: 48 })
  })

  it('answers a corrupt image with a clear failure and keeps the original', async () => {
    const user = await signUp()
    const bad = await uploaded(user, 'broken.jpg', fixtures.pattern_jpg.slice(0, 40))
    const res = await callJson('POST', `/files/${bad._id}/convert`, { token: user.token })
    expect(res.status).toBe(415)
    expect(res.body.message).toBe(
      'image-to-png on "broken.jpg" failed: "broken.jpg" is not a JPEG, PNG, WebP, GIF, BMP, TIFF or AVIF image',
    )
    const original = await call('GET', `/files/${bad._id}/download`, { token: user.token })
    expect(new Uint8Array(await original.arrayBuffer())).toEqual(fixtures.pattern_jpg.slice(0, 40))
  })

  it('converts a JPEG named photo.bin as an image, by its sniffed type', async () => {
    const user = await signUp()
    const jpeg = await uploaded(user, 'photo.bin', fixtures.pattern_jpg)
    expect(jpeg.content_type).toBe('image/jpeg')
    const res = await callJson('POST', `/files/${jpeg._id}/convert`, { token: user.token })
    expect(res.status).toBe(200)
    expect(res.body.map((file) => [file.name, file.parent_file])).toEqual([['photo (1 of 1)', jpeg._id]])
    expect(res.body[0]!.metadata).toMatchObject({ width: 64, height: 48, source_format: 'jpeg' })
  })

  it('refuses text named x.jpg with 422 and a clear message, and starts no job', async () => {
    const user = await signUp()
    const text = await uploaded(user, 'x.jpg', 'just some text, honestly')
    expect(text.content_type).toBe('text/plain')
    const res = await callJson('POST', `/files/${text._id}/convert`, { token: user.token })
    expect(res.status).toBe(422)
    expect(res.body.message).toBe(
      '"x.jpg" is named .jpg but its content is text/plain; image-to-png reads only image/jpeg, image/png, image/webp, image/gif, image/bmp, image/tiff, image/avif',
    )
    expect((await callJson('GET', `/files/${text._id}/jobs`, { token: user.token })).body).toEqual([])
  })

  const flood = fixtures.pattern_png.slice()
  new DataView(flood.buffer).setUint32(16, 60000)
  new DataView(flood.buffer).setUint32(20, 60000)

  it.each([
    [
      'a truncated JPEG',
      'cut.jpg',
      fixtures.pattern_jpg.slice(0, Math.floor(fixtures.pattern_jpg.length / 2)),
      /^image-to-png on "cut\.jpg" failed: the JPEG image cannot be decoded(: the file ends before its end-of-image marker \(truncated\))?$/,
    ],
    [
      'a corrupt PNG',
      'bad.png',
      fixtures.pattern_png.map((byte, i) => (i > 40 ? byte ^ 0x5a : byte)),
      /^image-to-png on "bad\.png" failed: the PNG image cannot be decoded$/,
    ],
    [
      'a 60000×60000 PNG header',
      'flood.png',
      flood,
      /^image-to-png on "flood\.png" failed: the image is 60000×60000; the limit is 20000 pixels a side \(IMAGE_MAX_SIDE\)$/,
    ],
  ])('answers %s with 422, fails the job and keeps the original', async (_case, name, bytes, message) => {
    const user = await signUp()
    const source = await uploaded(user, name, bytes)
    const res = await callJson('POST', `/files/${source._id}/convert`, { token: user.token })
    expect(res.status).toBe(422)
    expect(res.body).toMatchObject({ message: expect.stringMatching(message), code: 'CONVERSION_FAILED' })
    const job = await callJson('GET', `/jobs/${res.body.job}`, { token: user.token })
    expect(job.body).toMatchObject({
      status: 'failed',
      files: [],
      steps: [{ converter: 'image-to-png', status: 'failed' }],
    })
    const original = await call('GET', `/files/${source._id}/download`, { token: user.token })
    expect(new Uint8Array(await original.arrayBuffer())).toEqual(bytes)
    expect((await callJson('GET', `/files/${source._id}`, { token: user.token })).body).toMatchObject({
      hash: source.hash,
      files: [],
    })
  })
})
