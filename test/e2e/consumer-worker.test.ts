// Issue 17, point 5: conversions and previews run in the consumer Worker (wrangler.consumer.toml), never in the API
// Worker (wrangler.toml has no queue consumer: test/config/wrangler-configs.test.ts). Through the real `wrangler dev`
// of both configs: each Worker is given its own TRANSCRIBE_MODEL (test/e2e/dev-worker.ts), and the whisper stand-in
// records the fields of every transcription request, so the request itself tells which Worker made it; each is given
// its own PDF_MAX_PAGES too, which only the drawing of a PDF page reads.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { beforeAll, describe, expect, inject, it } from 'vitest'
import { EdgefloorClient } from '../../client/index.ts'
import { readImageHeader } from '../../worker/engines/image/header.ts'
import { gray_png } from '../fixtures/images/images.ts'
import { threePages } from '../fixtures/pdf/pdfs.ts'
import { PDF_MAX_PAGES, pngSize, START_MS, TRANSCRIBE_MODELS, uniqueEmail, waitForServers } from './dev-worker.ts'

const worker = { url: inject('devWorkerUrl') }
const provided = { whisperUrl: inject('whisperUrl'), speechMp3: inject('speechMp3') }

beforeAll(() => waitForServers(worker.url), START_MS)

describe('the consumer Worker under wrangler dev', () => {
  it("runs a conversion the API Worker queued: the transcription request names the consumer Worker's model", async () => {
    const client = new EdgefloorClient(worker.url)
    const email = uniqueEmail('consumer')
    await client.register({ email, password: 'a long enough password' })
    await client.login({ email, password: 'a long enough password' })
    const name = `split-${crypto.randomUUID().slice(0, 8)}.mp3`
    const upload = await client.upload(Uint8Array.from(Buffer.from(provided.speechMp3!, 'base64')), {
      name,
      type: 'audio/mpeg',
    })

    const made = await client.convert(upload._id)

    expect(made.length).toBeGreaterThan(0)
    expect(new TextDecoder().decode(await client.downloadBytes(made[0]!._id))).toBe(
      'The quick brown fox. Jumps over the lazy dog.\n',
    )
    const requests = (await (
      await fetch(`${provided.whisperUrl}/requests?file=${encodeURIComponent(name)}`)
    ).json()) as Array<{ fields: Record<string, string> }>
    expect(requests.map((request) => request.fields.model)).toEqual([TRANSCRIBE_MODELS.consumer])
  })

  it('draws a preview the API Worker queued: a 3-page PDF, though the API Worker allows 1 page (PDF_MAX_PAGES)', async () => {
    expect(PDF_MAX_PAGES).toEqual({ api: '1', consumer: '1000' })
    const client = new EdgefloorClient(worker.url)
    const email = uniqueEmail('preview')
    await client.register({ email, password: 'a long enough password' })
    await client.login({ email, password: 'a long enough password' })
    const upload = await client.upload(threePages, { name: 'three.pdf', type: 'application/pdf' })
    const url = `${upload.preview_url}&w=64&page=3&format=png`

    // Asked to answer at once: 202, to ask again at the same URL after Retry-After.
    const pending = await fetch(url, { headers: { prefer: 'respond-async' } })
    expect(pending.status).toBe(202)
    expect(pending.headers.get('retry-after')).toBe('3')
    expect(new URL(pending.headers.get('location')!, worker.url).href).toBe(url)
    expect(await pending.json()).toEqual({ message: 'the preview is being drawn: ask again in 3 s' })

    // The client waits for the drawing (PREVIEW_WAIT_MS), and asks again after Retry-After on a busy machine.
    const answer = await client.preview(upload._id, { w: 64, page: 3, format: 'png' })
    expect(answer.status).toBe(200)
    expect(answer.headers.get('content-type')).toBe('image/png')
    const png = new Uint8Array(await answer.arrayBuffer())
    expect(new DataView(png.buffer).getUint32(20)).toBe(64) // IHDR height: an A4 page fitted to the 64 px box
  })

  // Issue 34: wrangler.consumer.toml binds the sidecar's Container (GOTENBERG_CONTAINER) and its [dev] section runs
  // no container, so under wrangler dev the consumer converts through the GotenbergContainer object, whose stand-in
  // forwards to GOTENBERG_URL (this run's sidecar): no Docker. An .html and a .md upload go through Chromium's routes.
  it("converts a DOCX, an HTML page and a Markdown file through the sidecar's Container object into PDFs and PNG pages", async () => {
    await waitForServers(worker.url, inject('devSidecarUrl'))
    const client = new EdgefloorClient(worker.url)
    const email = uniqueEmail('container')
    await client.register({ email, password: 'a long enough password' })
    await client.login({ email, password: 'a long enough password' })
    const uploads = [
      {
        name: 'Letter.docx',
        type: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
        bytes: new Uint8Array(readFileSync(join(inject('officeDocumentsDir'), 'hello.docx'))),
      },
      { name: 'Page.html', type: 'text/html', bytes: new TextEncoder().encode('<!doctype html><h1>An HTML page</h1>') },
      { name: 'Notes.md', type: 'text/markdown', bytes: new TextEncoder().encode('# Notes\n\n- one\n- two\n') },
    ]
    for (const { name, type, bytes } of uploads) {
      const upload = await client.upload(bytes, { name, type })
      const made = await client.convert(upload._id)
      const base = name.replace(/\.[^.]+$/, '')
      expect(made.map((file) => [file.name, file.content_type])).toEqual([
        [`${base} (1 of 1)`, 'application/pdf'],
        [`${base} (1 of 1)`, 'image/png'],
      ])
      expect(new TextDecoder().decode((await client.downloadBytes(made[0]!._id)).subarray(0, 5))).toBe('%PDF-')
      expect(pngSize(await client.downloadBytes(made[1]!._id)).width).toBeGreaterThan(0)
    }
    // The object named "sidecar" ran: its storage is in the run's state, under the consumer's class.
    const objects = readdirSync(join(inject('devWorkerState'), 'v3/do/edgefloor-consumer-GotenbergContainer'))
    expect(objects.filter((file) => /^[0-9a-f]{64}\.sqlite$/.test(file))).toHaveLength(1)
  })

  // Issue 29: each engine family runs in an engine Worker of its own (wrangler.engine-*.toml), which the consumer
  // Worker calls through its service bindings; wrangler dev runs all five configs, as Cloudflare runs five Workers.
  it('converts through each engine Worker: a PDF to PNG pages, an image to PNG, a text to PNG pages', async () => {
    const client = new EdgefloorClient(worker.url)
    const email = uniqueEmail('engines')
    await client.register({ email, password: 'a long enough password' })
    await client.login({ email, password: 'a long enough password' })
    const pdf = await client.upload(threePages, { name: 'three.pdf', type: 'application/pdf' })
    expect((await client.convert(pdf._id)).map((file) => file.name)).toEqual([
      'three (1 of 3)',
      'three (2 of 3)',
      'three (3 of 3)',
    ])
    const textFile = await client.upload(new TextEncoder().encode('Hello from the text engine Worker.\n'), {
      name: 'hello.txt',
      type: 'text/plain',
    })
    const pages = await client.convert(textFile._id)
    expect(pages.map((file) => [file.name, file.content_type])).toEqual([['hello (1 of 1)', 'image/png']])
    // A PNG of the text page, re-encoded by the image engine Worker (an image converts whatever made it).
    const image = await client.upload(await client.downloadBytes(pages[0]!._id), {
      name: 'page.bmp.png',
      type: 'image/png',
    })
    const made = await client.convert(image._id)
    expect(made.every((file) => file.content_type === 'image/png')).toBe(true)
    // A failure crosses back intact: a permanent refusal keeps its status and reason.
    const bad = await client.upload(new TextEncoder().encode('%PDF-1.4 not really'), {
      name: 'broken.pdf',
      type: 'application/pdf',
    })
    await expect(client.convert(bad._id)).rejects.toMatchObject({
      status: 422,
      message: 'pdf-to-png on "broken.pdf" failed: the PDF cannot be read: file not in PDF format or corrupted',
    })
  })

  // Issue 29: libavif's encoder is in the AVIF Worker alone (wrangler.engine-avif.toml); each drawing Worker sends it
  // the preview's pixels through its AVIF_ENGINE binding. An AVIF file is an ISO BMFF file whose FileTypeBox has the
  // brand "avif" (AV1 Image File Format, §7.2: "Files shall also include the brand avif"): header.ts reads it.
  it('draws AVIF previews through each drawing Worker and the AVIF Worker: a PDF page, an image, a text', async () => {
    const client = new EdgefloorClient(worker.url)
    const email = uniqueEmail('avif')
    await client.register({ email, password: 'a long enough password' })
    await client.login({ email, password: 'a long enough password' })
    const uploads = [
      { name: 'three.pdf', type: 'application/pdf', bytes: threePages },
      { name: 'gray.png', type: 'image/png', bytes: gray_png },
      { name: 'note.txt', type: 'text/plain', bytes: new TextEncoder().encode('An AVIF preview of a text.\n') },
    ]
    for (const { name, type, bytes } of uploads) {
      const upload = await client.upload(bytes, { name, type })
      const answer = await client.preview(upload._id, { w: 64, format: 'avif' })
      expect([name, answer.status, answer.headers.get('content-type')]).toEqual([name, 200, 'image/avif'])
      const header = readImageHeader(new Uint8Array(await answer.arrayBuffer()))!
      expect(header).toMatchObject({ format: 'avif' })
      expect(Math.max(header.width, header.height)).toBeLessThanOrEqual(64)
    }
  })
})
