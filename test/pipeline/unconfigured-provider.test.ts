// A conversion whose provider is not configured here (audio → text with neither Workers AI nor TRANSCRIBE_URL, as on
// the default local set-up) is refused before any job starts: POST /files/:id/convert answers 503
// CONVERTER_NOT_CONFIGURED naming the setting, and GET /convert/:extension says the target is unavailable and why.
// The tests' AI binding is the local one (it only runs remotely), so an empty TRANSCRIBE_URL is that set-up.
import { env } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { LOCAL_MODE, transcriptionUnavailable } from '../../worker/engines/transcribe/settings'
import { speechWav } from '../fixtures/audio/speech'
import { callJson, callJsonWithSettings } from '../support/api'
import { signUp } from '../support/accounts'
import { multipartBody, uploaded } from '../support/files'

const NO_PROVIDER = { TRANSCRIBE_URL: '' }

describe('audio → text with no transcription provider', () => {
  it('GET /convert/wav says the targets are unavailable and names TRANSCRIBE_URL', async () => {
    const user = await signUp()
    const res = await callJsonWithSettings(NO_PROVIDER, 'GET', '/convert/wav', { token: user.token })
    const reason =
      'audio → text needs Workers AI (the AI binding, which runs only when deployed) or TRANSCRIBE_URL; set TRANSCRIBE_URL to an OpenAI-compatible server (whisper.cpp, speaches, LocalAI, OpenAI)'
    // The transcript's PNG pages (text → PNG) come through the transcript: unavailable with it.
    expect({ status: res.status, body: res.body }).toEqual({
      status: 200,
      body: {
        extension: '.wav',
        accepted: false,
        to: '.txt',
        targets: ['.txt', '.png'],
        reason,
        unavailable: { '.txt': reason, '.png': reason },
      },
    })
  })

  it('POST /files/:id/convert answers 503 CONVERTER_NOT_CONFIGURED with what to set, and starts no job', async () => {
    const user = await signUp()
    // Uploaded with auto-conversion on: no job starts for audio that could only fail.
    const upload = await callJsonWithSettings({ ...NO_PROVIDER, FILES_AUTO_CONVERT: 'true' }, 'POST', '/files', {
      token: user.token,
      body: multipartBody('memo.wav', speechWav),
      headers: { 'x-edgefloor-name': 'memo.wav' },
    })
    expect(upload.status).toBe(201)
    const res = await callJsonWithSettings(NO_PROVIDER, 'POST', `/files/${upload.body._id}/convert`, {
      token: user.token,
      json: {},
    })
    expect({ status: res.status, body: res.body }).toEqual({
      status: 503,
      body: {
        code: 'CONVERTER_NOT_CONFIGURED',
        converter: 'audio-to-text',
        message: expect.stringContaining('set TRANSCRIBE_URL to an OpenAI-compatible server'),
      },
    })
    expect((await callJson('GET', `/files/${upload.body._id}/jobs`, { token: user.token })).body).toEqual([])
  })

  it('names the setting the chosen provider lacks', async () => {
    const user = await signUp()
    const file = await uploaded(user, 'memo.wav', speechWav)
    const openai = await callJsonWithSettings(
      { ...NO_PROVIDER, TRANSCRIBE_PROVIDER: 'openai' },
      'POST',
      `/files/${file._id}/convert`,
      {
        token: user.token,
        json: {},
      },
    )
    expect(openai).toMatchObject({
      status: 503,
      body: {
        code: 'CONVERTER_NOT_CONFIGURED',
        message: expect.stringMatching(/^audio → text: TRANSCRIBE_PROVIDER=openai needs TRANSCRIBE_URL/),
      },
    })
    // Workers AI chosen by name: the URL does not help, the binding does not run here.
    const workersAi = await callJsonWithSettings({ TRANSCRIBE_PROVIDER: 'workers-ai' }, 'GET', '/convert/mp3', {
      token: user.token,
    })
    expect(workersAi.body).toMatchObject({
      accepted: false,
      reason: expect.stringMatching(/^audio → text: TRANSCRIBE_PROVIDER=workers-ai needs Workers AI/),
    })
  })

  it('says nothing of the kind where a provider is configured, nor for conversions without a provider', async () => {
    const user = await signUp()
    // The tests' TRANSCRIBE_URL names a whisper.cpp stand-in.
    expect((await callJson('GET', '/convert/wav', { token: user.token })).body).toEqual({
      extension: '.wav',
      accepted: true,
      to: '.txt',
      targets: ['.txt', '.png'],
    })
    expect((await callJsonWithSettings(NO_PROVIDER, 'GET', '/convert/docx', { token: user.token })).body).toEqual({
      extension: '.docx',
      accepted: true,
      to: '.pdf',
      targets: ['.pdf', '.png', '.txt'],
    })
  })
})

describe('transcriptionUnavailable: whether the AI binding runs here', () => {
  /** An AI binding whose models() answers as given, counting the calls. */
  const binding = (answer: () => Promise<unknown>) => {
    const calls = { n: 0 }
    const models = () => {
      calls.n++
      return answer()
    }
    const ai = { models } as unknown as Ai
    return { ai, calls }
  }
  const auto = { TRANSCRIBE_PROVIDER: 'auto', TRANSCRIBE_URL: '' } as const

  it('takes the local binding (it refuses at once: "needs to be run remotely") as not running, and asks it once', async () => {
    const { ai, calls } = binding(() => Promise.reject(new Error('Binding AI needs to be run remotely')))
    expect(await transcriptionUnavailable(auto, ai)).toMatch(/needs Workers AI .* or TRANSCRIBE_URL/)
    expect(await transcriptionUnavailable(auto, ai)).toMatch(/TRANSCRIBE_URL/)
    expect(calls.n).toBe(1)
    // The tests' own binding says the same (the reason the local set-up has no provider).
    await expect(env.AI.models()).rejects.toThrow(LOCAL_MODE)
  })

  it('takes a binding that answers, or fails for another reason, as running (the job then says why it failed)', async () => {
    const answering = binding(() => Promise.resolve([]))
    expect(await transcriptionUnavailable(auto, answering.ai)).toBeUndefined()
    const failing = binding(() => Promise.reject(new Error('3040: Capacity temporarily exceeded')))
    expect(await transcriptionUnavailable(auto, failing.ai)).toBeUndefined()
    expect(await transcriptionUnavailable(auto, failing.ai)).toBeUndefined()
    expect(failing.calls.n).toBe(2) // not remembered: it may be transient
    expect(await transcriptionUnavailable(auto, undefined)).toMatch(/TRANSCRIBE_URL/)
    expect(
      await transcriptionUnavailable(
        { TRANSCRIBE_PROVIDER: 'auto', TRANSCRIBE_URL: 'http://127.0.0.1:9/v1' },
        undefined,
      ),
    ).toBeUndefined()
  })
})
