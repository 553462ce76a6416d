// Global setup (Node): a loopback server that answers POST /v1/audio/transcriptions as whisper.cpp's server
// does (started with --inference-path /v1/audio/transcriptions): verbose_json with segments, or plain json.
// The uploaded file's name steers it: "json" → {"text"} only, "reject" → 400, "busy" → 503, "flaky" → 503 for
// the first two requests with that name, then an answer. Every request is recorded for the tests
// (GET /requests, or GET /requests?file=NAME for those of one file name).
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer, type IncomingMessage } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestProject } from 'vitest/node'

declare module 'vitest' {
  export interface ProvidedContext {
    whisperUrl: string
    /** Speech made here with espeak-ng and ffmpeg, base64: an MP3 (16 kHz, 24 kb/s) and a WAV (8 kHz PCM). */
    speechMp3: string
    speechWav: string
  }
}

export const SPOKEN = 'The quick brown fox jumps over the lazy dog.'

/** Real speech for the audio tests, made from text by the Debian tools (espeak-ng, ffmpeg). */
function makeSpeech(): { mp3: string; wav: string } {
  const dir = mkdtempSync(join(tmpdir(), 'edgefloor-speech-'))
  try {
    const raw = join(dir, 'speech.wav')
    execFileSync('espeak-ng', ['-w', raw, SPOKEN])
    execFileSync('ffmpeg', [
      '-loglevel',
      'error',
      '-y',
      '-i',
      raw,
      '-ac',
      '1',
      '-ar',
      '16000',
      '-b:a',
      '24k',
      join(dir, 'speech.mp3'),
    ])
    execFileSync('ffmpeg', [
      '-loglevel',
      'error',
      '-y',
      '-i',
      raw,
      '-ac',
      '1',
      '-ar',
      '8000',
      '-c:a',
      'pcm_s16le',
      join(dir, 'speech8k.wav'),
    ])
    return {
      mp3: readFileSync(join(dir, 'speech.mp3')).toString('base64'),
      wav: readFileSync(join(dir, 'speech8k.wav')).toString('base64'),
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

/** The value of a text field and the file part's name and size, from a multipart body. */
function formParts(body: Buffer, contentType: string) {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/.exec(contentType)
  const delimiter = `--${boundary?.[1] ?? boundary?.[2]}`
  const fields: Record<string, string> = {}
  let file: { name: string; size: number } | undefined
  for (const part of body.toString('latin1').split(delimiter).slice(1, -1)) {
    const [head, ...rest] = part.split('\r\n\r\n')
    const content = rest.join('\r\n\r\n').replace(/\r\n$/, '')
    const name = /name="([^"]*)"/.exec(head!)?.[1] ?? ''
    const filename = /filename="([^"]*)"/.exec(head!)?.[1]
    if (filename !== undefined) file = { name: filename, size: Buffer.byteLength(content, 'latin1') }
    else fields[name] = content
  }
  return { fields, file }
}

export default async function setup(project: TestProject) {
  const requests: Array<{
    authorization?: string
    fields: Record<string, string>
    file?: { name: string; size: number }
  }> = []
  const server = createServer(async (request, response) => {
    const url = new URL(request.url ?? '/', 'http://localhost')
    if (request.method === 'POST' && url.pathname === '/v1/audio/transcriptions') {
      const { fields, file } = formParts(await readBody(request), request.headers['content-type'] ?? '')
      requests.push({ authorization: request.headers.authorization, fields, file })
      const json = (status: number, body: unknown) =>
        response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
      if (!file) return json(400, { error: { message: 'no file field' } })
      if (file.name.includes('reject'))
        return json(400, { error: { message: 'Invalid file format.', type: 'invalid_request_error' } })
      if (file.name.includes('busy')) return json(503, { error: { message: 'server busy' } })
      if (file.name.includes('flaky') && requests.filter((seen) => seen.file?.name === file.name).length <= 2) {
        return json(503, { error: { message: 'server busy, try again' } })
      }
      const text = ' The quick brown fox. Jumps over the lazy dog.'
      if (file.name.includes('json') || fields.response_format === 'json') return json(200, { text })
      return json(200, {
        task: 'transcribe',
        language: 'english',
        duration: 3.1,
        text,
        segments: [
          {
            id: 0,
            seek: 0,
            start: 0,
            end: 1.4,
            text: ' The quick brown fox.',
            tokens: [50364, 440],
            temperature: 0,
            avg_logprob: -0.2,
            compression_ratio: 0.9,
            no_speech_prob: 0.01,
          },
          {
            id: 1,
            seek: 0,
            start: 1.4,
            end: 3.1,
            text: ' Jumps over the lazy dog.',
            tokens: [50434, 23089],
            temperature: 0,
            avg_logprob: -0.25,
            compression_ratio: 0.9,
            no_speech_prob: 0.01,
          },
        ],
      })
    }
    if (request.method === 'GET' && url.pathname === '/requests') {
      const name = url.searchParams.get('file')
      const matching = name === null ? requests : requests.filter((seen) => seen.file?.name === name)
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(matching))
      return
    }
    response.writeHead(404).end()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (!address || typeof address === 'string') throw new Error('whisper stand-in did not start')
  project.provide('whisperUrl', `http://127.0.0.1:${address.port}`)
  const speech = makeSpeech()
  project.provide('speechMp3', speech.mp3)
  project.provide('speechWav', speech.wav)
  return () => new Promise<void>((resolve) => server.close(() => resolve()))
}
