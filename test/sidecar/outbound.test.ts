// The sidecar's outbound requests (sidecar/outbound.ts, download.ts, webhook.ts) against loopback servers that
// misbehave on purpose: Gotenberg's downloadFrom and webhook features, each URL under an allow/deny list and the
// private-address rule (like the Worker's WEBHOOK_ALLOWED_HOSTS), with time and size limits. No LibreOffice here:
// the scenarios in gotenberg-scenarios.test.ts run the same features through the real sidecar.
import { afterEach, describe, expect, it } from 'vitest'
import { addDownloads, type DownloadSettings } from '../../sidecar/download'
import { FormError } from '../../sidecar/gotenberg-form'
import { checkUrl, isPrivateAddress, OutboundError, UrlRefusedError, type UrlPolicy } from '../../sidecar/outbound'
import { readWebhook, sendToWebhook, WebhookHeaderError, type WebhookSettings } from '../../sidecar/webhook'
import { startReceiver, type LoopbackReceiver } from '../support/loopback-receiver'

const LOOPBACK: UrlPolicy = { privateHosts: ['127.0.0.1'] }
const NOTHING_PRIVATE: UrlPolicy = { privateHosts: [] }
const downloads = (policy: UrlPolicy = LOOPBACK, more: Partial<DownloadSettings> = {}): DownloadSettings => ({
  disabled: false,
  policy,
  timeoutMs: 10_000,
  maxBytes: 1024 * 1024,
  ...more,
})
const webhooks = (policy: UrlPolicy = LOOPBACK, more: Partial<WebhookSettings> = {}): WebhookSettings => ({
  disabled: false,
  policy,
  errorPolicy: policy,
  maxRetry: 2,
  retryMinWaitMs: 10,
  retryMaxWaitMs: 50,
  timeoutMs: 10_000,
  ...more,
})

const servers: LoopbackReceiver[] = []
async function serve(...args: Parameters<typeof startReceiver>): Promise<LoopbackReceiver> {
  const server = await startReceiver(...args)
  servers.push(server)
  return server
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()))
})

function formWith(downloadFrom: unknown): FormData {
  const form = new FormData()
  form.append('downloadFrom', typeof downloadFrom === 'string' ? downloadFrom : JSON.stringify(downloadFrom))
  return form
}

describe('private addresses', () => {
  it.each([
    ['127.0.0.1', true],
    ['10.1.2.3', true],
    ['172.20.0.1', true],
    ['192.168.1.1', true],
    ['169.254.169.254', true],
    ['100.64.0.1', true],
    ['0.0.0.0', true],
    ['::1', true],
    ['::', true],
    ['fd00::1', true],
    ['fe80::1', true],
    ['::ffff:127.0.0.1', true],
    ['::ffff:10.0.0.1', true],
    // IPv6 spellings of an IPv4 address (shared/addresses.ts): IPv4-compatible (RFC 4291 §2.5.5.1), IPv4-mapped,
    // IPv4-translated (RFC 6145), NAT64 (RFC 6052 §2.1 "64:ff9b::/96", RFC 8215 "64:ff9b:1::/48"), Teredo
    // (RFC 4380, 2001::/32), 6to4 (RFC 3056, 2002::/16): each is refused whatever IPv4 address it carries.
    ['::7f00:1', true],
    ['::127.0.0.1', true],
    ['::ffff:7f00:1', true],
    ['::ffff:0:127.0.0.1', true],
    ['64:ff9b::7f00:1', true],
    ['64:ff9b::808:808', true],
    ['64:ff9b:1::a00:1', true],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', true],
    ['2002:7f00:1::1', true],
    ['2002:808:808::1', true],
    ['198.18.0.1', true],
    ['192.0.2.1', true],
    ['240.0.0.1', true],
    ['255.255.255.255', true],
    ['2001:db8::1', true],
    ['ff02::1', true],
    ['8.8.8.8', false],
    ['1.1.1.1', false],
    ['2606:4700:4700::1111', false],
  ])('%s is private: %s', (address, expected) => {
    expect(isPrivateAddress(address)).toBe(expected)
  })

  it.each([
    '[::7f00:1]',
    '[::ffff:0:127.0.0.1]',
    '[::ffff:127.0.0.1]',
    '[64:ff9b::7f00:1]',
    '[2002:7f00:1::1]',
    '[2001:0:4136:e378:8000:63bf:80ff:fffe]',
    '[::]',
  ])('refuses the literal %s (even with 127.0.0.1 allowed by name)', (host) => {
    expect(() => checkUrl(`http://${host}:9/x`, LOOPBACK)).toThrow(/special-use address/)
  })

  it.each(['0x7f.1', '2130706433', '127.1', '0177.0.0.1'])(
    'refuses the IPv4 spelling %s (the URL parser writes it as 127.0.0.1)',
    (host) => {
      expect(() => checkUrl(`http://${host}:9/x`, NOTHING_PRIVATE)).toThrow(/special-use address \(loopback\)/)
    },
  )

  it('refuses a private literal unless its host is allowed by name, and any scheme but http(s)', () => {
    expect(() => checkUrl('http://127.0.0.1:9/x', NOTHING_PRIVATE)).toThrow(UrlRefusedError)
    expect(() => checkUrl('http://[::ffff:127.0.0.1]:9/x', LOOPBACK)).toThrow(UrlRefusedError)
    expect(() => checkUrl('http://169.254.169.254/latest/meta-data/', LOOPBACK)).toThrow(UrlRefusedError)
    expect(() => checkUrl('file:///etc/passwd', LOOPBACK)).toThrow(UrlRefusedError)
    expect(checkUrl('http://127.0.0.1:9/x', LOOPBACK).port).toBe('9')
  })

  it("applies Gotenberg's allow and deny expressions to the whole URL", () => {
    const policy = { ...LOOPBACK, allow: /^http:\/\/127\.0\.0\.1:\d+\/static\//, deny: /secret/ }
    expect(() => checkUrl('http://127.0.0.1:9/other/a.docx', policy)).toThrow(/allowed list/)
    expect(() => checkUrl('http://127.0.0.1:9/static/secret.docx', policy)).toThrow(/denied list/)
    expect(checkUrl('http://127.0.0.1:9/static/a.docx', policy).pathname).toBe('/static/a.docx')
  })
})

describe('downloadFrom (Gotenberg 8: [{"url", "extraHttpHeaders", "embedded"}])', () => {
  it('adds the file under its Content-Disposition name, or as an embed when embedded', async () => {
    const server = await serve((request, response) => {
      if (request.path === '/named')
        return void response.writeHead(200, { 'content-disposition': 'attachment; filename="report.docx"' }).end('doc')
      response.writeHead(200).end('xml')
    })
    const form = formWith([{ url: `${server.url}/named` }, { url: `${server.url}/files/invoice.xml`, embedded: true }])
    await addDownloads(form, downloads())
    expect((form.get('files') as File).name).toBe('report.docx')
    expect(await (form.get('files') as File).text()).toBe('doc')
    expect((form.get('embeds') as File).name).toBe('invoice.xml')
  })

  it('refuses a loopback URL when no private host is allowed, without connecting', async () => {
    const server = await serve()
    await expect(addDownloads(formWith([{ url: `${server.url}/a.docx` }]), downloads(NOTHING_PRIVATE))).rejects.toThrow(
      UrlRefusedError,
    )
    expect(server.received).toEqual([])
  })

  it('refuses a name that resolves to a loopback address (localhost) though 127.0.0.1 is allowed', async () => {
    const server = await serve()
    await expect(
      addDownloads(formWith([{ url: `http://localhost:${server.port}/a.docx` }]), downloads()),
    ).rejects.toThrow(/resolves to a special-use address/)
    expect(server.received).toEqual([])
  })

  it.each([
    ['the cloud metadata address', 'http://169.254.169.254/latest/meta-data/'],
    ['a private network', 'http://10.0.0.1/a.docx'],
    ['localhost by name', 'http://localhost:1/a.docx'],
  ])('refuses a redirect to %s', async (_, location) => {
    const server = await serve((_, response) => void response.writeHead(302, { location }).end())
    await expect(addDownloads(formWith([{ url: `${server.url}/a.docx` }]), downloads())).rejects.toThrow(
      UrlRefusedError,
    )
    expect(server.received).toHaveLength(1)
  })

  it('follows at most 5 redirects', async () => {
    const server = await serve(
      (request, response) => void response.writeHead(302, { location: `${request.path}x` }).end(),
    )
    await expect(addDownloads(formWith([{ url: `${server.url}/a` }]), downloads())).rejects.toThrow(
      /redirects more than 5 times/,
    )
    expect(server.received).toHaveLength(6)
  })

  it('fails on an answer other than 2xx, naming the status', async () => {
    const server = await serve((_, response) => void response.writeHead(404).end('not here'))
    await expect(addDownloads(formWith([{ url: `${server.url}/a.docx` }]), downloads())).rejects.toThrow(/answered 404/)
  })

  it('stops reading a huge body at the size limit, declared or not', async () => {
    const chunk = Buffer.alloc(64 * 1024, 1)
    const server = await serve(async (request, response) => {
      response.writeHead(200, request.path === '/declared' ? { 'content-length': String(64 * 1024 * 1024) } : {})
      // Endless unless the sidecar hangs up: it must stop at its limit, not read 64 MB.
      for (let i = 0; i < 1024 && !response.destroyed; i++)
        await new Promise<void>((resolve) => response.write(chunk, () => resolve()))
      response.end()
    })
    for (const path of ['/declared', '/chunked']) {
      await expect(
        addDownloads(formWith([{ url: `${server.url}${path}` }]), downloads(LOOPBACK, { maxBytes: 256 * 1024 })),
      ).rejects.toThrow(/larger than 262144 bytes/)
    }
  })

  it('counts the size limit over all the downloads of one request', async () => {
    const server = await serve((_, response) => void response.writeHead(200).end(Buffer.alloc(600)))
    await expect(
      addDownloads(
        formWith([{ url: `${server.url}/1.docx` }, { url: `${server.url}/2.docx` }]),
        downloads(LOOPBACK, { maxBytes: 1000 }),
      ),
    ).rejects.toThrow(OutboundError)
  })

  it('gives up on a body that trickles past the time limit', async () => {
    const server = await serve((_, response) => {
      response.writeHead(200)
      response.write('a') // then nothing: the answer never ends
    })
    await expect(
      addDownloads(formWith([{ url: `${server.url}/slow.docx` }]), downloads(LOOPBACK, { timeoutMs: 300 })),
    ).rejects.toThrow(/took more than 300 ms/)
  })

  it.each([
    ['not JSON', 'foo', /unmarshal downloadFrom/],
    ['not an array', { url: 'http://127.0.0.1/' }, /must be a JSON array/],
    ['an entry without url', [{}], /needs a 'url' string/],
    [
      'a header with a line break',
      [{ url: 'http://127.0.0.1/', extraHttpHeaders: { 'X-Foo': 'a\r\nHost: evil' } }],
      /extraHttpHeaders/,
    ],
    ['too many entries', Array.from({ length: 33 }, () => ({ url: 'http://127.0.0.1/' })), /more than 32 downloads/],
  ])('answers 400 naming the field for %s', async (_, value, message) => {
    const error = await addDownloads(formWith(value), downloads()).catch((caught) => caught)
    expect(error).toBeInstanceOf(FormError)
    expect(error.status).toBe(400)
    expect(error.message).toMatch(/^Invalid form data: form field 'downloadFrom' is invalid/)
    expect(error.message).toMatch(message)
  })
})

describe('webhooks (Gotenberg 8: Gotenberg-Webhook-Url, -Error-Url, -Method, -Error-Method, -Extra-Http-Headers)', () => {
  const headers = (url: string, more: Record<string, string> = {}) => ({
    'gotenberg-webhook-url': `${url}/webhook`,
    'gotenberg-webhook-error-url': `${url}/webhook/error`,
    ...more,
  })
  const describeError = (error: unknown): [number, string] =>
    error instanceof FormError ? [error.status, error.message] : [500, 'Internal Server Error']
  const pdf = {
    body: new TextEncoder().encode('%PDF-1.7 result'),
    type: 'application/pdf',
    disposition: 'attachment; filename="foo.pdf"',
  }

  it.each([
    [
      'no error URL',
      { 'gotenberg-webhook-url': 'http://127.0.0.1/webhook' },
      400,
      "Invalid 'Gotenberg-Webhook-Error-Url' header: empty value or header not provided",
    ],
    [
      'a GET method',
      headers('http://127.0.0.1', { 'gotenberg-webhook-method': 'get' }),
      400,
      "Invalid 'Gotenberg-Webhook-Method' header value: expected 'POST', 'PATCH' or 'PUT', but got 'GET'",
    ],
    [
      'extra headers that are not JSON',
      headers('http://127.0.0.1', { 'gotenberg-webhook-extra-http-headers': '{' }),
      400,
      /^Invalid 'Gotenberg-Webhook-Extra-Http-Headers' header value/,
    ],
    [
      'an extra header with a line break',
      headers('http://127.0.0.1', { 'gotenberg-webhook-extra-http-headers': '{"X-A":"1\\r\\nX-B: 2"}' }),
      400,
      /^Invalid 'Gotenberg-Webhook-Extra-Http-Headers' header value/,
    ],
    [
      'a private URL',
      headers('http://10.0.0.1'),
      403,
      /^Forbidden: the 'Gotenberg-Webhook-Url' header: .* names a special-use address \(private\)/,
    ],
    [
      'an IPv4-compatible loopback URL',
      headers('http://[::7f00:1]'),
      403,
      /^Forbidden: the 'Gotenberg-Webhook-Url' header: .* names a special-use address \(ipv4Compatible\)/,
    ],
    [
      'an IPv4-translated loopback URL',
      headers('http://[::ffff:0:127.0.0.1]'),
      403,
      /^Forbidden: the 'Gotenberg-Webhook-Url' header: .* names a special-use address \(rfc6145\)/,
    ],
  ])('refuses %s before reading the body', (_, given, status, message) => {
    const error = (() => {
      try {
        readWebhook(given, webhooks())
      } catch (caught) {
        return caught as WebhookHeaderError
      }
    })()
    expect(error).toBeInstanceOf(WebhookHeaderError)
    expect(error!.status).toBe(status)
    expect(error!.message).toMatch(message)
  })

  it('is off unless asked for, and refused with a 400 when disabled', () => {
    expect(readWebhook({}, webhooks())).toBeUndefined()
    expect(() => readWebhook(headers('http://127.0.0.1'), webhooks(LOOPBACK, { disabled: true }))).toThrow(
      /webhooks are disabled/,
    )
  })

  it('sends the result with the chosen method and extra headers, which never replace its own', async () => {
    const server = await serve()
    const webhook = readWebhook(
      headers(server.url, {
        'gotenberg-webhook-method': 'put',
        'gotenberg-webhook-extra-http-headers': '{"X-Foo":"bar","Content-Type":"text/plain"}',
      }),
      webhooks(),
    )!
    await sendToWebhook(webhook, Promise.resolve(pdf), describeError, 'trace-1', webhooks(), () => {})
    const delivery = await server.request('/webhook')
    expect(delivery.method).toBe('PUT')
    expect(delivery.headers).toMatchObject({
      'x-foo': 'bar',
      'content-type': 'application/pdf',
      'gotenberg-trace': 'trace-1',
      'content-disposition': 'attachment; filename="foo.pdf"',
      'user-agent': 'Gotenberg',
    })
    expect(delivery.body.toString()).toBe('%PDF-1.7 result')
  })

  it('retries a 503 and delivers once', async () => {
    let calls = 0
    const server = await serve((_, response) => void response.writeHead(++calls === 1 ? 503 : 200).end())
    await sendToWebhook(
      readWebhook(headers(server.url), webhooks())!,
      Promise.resolve(pdf),
      describeError,
      't',
      webhooks(),
      () => {},
    )
    expect(server.received.map((entry) => entry.path)).toEqual(['/webhook', '/webhook'])
  })

  it("sends a failed conversion's status and message as JSON to the error URL", async () => {
    const server = await serve()
    const failed = Promise.reject(new FormError("Invalid form data: form field 'landscape' is invalid"))
    await sendToWebhook(
      readWebhook(headers(server.url, { 'gotenberg-webhook-error-method': 'PATCH' }), webhooks())!,
      failed,
      describeError,
      'trace-2',
      webhooks(),
      () => {},
    )
    const delivery = await server.request('/webhook/error')
    expect(delivery.method).toBe('PATCH')
    expect(delivery.headers['content-type']).toBe('application/json')
    expect(delivery.headers['gotenberg-trace']).toBe('trace-2')
    expect(JSON.parse(delivery.body.toString())).toEqual({
      status: 400,
      message: "Invalid form data: form field 'landscape' is invalid",
    })
    expect(server.received.filter((entry) => entry.path === '/webhook')).toEqual([])
  })

  it('reports to the error URL when the webhook keeps failing, after its retries', async () => {
    const server = await serve(
      (request, response) => void response.writeHead(request.path === '/webhook' ? 500 : 200).end(),
    )
    await sendToWebhook(
      readWebhook(headers(server.url), webhooks())!,
      Promise.resolve(pdf),
      describeError,
      't',
      webhooks(),
      () => {},
    )
    expect(server.received.filter((entry) => entry.path === '/webhook')).toHaveLength(3)
    expect(JSON.parse((await server.request('/webhook/error')).body.toString())).toEqual({
      status: 500,
      message: 'Internal Server Error',
    })
  })
})
