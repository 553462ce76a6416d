// Issue 17, point 5: conversions run in the consumer Worker (wrangler.consumer.toml), never in the API Worker
// (wrangler.toml has no queue consumer: test/config/wrangler-configs.test.ts). Through the real `wrangler dev` of
// both configs: each Worker is given its own TRANSCRIBE_MODEL (test/e2e/dev-worker.ts), and the whisper stand-in
// records the fields of every transcription request, so the request itself tells which Worker made it.
import { beforeAll, describe, expect, inject, it } from 'vitest'
import { EdgefloorClient } from '../../client/index.ts'
import { START_MS, TRANSCRIBE_MODELS, uniqueEmail, waitForServers } from './dev-worker.ts'

const worker = { url: inject('devWorkerUrl') }
const provided = { whisperUrl: inject('whisperUrl'), speechMp3: inject('speechMp3') }

beforeAll(() => waitForServers(worker.url), START_MS)

describe('the consumer Worker under wrangler dev', () => {
  it('runs a conversion the API Worker queued: the transcription request names the consumer Worker\'s model', async () => {
    const client = new EdgefloorClient(worker.url)
    const email = uniqueEmail('consumer')
    await client.register({ email, password: 'a long enough password' })
    await client.login({ email, password: 'a long enough password' })
    const name = `split-${crypto.randomUUID().slice(0, 8)}.mp3`
    const upload = await client.upload(Uint8Array.from(Buffer.from(provided.speechMp3!, 'base64')), { name, type: 'audio/mpeg' })

    const made = await client.convert(upload._id)

    expect(made.length).toBeGreaterThan(0)
    expect(new TextDecoder().decode(await client.downloadBytes(made[0]!._id))).toBe('The quick brown fox. Jumps over the lazy dog.\n')
    const requests = (await (await fetch(`${provided.whisperUrl}/requests?file=${encodeURIComponent(name)}`)).json()) as Array<{ fields: Record<string, string> }>
    expect(requests.map((request) => request.fields.model)).toEqual([TRANSCRIBE_MODELS.consumer])
  })
})
