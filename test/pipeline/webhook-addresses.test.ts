// Which addresses a job's callback_url may reach: only global unicast ones, by the classifier the sidecar uses too
// (shared/addresses.ts). Literals are checked as written, in every IPv6 spelling of an IPv4 address; names are
// resolved (the loopback receiver's DNS-over-HTTPS stand-in plays 1.1.1.1) and refused when any address they have
// is special-use. The URL is checked at the request, whatever the chain, also when nothing is converted.
import { env } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { checkCallbackUrl, resolveHost } from '../../worker/pipeline/webhooks'
import { loadConfig } from '../../worker/config'
import { callJson, callJsonWithSettings } from '../support/api'
import { signUp } from '../support/accounts'
import { uploaded } from '../support/files'

/** The Worker's settings with nothing allowed by name (the suite allows the loopback receiver). */
const STRICT = { WEBHOOK_ALLOWED_HOSTS: '' }

async function convertWith(callbackUrl: string, name = 'n.txt', to?: string) {
  const user = await signUp()
  const file = await uploaded(user, name, 'hello')
  const { status, body } = await callJsonWithSettings(STRICT, 'POST', `/files/${file._id}/convert`, {
    token: user.token,
    json: { callback_url: callbackUrl, ...(to ? { to } : {}) },
  })
  const jobs = await env.DB.prepare('SELECT COUNT(*) AS n FROM jobs WHERE file_id = ?').bind(file._id).first('n')
  return { status, body, jobs }
}

describe('callback_url addresses', { timeout: 120_000 }, () => {
  it.each([
    // IPv4-compatible (RFC 4291 §2.5.5.1: "::/96 … deprecated"), IPv4-mapped, IPv4-translated (RFC 6145: ::ffff:0:0/96)
    ['https://[::7f00:1]/hook', 'ipv4Compatible'],
    // The URL parser writes [::127.0.0.1] as [::7f00:1].
    ['https://[::127.0.0.1]/hook', 'ipv4Compatible'],
    ['https://[::ffff:127.0.0.1]/hook', 'ipv4Mapped'],
    ['https://[::ffff:0:127.0.0.1]/hook', 'rfc6145'],
    // NAT64 (RFC 6052 §2.1: "64:ff9b::/96"; RFC 8215: "64:ff9b:1::/48"), Teredo (RFC 4380: 2001::/32), 6to4 (RFC 3056: 2002::/16)
    ['https://[64:ff9b::a9fe:a9fe]/latest/meta-data', 'rfc6052'],
    ['https://[64:ff9b:1::7f00:1]/hook', 'rfc6052'],
    ['https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/hook', 'teredo'],
    ['https://[2002:7f00:1::1]/hook', '6to4'],
    ['https://[fec0::1]/hook', 'deprecatedSiteLocal'],
    ['https://[2001:db8::1]/hook', 'reserved'],
    ['https://0177.0.0.1/hook', 'loopback'],
    ['https://198.18.0.1/hook', 'reserved'],
  ])('refuses %s (%s) with 400 CALLBACK_URL_REFUSED and makes no job', async (callbackUrl, range) => {
    const res = await convertWith(callbackUrl)
    expect(res.status).toBe(400)
    expect(res.body).toEqual({
      code: 'CALLBACK_URL_REFUSED',
      message: `callback_url names a special-use address (${range}): only global unicast addresses are reached`,
    })
    expect(res.jobs).toBe(0)
  })

  it.each([
    ['loopback.test', '127.0.0.1', 'loopback'],
    ['metadata.test', '169.254.169.254', 'linkLocal'],
    ['mapped.test', '::ffff:7f00:1', 'ipv4Mapped'],
    ['nat64.test', '64:ff9b::a9fe:a9fe', 'rfc6052'],
    ['mixed.test', 'fd00::1', 'uniqueLocal'],
  ])('refuses a name that resolves to a special-use address: %s → %s', async (host, address, range) => {
    const res = await convertWith(`https://${host}/hook`)
    expect(res).toMatchObject({
      status: 400,
      body: {
        code: 'CALLBACK_URL_REFUSED',
        message: `callback_url resolves to ${address}, which is a special-use address (${range}): only global unicast addresses are reached`,
      },
      jobs: 0,
    })
  })

  it('refuses localhost names without asking DNS', async () => {
    const res = await convertWith('https://api.localhost./hook')
    expect(res).toMatchObject({
      status: 400,
      body: { code: 'CALLBACK_URL_REFUSED', message: 'callback_url may not name localhost' },
    })
  })

  it('checks callback_url also when nothing is converted (to: .txt on a text file)', async () => {
    const res = await convertWith('https://[::7f00:1]/hook', 'n.txt', 'txt')
    expect(res).toMatchObject({ status: 400, body: { code: 'CALLBACK_URL_REFUSED' } })
    const user = await signUp()
    const file = await uploaded(user, 'n.txt', 'hello')
    const ok = await callJson('POST', `/files/${file._id}/convert`, { token: user.token, json: { to: 'txt' } })
    expect(ok.status).toBe(200)
  })

  it('resolves through WEBHOOK_DNS_URL, and takes a name it cannot resolve (the platform refuses private addresses then)', async () => {
    const config = loadConfig({ ...env, ...STRICT })
    expect(await resolveHost(config, 'mixed.test')).toEqual(['93.184.215.14', 'fd00::1'])
    expect(await resolveHost(config, 'nowhere.test')).toEqual([])
    // A resolver that fails (404 here; offline, 1.1.1.1 cannot be reached).
    const unresolvable = loadConfig({ ...env, ...STRICT, WEBHOOK_DNS_URL: `${env.WEBHOOK_RECEIVER_URL}/no-resolver` })
    expect(await resolveHost(unresolvable, 'loopback.test')).toBeUndefined()
    expect(await checkCallbackUrl(unresolvable, 'https://loopback.test/hook')).toBe('https://loopback.test/hook')
    expect(await checkCallbackUrl(config, 'https://[2606:4700:4700::1111]/hook')).toBe(
      'https://[2606:4700:4700::1111]/hook',
    )
  })
})
