// The typed client (client/index.ts) against the real Worker under `wrangler dev --local`: sign-in, the typed
// routes of `hono/client`, upload with X-Edgefloor-* headers, convert and follow the job, download, delete.
import { beforeAll, describe, expect, inject, it } from 'vitest'
import { EdgefloorClient, EdgefloorError, type Job } from '../../client/index.ts'
import { photoJpeg, pngSize, START_MS, uniqueEmail, waitForServers } from './dev-worker.ts'

/** The run's Worker (test/setup/dev-worker.ts). */
const worker = { url: inject('devWorkerUrl') }

beforeAll(() => waitForServers(worker.url), START_MS)

async function signedInClient(): Promise<{ client: EdgefloorClient; email: string }> {
  const client = new EdgefloorClient(worker.url)
  const email = uniqueEmail('client')
  await client.register({ email, password: 'a long enough password', name: 'Client Test' })
  await client.login({ email, password: 'a long enough password' })
  return { client, email }
}

describe('EdgefloorClient', () => {
  it('logs in, keeps the token and sends it with the next calls', async () => {
    const { client, email } = await signedInClient()
    expect(client.token).toMatch(/^eyJ/)
    expect(await client.currentUser()).toMatchObject({ email, name: 'Client Test', role: 'user' })
  })

  it('turns an error answer into EdgefloorError with the status and the message', async () => {
    const client = new EdgefloorClient(worker.url)
    const failure = await client
      .login({ email: uniqueEmail('nobody'), password: 'a long enough password' })
      .catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(EdgefloorError)
    expect(failure).toMatchObject({ status: 401, message: expect.any(String) })
  })

  it('uploads with the X-Edgefloor headers, downloads the same bytes, lists and deletes', async () => {
    const { client } = await signedInClient()
    const jpeg = photoJpeg()
    const modified = new Date('2026-03-01T12:00:00Z')
    const upload = await client.upload(jpeg, {
      name: 'Holiday photo.jpg',
      type: 'image/jpeg',
      modified,
      prefix: 'albums/2026',
    })
    expect(upload).toMatchObject({
      name: 'Holiday photo.jpg',
      extension: '.jpg',
      content_type: 'image/jpeg',
      size: jpeg.byteLength,
      parent_file: null,
    })
    expect(upload.file_modified_at).toBe(modified.toISOString())
    expect(await client.downloadBytes(upload._id)).toEqual(jpeg)
    const partial = await client.download(upload._id, { range: 'bytes=0-3' })
    expect(partial.status).toBe(206)
    expect(new Uint8Array(await partial.arrayBuffer())).toEqual(jpeg.slice(0, 4))
    expect((await client.files()).map((file) => file._id)).toEqual([upload._id])

    expect(await client.deleteFile(upload._id)).toEqual({ deleted: [upload._id] })
    const gone = await client.file(upload._id).catch((error: unknown) => error)
    expect(gone).toBeInstanceOf(EdgefloorError)
    expect(gone).toMatchObject({ status: 404 })
  })

  it('reports a conversion nothing accepts as EdgefloorError with the API message', async () => {
    const { client } = await signedInClient()
    const upload = await client.upload(new TextEncoder().encode('not convertible'), { name: 'notes.bin' })
    const refused = await client.convert(upload._id).catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(EdgefloorError)
    expect(refused).toMatchObject({ status: 415, message: expect.any(String) })
  })

  it('converts a JPEG to PNG, follows the job and downloads the PNG', async () => {
    const { client } = await signedInClient()
    const upload = await client.upload(photoJpeg(), { name: 'Holiday photo.jpg', type: 'image/jpeg' })
    const seen: Job['status'][] = []
    const created = await client.convert(upload._id, {
      deadlineMs: 60_000,
      intervalMs: 200,
      onProgress: (job) => seen.push(job.status),
    })
    expect(created).toHaveLength(1)
    const png = created[0]!
    expect(png).toMatchObject({ extension: '.png', content_type: 'image/png', parent_file: upload._id })
    expect(seen.at(-1) ?? 'done').toBe('done')
    expect(pngSize(await client.downloadBytes(png._id))).toEqual({ width: 160, height: 120 })
    const deleted = await client.deleteFile(upload._id)
    expect(deleted.deleted.sort()).toEqual([upload._id, png._id].sort())
  })
})
