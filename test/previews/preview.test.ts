// GET /files/:id/preview through the Worker in workerd with real D1, R2 and Queues, on images made here, PDFs
// written here and by LibreOffice, and the Office documents LibreOffice made at test time.
import { env } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { decodeImage } from '../../worker/engines/image/decode'
import { readImageHeader } from '../../worker/engines/image/header'
import { encodePngBytes } from '../../worker/engines/png/encode'
import { pattern_jpg, pattern_png } from '../fixtures/images/images'
import { encrypted, threePages } from '../fixtures/pdf/pdfs'
import { loadConfig } from '../../worker/config'
import { openDatabase } from '../../worker/db/client'
import { newId } from '../../worker/db/ids'
import { failPreview, findPreview, queuePreview, storePreview, sweepPreviewRows } from '../../worker/files/previews'
import { findFileOf } from '../../worker/files/records'
import { PREVIEW_MAX_QUEUED_PER_USER, PREVIEW_REQUEUE_MS } from '../../worker/previews/make'
import { drawPreview } from '../../worker/previews/draw'
import { call, callJson, callWithSettings } from '../support/api'
import { signUp, type TestUser } from '../support/accounts'
import { TEST_IMAGE_LIMITS } from '../support/conversion'
import { multipartBody, uploaded } from '../support/files'
import { officeDocument } from '../support/office-documents'
import { buildPdf } from '../support/pdf'
import { pdfWholePageFills } from '../hostile/corpus'
import { DEAD_LETTER_QUEUE, deliver } from '../support/queue'
import { localEngines } from '../../worker/engine-workers/local'

/** An 800 × 400 image: left half red, right half blue (so a cover crop's centre shows both). */
async function twoColourPng(width = 800, height = 400): Promise<Uint8Array> {
  const data = new Uint8Array(width * height * 3)
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) data.set(x < width / 2 ? [220, 20, 20] : [20, 20, 220], (y * width + x) * 3)
  }
  return encodePngBytes({ width, height, channels: 3, data })
}

async function previewOnce(user: TestUser | undefined, path: string, headers: Record<string, string> = {}) {
  const res = await call('GET', path, { token: user?.token, headers })
  return { res, bytes: new Uint8Array(await res.arrayBuffer()) }
}

/**
 * The preview once drawn, as a client asks for it: the consumer Worker draws it while the request waits (up to
 * PREVIEW_WAIT_MS), and a 202 (the drawing still queued on a busy machine, or an Office document's PDF being made)
 * is asked again after a pause, with a deadline.
 */
async function preview(user: TestUser | undefined, path: string, headers: Record<string, string> = {}) {
  const deadline = Date.now() + 120_000
  for (;;) {
    const answer = await previewOnce(user, path, headers)
    if (answer.res.status !== 202 || Date.now() > deadline) return answer
    expect(answer.res.headers.get('retry-after')).toBe('3')
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
}

/** The JSON answer of a preview that fails (asked again while it is 202). */
async function previewJson(user: TestUser, path: string) {
  const answer = await preview(user, path)
  return { status: answer.res.status, body: JSON.parse(new TextDecoder().decode(answer.bytes)) }
}

/** The preview rows of a file, as the files module keeps them. */
async function previewRows(fileId: string) {
  const { results } = await env.DB.prepare(
    'SELECT key, status, size, error, error_status FROM previews WHERE file_id = ? ORDER BY key',
  )
    .bind(fileId)
    .all()
  return results as Array<{
    key: string
    status: string
    size: number
    error: string | null
    error_status: number | null
  }>
}

async function previewObjects(user: TestUser, fileId: string): Promise<string[]> {
  const listed = await env.BUCKET.list({ prefix: `p/${user.id}/${fileId}/` })
  return listed.objects.map((object) => object.key)
}

describe('GET /files/:id/preview', { timeout: 120_000 }, () => {
  it('answers WebP when Accept allows it, PNG when it does not, AVIF on request, fitted to the box', async () => {
    const user = await signUp()
    const file = await uploaded(user, 'wide.png', await twoColourPng())
    const webp = await preview(user, `/files/${file._id}/preview?w=128`, { accept: 'image/avif,image/webp,*/*;q=0.8' })
    expect(webp.res.status).toBe(200)
    expect(webp.res.headers.get('content-type')).toBe('image/webp')
    expect(readImageHeader(webp.bytes)).toMatchObject({ format: 'webp', width: 128, height: 64 })
    const png = await preview(user, `/files/${file._id}/preview?w=128`, { accept: 'image/png' })
    expect(png.res.headers.get('content-type')).toBe('image/png')
    expect(readImageHeader(png.bytes)).toMatchObject({ format: 'png', width: 128, height: 64 })
    const avif = await preview(user, `/files/${file._id}/preview?w=128&format=avif`)
    expect(avif.res.headers.get('content-type')).toBe('image/avif')
    expect(readImageHeader(avif.bytes)).toMatchObject({ format: 'avif', width: 128, height: 64 })
    const decoded = await decodeImage(avif.bytes, TEST_IMAGE_LIMITS)
    expect([decoded.width, decoded.height]).toEqual([128, 64])
    // The three are three stored variants, each counted once.
    expect(await previewObjects(user, file._id)).toHaveLength(3)
  })

  it('contain keeps the whole image in the box; cover fills the box and crops the centre', async () => {
    const user = await signUp()
    const file = await uploaded(user, 'wide.png', await twoColourPng())
    const contain = await decodeImage(
      (await preview(user, `/files/${file._id}/preview?w=256&h=256&format=png`)).bytes,
      TEST_IMAGE_LIMITS,
    )
    expect([contain.width, contain.height]).toEqual([256, 128])
    const cover = await decodeImage(
      (await preview(user, `/files/${file._id}/preview?w=256&h=256&fit=cover&format=png`)).bytes,
      TEST_IMAGE_LIMITS,
    )
    expect([cover.width, cover.height]).toEqual([256, 256])
    const at = (x: number) => [...cover.data.subarray((128 * 256 + x) * 4, (128 * 256 + x) * 4 + 3)]
    expect(at(10)[0]).toBeGreaterThan(180) // red on the left of the centre crop
    expect(at(245)[2]).toBeGreaterThan(180) // blue on the right
  })

  it('refuses sizes outside the fixed set, so variants cannot fill storage', async () => {
    const user = await signUp()
    const file = await uploaded(user, 'p.png', pattern_png)
    for (const query of ['w=100', 'h=4096', 'w=256&h=0', 'fit=stretch', 'format=gif', 'page=0']) {
      const res = await callJson('GET', `/files/${file._id}/preview?${query}`, { token: user.token })
      expect(res.status, query).toBe(400)
      expect(res.body.code).toBe('VALIDATION_FAILED')
    }
    expect(await previewObjects(user, file._id)).toEqual([])
  })

  it('is made once: the second answer comes from storage with the same ETag, and If-None-Match gets 304', async () => {
    const user = await signUp()
    const file = await uploaded(user, 'photo.jpg', pattern_jpg)
    const first = await preview(user, `/files/${file._id}/preview?w=64`)
    expect(first.res.status).toBe(200)
    const etag = first.res.headers.get('etag')!
    expect(etag).toBe(`"${file.hash}.64x64-contain-p1.webp"`)
    expect(first.res.headers.get('cache-control')).toBe('private, max-age=0, must-revalidate')
    expect(first.res.headers.get('vary')).toBe('Accept')
    const second = await preview(user, `/files/${file._id}/preview?w=64`)
    expect(second.res.headers.get('etag')).toBe(etag)
    expect(second.bytes).toEqual(first.bytes)
    const notModified = await preview(user, `/files/${file._id}/preview?w=64`, { 'if-none-match': etag })
    expect(notModified.res.status).toBe(304)
    expect(notModified.bytes.byteLength).toBe(0)
    expect(notModified.res.headers.get('etag')).toBe(etag)
    expect(await previewObjects(user, file._id)).toHaveLength(1)
  })

  it("works from the record's signed preview_url without a bearer token, and never for another user", async () => {
    const alice = await signUp()
    const bob = await signUp()
    const file = await uploaded(alice, 'photo.jpg', pattern_jpg)
    const record = (await callJson('GET', `/files/${file._id}`, { token: alice.token })).body
    expect(record.preview_url).toMatch(new RegExp(`/files/${file._id}/preview\\?token=`))
    const signed = await call(
      'GET',
      `${new URL(record.preview_url!).pathname}${new URL(record.preview_url!).search}&w=64`,
    )
    expect(signed.status).toBe(200)
    expect(signed.headers.get('content-type')).toBe('image/webp')
    const other = await callJson('GET', `/files/${file._id}/preview`, { token: bob.token })
    expect(other).toMatchObject({ status: 404, body: { message: 'file not found' } })
    const tampered = await callJson('GET', `/files/${file._id}/preview?token=${'1'.repeat(10)}.${'A'.repeat(43)}`)
    expect(tampered.status).toBe(401)
  })

  it('previews a PDF page at the box size (page 1 by default), and refuses a page it does not have', async () => {
    const user = await signUp()
    const file = await uploaded(user, 'three.pdf', threePages)
    const first = await decodeImage(
      (await preview(user, `/files/${file._id}/preview?w=512&format=png`)).bytes,
      TEST_IMAGE_LIMITS,
    )
    // A4 portrait: the height fills the box.
    expect(first.height).toBe(512)
    expect(first.width).toBeGreaterThan(350)
    expect(first.width).toBeLessThan(370)
    const second = await preview(user, `/files/${file._id}/preview?w=512&page=2&format=png`)
    expect(second.res.status).toBe(200)
    const cover = await decodeImage(
      (await preview(user, `/files/${file._id}/preview?w=128&h=128&fit=cover&format=png`)).bytes,
      TEST_IMAGE_LIMITS,
    )
    expect([cover.width, cover.height]).toEqual([128, 128])
    const missing = await previewJson(user, `/files/${file._id}/preview?page=4`)
    expect(missing).toMatchObject({
      status: 422,
      body: { message: 'the PDF has 3 pages; page 4 does not exist', code: 'CONVERSION_FAILED' },
    })
  })

  it('previews the first page of a text file', async () => {
    const user = await signUp()
    const file = await uploaded(user, 'notes.txt', `${'Edgefloor previews the first page of text.\n'.repeat(200)}`)
    const image = await decodeImage(
      (await preview(user, `/files/${file._id}/preview?w=256&format=png`)).bytes,
      TEST_IMAGE_LIMITS,
    )
    expect(image.height).toBe(256)
    expect(image.width).toBe(Math.round((256 * 8.27) / 11.69))
    let dark = 0
    for (let i = 0; i < image.data.length; i += 4) if (image.data[i]! < 160) dark++
    expect(dark).toBeGreaterThan(100) // the lines are drawn
  })

  it('previews an Office document from its PDF: 202 with Retry-After while the chain makes it, then the page', {
    timeout: 180_000,
  }, async () => {
    const user = await signUp()
    const file = await uploaded(user, 'hello.docx', officeDocument('hello.docx'))
    const pending = await call('GET', `/files/${file._id}/preview?w=256`, {
      token: user.token,
      headers: { prefer: 'respond-async' },
    })
    expect(pending.status).toBe(202)
    expect(pending.headers.get('retry-after')).toBe('3')
    const body = (await pending.json()) as { job: string }
    expect(pending.headers.get('location')).toBe(`/jobs/${body.job}`)
    const ready = await preview(user, `/files/${file._id}/preview?w=256`, { accept: 'image/png' })
    expect(ready.res.status).toBe(200)
    expect(readImageHeader(ready.bytes)).toMatchObject({ format: 'png', height: 256 })
    // Made through the chain toward .pdf only: the PDF exists, no PNG pages were made for the preview.
    const children = (await callJson('GET', `/files/${file._id}/files`, { token: user.token })).body
    expect(children.map((child) => child.extension)).toEqual(['.pdf'])
  })

  it('is deleted with its file', async () => {
    const user = await signUp()
    const file = await uploaded(user, 'three.pdf', threePages)
    expect((await preview(user, `/files/${file._id}/preview?w=64`)).res.status).toBe(200)
    expect((await preview(user, `/files/${file._id}/preview?w=128&page=2`)).res.status).toBe(200)
    expect(await previewObjects(user, file._id)).toHaveLength(2)
    expect((await callJson('DELETE', `/files/${file._id}`, { token: user.token })).status).toBe(200)
    expect(await previewObjects(user, file._id)).toEqual([])
    expect(
      (await env.DB.prepare('SELECT count(*) AS n FROM previews WHERE file_id = ?')
        .bind(file._id)
        .first<{ n: number }>())!.n,
    ).toBe(0)
  })

  it('is deleted when the content is replaced, and the new content gets a new ETag', async () => {
    const user = await signUp()
    const file = await uploaded(user, 'photo.png', await twoColourPng())
    const before = await preview(user, `/files/${file._id}/preview?w=64`)
    const [oldKey] = await previewObjects(user, file._id)
    const replaced = await callJson('PUT', `/files/${file._id}`, {
      token: user.token,
      body: multipartBody('photo.png', pattern_png),
    })
    expect(replaced.status).toBe(200)
    expect(await previewObjects(user, file._id)).toEqual([])
    const after = await preview(user, `/files/${file._id}/preview?w=64`)
    expect(after.res.headers.get('etag')).not.toBe(before.res.headers.get('etag'))
    expect(after.res.headers.get('etag')).toBe(`"${replaced.body.hash}.64x64-contain-p1.webp"`)
    expect(readImageHeader(after.bytes)).toMatchObject({ width: 64, height: 48 })
    expect(await previewObjects(user, file._id)).not.toContain(oldKey)
  })

  it("counts in the owner's quota: a preview with no room left is refused with 413, and drawn once there is room", async () => {
    const user = await signUp()
    const file = await uploaded(user, 'wide.png', await twoColourPng())
    // The test binds FILES_QUOTA_BYTES to 1 TiB (the consumer Worker's setting too): a record standing for what the
    // user already stores leaves 20 bytes.
    const quota = Number(loadConfig(env).FILES_QUOTA_BYTES)
    const now = Date.now()
    const archiveId = newId(now)
    await env.DB.prepare(
      'INSERT INTO files (id, user_id, name, extension, content_type, size, hash, key, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    )
      .bind(
        archiveId,
        user.id,
        'archive',
        '.bin',
        'application/octet-stream',
        quota - file.size - 20,
        '0'.repeat(64),
        `u/${user.id}/archive-${now}`,
        now,
        now,
      )
      .run()
    const refused = await previewJson(user, `/files/${file._id}/preview?w=512&format=png`)
    expect(refused).toMatchObject({
      status: 413,
      body: { code: 'QUOTA_EXCEEDED', message: expect.stringContaining('storage quota exceeded') },
    })
    expect(await previewObjects(user, file._id)).toEqual([])
    expect(await previewRows(file._id)).toMatchObject([{ status: 'failed', size: 0, error_status: 413 }])
    // With room again, the same preview is drawn when next asked for (a quota failure is not kept), and its bytes
    // are then counted like a file's.
    await env.DB.prepare('DELETE FROM files WHERE id = ?').bind(archiveId).run()
    const made = await preview(user, `/files/${file._id}/preview?w=512&format=png`)
    expect(made.res.status).toBe(200)
    expect(await previewRows(file._id)).toMatchObject([{ status: 'ready', size: made.bytes.byteLength, error: null }])
    const upload = await callWithSettings(
      { FILES_QUOTA_BYTES: String(file.size + made.bytes.byteLength + 5) },
      'POST',
      '/files',
      {
        token: user.token,
        body: multipartBody('more.txt', 'x'.repeat(10)),
      },
    )
    expect(upload.status).toBe(413)
  })

  it('answers 415 for a kind without previews', async () => {
    const user = await signUp()
    const file = await uploaded(user, 'archive.zip', new Uint8Array([0x50, 0x4b, 0x03, 0x04, ...new Array(60).fill(0)]))
    expect((await callJson('GET', `/files/${file._id}`, { token: user.token })).body.preview_url).toBeNull()
    const res = await callJson('GET', `/files/${file._id}/preview`, { token: user.token })
    expect(res).toMatchObject({
      status: 415,
      body: {
        code: 'UNSUPPORTED_FORMAT',
        message: '"archive.zip" has no preview: previews are made of images, PDFs, Office documents and text',
      },
    })
  })
})

describe('hostile inputs through the preview path end as they do through conversions', { timeout: 120_000 }, () => {
  const flood = pattern_png.slice()
  new DataView(flood.buffer).setUint32(16, 60000)
  new DataView(flood.buffer).setUint32(20, 60000)
  const hugeImagePdf = buildPdf([
    {
      width: 200,
      height: 200,
      content: 'q 200 0 0 200 0 0 cm /Im0 Do Q',
      jpeg: { bytes: pattern_jpg, width: 5000, height: 5000 },
    },
  ])

  it.each([
    ['a 60000×60000 PNG header', 'flood.png', flood],
    ['a truncated JPEG', 'cut.jpg', pattern_jpg.slice(0, Math.floor(pattern_jpg.length / 2))],
    ['a corrupt PNG', 'bad.png', pattern_png.map((byte, i) => (i > 40 ? byte ^ 0x5a : byte))],
    ['an encrypted PDF', 'locked.pdf', encrypted],
    ['a truncated PDF', 'cut.pdf', threePages.slice(0, 400)],
    ['a PDF page holding a 25 MP image', 'huge.pdf', hugeImagePdf],
  ])('%s: the same status and reason, nothing stored', async (_case, name, bytes) => {
    const user = await signUp()
    const file = await uploaded(user, name, bytes)
    const converted = await callJson('POST', `/files/${file._id}/convert`, { token: user.token })
    expect(converted.status).toBeGreaterThanOrEqual(400)
    const previewed = await previewJson(user, `/files/${file._id}/preview?w=256`)
    expect(previewed.status).toBe(converted.status)
    expect(converted.body.message).toMatch(/ failed: /)
    expect(previewed.body).toEqual({
      message: converted.body.message!.replace(/^[a-z-]+ on ".*?" failed: /, ''),
      code: converted.body.code,
    })
    expect(await previewObjects(user, file._id)).toEqual([])
    // The failure is kept (PREVIEW_FAILURE_TTL): asked again, it is answered from its row, not drawn again.
    const [failed] = await previewRows(file._id)
    expect(failed).toMatchObject({
      status: 'failed',
      size: 0,
      error: previewed.body.message,
      error_status: previewed.status,
    })
    expect(await previewJson(user, `/files/${file._id}/preview?w=256`)).toEqual(previewed)
    expect(await previewRows(file._id)).toEqual([failed])
  })

  it("refuses a 256-px preview of a page of 20,000 whole-page fills: the paint bound is the largest page's", async () => {
    // A preview draws a small crop, but the bound is on work: 300 times PDF_MAX_PAGE_PIXELS, whatever the scale.
    const user = await signUp()
    const file = await uploaded(user, 'fills.pdf', pdfWholePageFills(20_000))
    const previewed = await previewJson(user, `/files/${file._id}/preview?w=256`)
    expect(previewed).toEqual({
      status: 422,
      body: {
        message: expect.stringMatching(
          /^page 1 would paint \d+\.\d megapixels \(each object's box, weighted by its kind\); at most 660\.0 are painted \(300 times PDF_MAX_PAGE_PIXELS\)$/,
        ),
        code: 'CONVERSION_FAILED',
      },
    })
    expect(await previewObjects(user, file._id)).toEqual([])
  })

  it('an Office document LibreOffice cannot open: the preview answers the failed conversion', {
    timeout: 180_000,
  }, async () => {
    const user = await signUp()
    const file = await uploaded(user, 'broken.docx', officeDocument('hello.docx').slice(0, 300))
    const answer = await preview(user, `/files/${file._id}/preview`)
    expect(answer.res.status).toBeGreaterThanOrEqual(400)
    expect(answer.res.status).toBeLessThan(500)
    const body = JSON.parse(new TextDecoder().decode(answer.bytes))
    expect(body).toMatchObject({
      code: 'CONVERSION_FAILED',
      message: expect.stringMatching(/^office-to-pdf on "broken\.docx" failed: /),
    })
    expect(await previewObjects(user, file._id)).toEqual([])
  })
})

/** What the consumer Worker's drawing is given: the test's real local D1, R2 and settings. */
function drawDeps() {
  return { db: openDatabase(env.DB), bucket: env.BUCKET, config: loadConfig(env), engines: localEngines }
}

const pngParams = { width: 64, height: 64, fit: 'contain' as const, format: 'png' as const, page: 1 }

describe('previews are drawn by the consumer Worker, never in the API request', { timeout: 120_000 }, () => {
  // RFC 7240 §4.1: "The respond-async preference indicates that the client prefers the server to respond
  // asynchronously", answered with 202 and "Preference-Applied: respond-async"; RFC 9110 §15.3.3: a 202's
  // representation "ought to ... point to (or embed) a status monitor" (Location: here the preview's own URL).
  it('Prefer: respond-async answers 202 at once with Retry-After and Location (the same URL); asked again, the preview', async () => {
    const user = await signUp()
    const file = await uploaded(user, 'wide.png', await twoColourPng())
    const path = `/files/${file._id}/preview?w=128&format=png`
    const pending = await previewOnce(user, path, { prefer: 'respond-async' })
    expect(pending.res.status).toBe(202)
    expect(pending.res.headers.get('retry-after')).toBe('3')
    expect(pending.res.headers.get('preference-applied')).toBe('respond-async')
    expect(pending.res.headers.get('location')).toBe(path)
    expect(JSON.parse(new TextDecoder().decode(pending.bytes))).toEqual({
      message: 'the preview is being drawn: ask again in 3 s',
    })
    const ready = await preview(user, path)
    expect(ready.res.status).toBe(200)
    expect(readImageHeader(ready.bytes)).toMatchObject({ format: 'png', width: 128, height: 64 })
    expect(await previewRows(file._id)).toMatchObject([
      { status: 'ready', size: ready.bytes.byteLength, error: null, error_status: null },
    ])
  })

  it('two requests at once for a new preview queue one drawing: one row, one object, the same bytes', async () => {
    const user = await signUp()
    const file = await uploaded(user, 'photo.jpg', pattern_jpg)
    // Only the request whose INSERT wrote the queued row sends the message.
    const db = openDatabase(env.DB)
    const row = (await findFileOf(db, user.id, file._id))!
    const probeKey = `p/${user.id}/${file._id}/${file.hash}/probe`
    expect((await Promise.all([queuePreview(db, row, probeKey), queuePreview(db, row, probeKey)])).sort()).toEqual([
      false,
      true,
    ])
    await env.DB.prepare('DELETE FROM previews WHERE key = ?').bind(probeKey).run()
    const path = `/files/${file._id}/preview?w=256&format=png`
    const [a, b] = await Promise.all([preview(user, path), preview(user, path)])
    expect([a.res.status, b.res.status]).toEqual([200, 200])
    expect(a.bytes).toEqual(b.bytes)
    expect(await previewRows(file._id)).toHaveLength(1)
    expect(await previewObjects(user, file._id)).toHaveLength(1)
  })

  it(`refuses a new preview with 429 and Retry-After while ${PREVIEW_MAX_QUEUED_PER_USER} of the user's are queued, and only theirs`, async () => {
    const user = await signUp()
    const other = await signUp()
    const db = openDatabase(env.DB)
    const file = await uploaded(user, 'photo.jpg', pattern_jpg)
    const row = (await findFileOf(db, user.id, file._id))!
    // Drawings queued and not drawn yet (no message is sent here): the user's limit.
    for (let i = 0; i < PREVIEW_MAX_QUEUED_PER_USER; i++)
      expect(await queuePreview(db, row, `p/${user.id}/${file._id}/${file.hash}/waiting-${i}`)).toBe(true)
    const refused = await call('GET', `/files/${file._id}/preview?w=64`, { token: user.token })
    expect(refused.status).toBe(429)
    expect(refused.headers.get('retry-after')).toBe('3')
    expect(await refused.json()).toMatchObject({
      code: 'RATE_LIMITED',
      message: `${PREVIEW_MAX_QUEUED_PER_USER} of your previews are being drawn: ask again in 3 s`,
    })
    expect(await previewRows(file._id)).toHaveLength(PREVIEW_MAX_QUEUED_PER_USER)
    // Another user's previews are not held back by them.
    const theirs = await uploaded(other, 'photo.jpg', pattern_jpg)
    expect((await preview(other, `/files/${theirs._id}/preview?w=64`)).res.status).toBe(200)
    // Once the user's drawings are done (here: gone), the preview is queued and drawn.
    await env.DB.prepare("DELETE FROM previews WHERE file_id = ? AND key LIKE '%/waiting-%'").bind(file._id).run()
    expect((await preview(user, `/files/${file._id}/preview?w=64`)).res.status).toBe(200)
  })

  it('refuses a page an image or a text does not have before anything is queued', async () => {
    const user = await signUp()
    const image = await uploaded(user, 'photo.jpg', pattern_jpg)
    const text = await uploaded(user, 'notes.txt', 'hello')
    expect(await callJson('GET', `/files/${image._id}/preview?page=2`, { token: user.token })).toMatchObject({
      status: 422,
      body: { code: 'CONVERSION_FAILED', message: 'an image has one page to preview; page 2 does not exist' },
    })
    expect(await callJson('GET', `/files/${text._id}/preview?page=3`, { token: user.token })).toMatchObject({
      status: 422,
      body: { code: 'CONVERSION_FAILED', message: 'a text preview has one page to preview; page 3 does not exist' },
    })
    expect([...(await previewRows(image._id)), ...(await previewRows(text._id))]).toEqual([])
  })

  it('a failure kept past PREVIEW_FAILURE_TTL is drawn again when next asked for (and the sweep deletes it)', async () => {
    const user = await signUp()
    const file = await uploaded(user, 'cut.pdf', threePages.slice(0, 400))
    const failed = await previewJson(user, `/files/${file._id}/preview?w=64`)
    expect(failed.status).toBe(422)
    const expired = Date.now() - loadConfig(env).PREVIEW_FAILURE_TTL * 1000 - 1000
    await env.DB.prepare('UPDATE previews SET updated_at = ? WHERE file_id = ?').bind(expired, file._id).run()
    expect(await previewJson(user, `/files/${file._id}/preview?w=64`)).toEqual(failed)
    const [row] = await env.DB.prepare('SELECT updated_at FROM previews WHERE file_id = ?')
      .bind(file._id)
      .all<{ updated_at: number }>()
      .then((r) => r.results)
    expect(row!.updated_at).toBeGreaterThan(expired) // drawn again, failed again
    // The scheduled sweep deletes failures past the TTL, and only those.
    await env.DB.prepare('UPDATE previews SET updated_at = ? WHERE file_id = ?').bind(expired, file._id).run()
    expect(await sweepPreviewRows(openDatabase(env.DB), loadConfig(env))).toBeGreaterThanOrEqual(1)
    expect(await previewRows(file._id)).toEqual([])
  })

  it('a queued drawing whose message was lost is sent again once it is PREVIEW_REQUEUE_MS old', async () => {
    const user = await signUp()
    const file = await uploaded(user, 'photo.jpg', pattern_jpg)
    const row = (await findFileOf(openDatabase(env.DB), user.id, file._id))!
    // A row queued long ago whose message never came (none is sent here).
    const key = `p/${user.id}/${file._id}/${file.hash}/64x64-contain-p1.png`
    expect(await queuePreview(openDatabase(env.DB), row, key, Date.now() - PREVIEW_REQUEUE_MS - 1000)).toBe(true)
    const answer = await preview(user, `/files/${file._id}/preview?w=64&format=png`)
    expect(answer.res.status).toBe(200)
    expect(await previewRows(file._id)).toMatchObject([{ key, status: 'ready' }])
  })

  it("a drawing that ran out of retries fails with 503 (the waiting request's answer) and is drawn again when next asked for", async () => {
    const user = await signUp()
    const file = await uploaded(user, 'photo.jpg', pattern_jpg)
    const db = openDatabase(env.DB)
    const row = (await findFileOf(db, user.id, file._id))!
    const key = `p/${user.id}/${file._id}/${file.hash}/64x64-contain-p1.png`
    expect(await queuePreview(db, row, key)).toBe(true)
    const deadLetter = await deliver(DEAD_LETTER_QUEUE, [
      { body: { kind: 'preview', preview: { fileId: file._id, userId: user.id, key, params: pngParams } } },
    ])
    expect(deadLetter).toMatchObject({ outcome: 'ok', explicitAcks: ['m1'], retryMessages: [] })
    expect(await previewRows(file._id)).toMatchObject([
      { key, status: 'failed', error: 'the preview could not be drawn: ask again later', error_status: 503 },
    ])
    const again = await preview(user, `/files/${file._id}/preview?w=64&format=png`)
    expect(again.res.status).toBe(200)
  })

  it('a drawing whose file was deleted or replaced meanwhile stores nothing and leaves no row; one failed meanwhile keeps no object', async () => {
    const user = await signUp()
    const db = openDatabase(env.DB)
    const deps = drawDeps()
    // Replaced after the drawing was queued: the replace deleted the row, the drawing finds the content gone.
    const replaced = await uploaded(user, 'photo.jpg', pattern_jpg)
    const before = (await findFileOf(db, user.id, replaced._id))!
    const oldKey = `p/${user.id}/${replaced._id}/${before.hash}/64x64-contain-p1.png`
    expect(await queuePreview(db, before, oldKey)).toBe(true)
    expect(
      (
        await callJson('PUT', `/files/${replaced._id}`, {
          token: user.token,
          body: multipartBody('photo.png', pattern_png),
        })
      ).status,
    ).toBe(200)
    await drawPreview(deps, { fileId: replaced._id, userId: user.id, key: oldKey, params: pngParams })
    expect(await previewObjects(user, replaced._id)).toEqual([])
    expect(await previewRows(replaced._id)).toEqual([])
    // Replaced while it was drawn (after the drawing read the row): the drawn bytes are removed again, no row stays.
    const racing = await uploaded(user, 'photo2.jpg', pattern_jpg)
    const racingRow = (await findFileOf(db, user.id, racing._id))!
    const racingKey = `p/${user.id}/${racing._id}/${racingRow.hash}/64x64-contain-p1.png`
    expect(await queuePreview(db, racingRow, racingKey)).toBe(true)
    expect(
      (
        await callJson('PUT', `/files/${racing._id}`, {
          token: user.token,
          body: multipartBody('photo2.png', pattern_png),
        })
      ).status,
    ).toBe(200)
    expect(await storePreview(deps, racingRow, racingKey, new Uint8Array([1, 2, 3]), 'image/png')).toBe(false)
    expect(await env.BUCKET.head(racingKey)).toBeNull()
    expect(await findPreview(db, racingRow, racingKey)).toBeUndefined()
    // Failed meanwhile (its messages ran out while this delivery still drew): the bytes are removed, the failure stays.
    const late = await uploaded(user, 'late.jpg', pattern_jpg)
    const lateRow = (await findFileOf(db, user.id, late._id))!
    const lateKey = `p/${user.id}/${late._id}/${lateRow.hash}/64x64-contain-p1.png`
    expect(await queuePreview(db, lateRow, lateKey)).toBe(true)
    expect(
      await failPreview(db, lateRow, lateKey, {
        message: 'the preview could not be drawn: ask again later',
        code: 'CONVERTER_UNAVAILABLE',
      }),
    ).toBe(true)
    expect(await storePreview(deps, lateRow, lateKey, new Uint8Array([1, 2, 3]), 'image/png')).toBe(false)
    expect(await env.BUCKET.head(lateKey)).toBeNull()
    expect(await findPreview(db, lateRow, lateKey)).toMatchObject({ status: 'failed', size: 0 })
    // Deleted: the same.
    const deleted = await uploaded(user, 'gone.jpg', pattern_jpg)
    const deletedRow = (await findFileOf(db, user.id, deleted._id))!
    const deletedKey = `p/${user.id}/${deleted._id}/${deletedRow.hash}/64x64-contain-p1.png`
    expect(await queuePreview(db, deletedRow, deletedKey)).toBe(true)
    expect((await callJson('DELETE', `/files/${deleted._id}`, { token: user.token })).status).toBe(200)
    await drawPreview(deps, { fileId: deleted._id, userId: user.id, key: deletedKey, params: pngParams })
    expect(await env.BUCKET.head(deletedKey)).toBeNull()
    expect(
      await env.DB.prepare('SELECT count(*) AS n FROM previews WHERE file_id = ?')
        .bind(deleted._id)
        .first<{ n: number }>(),
    ).toEqual({ n: 0 })
  })
})
