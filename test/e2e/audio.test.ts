// Audio → transcript through the real `wrangler dev --local` with TRANSCRIBE_URL set (and no TRANSCRIBE_PROVIDER):
// the default TRANSCRIBE_PROVIDER=auto finds that the local AI binding cannot run and uses the OpenAI-compatible
// server (the whisper.cpp stand-in of the worker tests, test/setup/whisper-server.ts, a global setup of this project).
import { beforeAll, describe, expect, inject, it } from 'vitest'
import { EdgefloorClient, EdgefloorError } from '../../client/index.ts'
import { START_MS, uniqueEmail, waitForServers } from './dev-worker.ts'

/** The run's Worker (test/setup/dev-worker.ts). */
const worker = { url: inject('devWorkerUrl') }
const provided = { whisperUrl: inject('whisperUrl'), speechMp3: inject('speechMp3') }

beforeAll(() => waitForServers(worker.url), START_MS)

async function signedInClient(): Promise<EdgefloorClient> {
  const client = new EdgefloorClient(worker.url)
  const email = uniqueEmail('audio')
  await client.register({ email, password: 'a long enough password', name: 'Audio Test' })
  await client.login({ email, password: 'a long enough password' })
  return client
}

describe('audio under wrangler dev with TRANSCRIBE_URL', () => {
  it('turns an MP3 into a transcript, its WebVTT and a transcript page through the whisper server', async () => {
    const client = await signedInClient()
    const mp3 = Uint8Array.from(Buffer.from(provided.speechMp3!, 'base64'))
    const upload = await client.upload(mp3, { name: 'dev memo.mp3', type: 'audio/mpeg' })
    const made = await client.convert(upload._id)
    expect(made.map((file) => file.name)).toEqual(['dev memo (1 of 2)', 'dev memo (2 of 2)', 'dev memo (1 of 1)'])
    expect(new TextDecoder().decode(await client.downloadBytes(made[0]!._id))).toBe(
      'The quick brown fox. Jumps over the lazy dog.\n',
    )
    const requests = (await (
      await fetch(`${provided.whisperUrl}/requests?file=${encodeURIComponent('dev memo.mp3')}`)
    ).json()) as unknown[]
    expect(requests).toHaveLength(1)
  })

  it('refuses a .wma before any job, with the reason', async () => {
    const client = await signedInClient()
    const upload = await client.upload(new Uint8Array([0x30, 0x26, 0xb2, 0x75, 0x8e, 0x66, 0xcf, 0x11]), {
      name: 'voice.wma',
    })
    const refused = await client.convert(upload._id).catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(EdgefloorError)
    expect(refused).toMatchObject({ status: 422, message: expect.stringContaining('Windows Media Audio') })
  })
})
