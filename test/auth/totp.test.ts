// The TOTP second factor. The algorithm against its references: RFC 4226 Appendix D (HOTP), RFC 6238 Appendix B
// (TOTP with SHA-1, SHA-256 and SHA-512) and RFC 4648 §10 (base32). Then enrolment, login's second step, recovery
// codes, replays and the rate limit through the Worker.
import { env } from 'cloudflare:test'
import { SignJWT } from 'jose'
import { describe, expect, it } from 'vitest'
import { base32Decode, base32Encode, hotp, matchingStep, totp, type OtpAlgorithm } from '../../worker/auth/otp'
import { call, callJson } from '../support/api'
import { signUp, type TestUser } from '../support/accounts'

const ascii = (text: string) => new TextEncoder().encode(text)

describe('one-time passwords against their RFCs', () => {
  it('HOTP: RFC 4226 Appendix D, secret "12345678901234567890", counts 0 to 9', async () => {
    const expected = [
      '755224',
      '287082',
      '359152',
      '969429',
      '338314',
      '254676',
      '287922',
      '162583',
      '399871',
      '520489',
    ]
    const secret = ascii('12345678901234567890')
    expect(await Promise.all(expected.map((_, count) => hotp(secret, count)))).toEqual(expected)
  })

  // RFC 6238 Appendix B: "The test token shared secret uses the ASCII string value "12345678901234567890"" for
  // HMAC-SHA1 (32 bytes for SHA256 and 64 for SHA512, the same digits repeated), T0 = 0, X = 30, 8 digits.
  const seeds: Record<OtpAlgorithm, string> = {
    'SHA-1': '12345678901234567890',
    'SHA-256': '12345678901234567890123456789012',
    'SHA-512': '1234567890123456789012345678901234567890123456789012345678901234',
  }
  const table: Array<[number, string, OtpAlgorithm]> = [
    [59, '94287082', 'SHA-1'],
    [59, '46119246', 'SHA-256'],
    [59, '90693936', 'SHA-512'],
    [1111111109, '07081804', 'SHA-1'],
    [1111111109, '68084774', 'SHA-256'],
    [1111111109, '25091201', 'SHA-512'],
    [1111111111, '14050471', 'SHA-1'],
    [1111111111, '67062674', 'SHA-256'],
    [1111111111, '99943326', 'SHA-512'],
    [1234567890, '89005924', 'SHA-1'],
    [1234567890, '91819424', 'SHA-256'],
    [1234567890, '93441116', 'SHA-512'],
    [2000000000, '69279037', 'SHA-1'],
    [2000000000, '90698825', 'SHA-256'],
    [2000000000, '38618901', 'SHA-512'],
    [20000000000, '65353130', 'SHA-1'],
    [20000000000, '77737706', 'SHA-256'],
    [20000000000, '47863826', 'SHA-512'],
  ]
  it.each(table)('TOTP: RFC 6238 Appendix B at %i s is %s (%s)', async (time, code, algorithm) => {
    expect(await totp(ascii(seeds[algorithm]), time, { algorithm, digits: 8, periodSeconds: 30 })).toBe(code)
  })

  it('accepts a code one step either side of now and no further (RFC 6238 §5.2)', async () => {
    const secret = ascii(seeds['SHA-1'])
    const now = 1111111111
    const step = Math.floor(now / 30)
    for (const offset of [-1, 0, 1])
      expect(await matchingStep(secret, await totp(secret, now + offset * 30), now)).toBe(step + offset)
    for (const offset of [-2, 2])
      expect(await matchingStep(secret, await totp(secret, now + offset * 30), now)).toBeUndefined()
    for (const bad of ['', '12345', '1234567', '12345a', ' 123456', '１２３４５６'])
      expect(await matchingStep(secret, bad, now)).toBeUndefined()
  })

  it('base32: RFC 4648 §10 test vectors (unpadded), and decoding refuses other characters', () => {
    const vectors: Array<[string, string]> = [
      ['', ''],
      ['f', 'MY'],
      ['fo', 'MZXQ'],
      ['foo', 'MZXW6'],
      ['foob', 'MZXW6YQ'],
      ['fooba', 'MZXW6YTB'],
      ['foobar', 'MZXW6YTBOI'],
    ]
    for (const [plain, encoded] of vectors) {
      expect(base32Encode(ascii(plain))).toBe(encoded)
      expect(new TextDecoder().decode(base32Decode(encoded))).toBe(plain)
    }
    expect(new TextDecoder().decode(base32Decode('MZXW6YTBOI======'))).toBe('foobar')
    expect(base32Decode('MZXW1')).toBeUndefined()
  })
})

const nowSeconds = () => Date.now() / 1000

/** Enrols a TOTP factor for the user and confirms it; returns the secret and the recovery codes. */
async function enrol(user: TestUser) {
  const started = await callJson('POST', '/auth/totp', { token: user.token })
  expect(started.status).toBe(201)
  const uri = new URL(started.body.otpauth_uri)
  const secret = base32Decode(uri.searchParams.get('secret')!)!
  const confirmed = await callJson('POST', '/auth/totp/confirm', {
    token: user.token,
    json: { code: await totp(secret, nowSeconds()) },
  })
  expect(confirmed.status).toBe(200)
  return { secret, started: started.body, recoveryCodes: confirmed.body.recovery_codes }
}

/** A six-digit code that none of the accepted steps shows. */
async function wrongCode(secret: Uint8Array): Promise<string> {
  const valid = await Promise.all([-30, 0, 30].map((offset) => totp(secret, nowSeconds() + offset)))
  for (let candidate = 0; ; candidate++) {
    const code = String(candidate).padStart(6, '0')
    if (!valid.includes(code)) return code
  }
}

async function passwordStep(user: TestUser) {
  const res = await callJson('POST', '/auth/login', { json: { email: user.email, password: user.password } })
  expect(res.status).toBe(401)
  expect(res.body).toMatchObject({
    code: 'SECOND_FACTOR_REQUIRED',
    second_factor_token: expect.any(String),
    expires_in: 300,
    methods: ['totp', 'recovery_code'],
  })
  expect(res.body).not.toHaveProperty('token')
  return res.body.second_factor_token!
}

describe('the TOTP second factor', () => {
  it('enrols with an otpauth:// URI, stores the secret encrypted and recovery codes hashed', async () => {
    const user = await signUp()
    const { secret, started, recoveryCodes } = await enrol(user)
    const uri = new URL(started.otpauth_uri)
    expect(uri.protocol).toBe('otpauth:')
    expect(uri.host).toBe('totp')
    expect(decodeURIComponent(uri.pathname)).toBe(`/127.0.0.1:${user.email}`)
    expect(Object.fromEntries(uri.searchParams)).toEqual({
      secret: started.secret,
      issuer: '127.0.0.1',
      algorithm: 'SHA1',
      digits: '6',
      period: '30',
    })
    expect(secret.length).toBe(20)
    expect(recoveryCodes).toHaveLength(10)
    for (const code of recoveryCodes) expect(code).toMatch(/^[a-z2-7]{4}(-[a-z2-7]{4}){3}$/)

    const row = await env.DB.prepare('select secret, confirmed_at from totp_factors where user_id = ?')
      .bind(user.id)
      .first<{ secret: string; confirmed_at: number }>()
    expect(row?.confirmed_at).toEqual(expect.any(Number))
    expect(row?.secret).not.toContain(started.secret)
    expect(row?.secret).not.toContain(secret.toBase64())
    const hashes = await env.DB.prepare('select code_hash from recovery_codes where user_id = ?')
      .bind(user.id)
      .all<{ code_hash: string }>()
    expect(hashes.results).toHaveLength(10)
    expect(JSON.stringify(hashes.results)).not.toContain(recoveryCodes[0]!.replaceAll('-', ''))

    expect((await callJson('GET', '/auth/totp', { token: user.token })).body).toEqual({
      enabled: true,
      pending: false,
      confirmed_at: expect.any(String),
      recovery_codes_left: 10,
    })
    expect(await callJson('POST', '/auth/totp', { token: user.token })).toMatchObject({
      status: 409,
      body: { code: 'TOTP_ALREADY_ENABLED' },
    })
  })

  it('is not enforced until confirmed, and a wrong first code does not confirm it', async () => {
    const user = await signUp()
    const started = await callJson('POST', '/auth/totp', { token: user.token })
    const secret = base32Decode(started.body.secret)!
    const wrong = await callJson('POST', '/auth/totp/confirm', {
      token: user.token,
      json: { code: await wrongCode(secret) },
    })
    expect(wrong).toMatchObject({ status: 401, body: { code: 'SECOND_FACTOR_INVALID' } })
    expect((await callJson('GET', '/auth/totp', { token: user.token })).body).toMatchObject({
      enabled: false,
      pending: true,
    })
    expect(
      (await callJson('POST', '/auth/login', { json: { email: user.email, password: user.password } })).status,
    ).toBe(200)
  })

  it('makes login take a second step: a wrong or replayed code is refused, the next code signs in, the token is single-use', async () => {
    const user = await signUp()
    const { secret } = await enrol(user)
    const token = await passwordStep(user)

    expect(
      await callJson('POST', '/auth/login/totp', {
        json: { second_factor_token: token, code: await wrongCode(secret) },
      }),
    ).toMatchObject({ status: 401, body: { code: 'SECOND_FACTOR_INVALID' } })
    // The code that confirmed the enrolment was spent there (RFC 6238 §5.2).
    const spent = await totp(secret, nowSeconds())
    expect(
      await callJson('POST', '/auth/login/totp', { json: { second_factor_token: token, code: spent } }),
    ).toMatchObject({ status: 401, body: { code: 'SECOND_FACTOR_INVALID' } })

    const signedIn = await callJson('POST', '/auth/login/totp', {
      json: { second_factor_token: token, code: await totp(secret, nowSeconds() + 30) },
    })
    expect(signedIn.status).toBe(200)
    expect(signedIn.body).toMatchObject({
      token: expect.any(String),
      refresh_token: expect.any(String),
      user: { _id: user.id, email: user.email },
    })
    expect((await call('GET', '/auth/user', { token: signedIn.body.token })).status).toBe(200)

    const replayed = await callJson('POST', '/auth/login/totp', {
      json: { second_factor_token: token, code: await totp(secret, nowSeconds() + 30) },
    })
    expect(replayed).toMatchObject({ status: 401, body: { code: 'SECOND_FACTOR_INVALID' } })
  })

  // The code's step, the second-step token and the session are written in one batch, each only if the one before it
  // changed a row (worker/db/guarded.ts): of two logins with one code at once, one gets a session.
  it('signs in once when two second steps send one code at once', async () => {
    const user = await signUp()
    const { secret } = await enrol(user)
    const code = await totp(secret, nowSeconds() + 30)
    const tokens = [await passwordStep(user), await passwordStep(user)]
    const answers = await Promise.all(
      tokens.map((token) => callJson('POST', '/auth/login/totp', { json: { second_factor_token: token, code } })),
    )
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 401])
    expect(answers.find((answer) => answer.status === 401)?.body.code).toBe('SECOND_FACTOR_INVALID')
    const sessions = await env.DB.prepare('select count(*) as n from sessions where user_id = ?')
      .bind(user.id)
      .first<number>('n')
    const refreshTokens = await env.DB.prepare('select count(*) as n from refresh_tokens where user_id = ?')
      .bind(user.id)
      .first<number>('n')
    // signUp's session and the one login.
    expect([sessions, refreshTokens]).toEqual([2, 2])
  })

  it('signs in with a recovery code once, and renews and removes with one', async () => {
    const user = await signUp()
    const { recoveryCodes } = await enrol(user)
    const first = await callJson('POST', '/auth/login/totp', {
      json: { second_factor_token: await passwordStep(user), recovery_code: recoveryCodes[0]!.toUpperCase() },
    })
    expect(first.status).toBe(200)
    const again = await callJson('POST', '/auth/login/totp', {
      json: { second_factor_token: await passwordStep(user), recovery_code: recoveryCodes[0] },
    })
    expect(again).toMatchObject({ status: 401, body: { code: 'SECOND_FACTOR_INVALID' } })
    expect((await callJson('GET', '/auth/totp', { token: user.token })).body.recovery_codes_left).toBe(9)

    const renewed = await callJson('POST', '/auth/totp/recovery-codes', {
      token: user.token,
      json: { recovery_code: recoveryCodes[1] },
    })
    expect(renewed.status).toBe(200)
    expect(renewed.body.recovery_codes).toHaveLength(10)
    const old = await callJson('DELETE', '/auth/totp', { token: user.token, json: { recovery_code: recoveryCodes[2] } })
    expect(old).toMatchObject({ status: 401, body: { code: 'SECOND_FACTOR_INVALID' } })
    const removed = await callJson('DELETE', '/auth/totp', {
      token: user.token,
      json: { recovery_code: renewed.body.recovery_codes[0] },
    })
    expect(removed).toMatchObject({ status: 200, body: { message: 'the second factor was removed' } })
    expect(
      (await callJson('POST', '/auth/login', { json: { email: user.email, password: user.password } })).status,
    ).toBe(200)
    expect(
      await env.DB.prepare('select count(*) as n from recovery_codes where user_id = ?').bind(user.id).first('n'),
    ).toBe(0)
  })

  it('refuses forged, expired and foreign second-step tokens, and one from before a password change', async () => {
    const user = await signUp()
    const { secret } = await enrol(user)
    const key = new TextEncoder().encode(env.JWT_SECRET)
    const forge = (
      claims: Record<string, unknown>,
      exp: number,
      audience = 'edgefloor:second-factor',
      signingKey = key,
    ) =>
      new SignJWT({ typ: 'second-factor', stm: 'x', ...claims })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject(user.id)
        .setIssuer('edgefloor')
        .setAudience(audience)
        .setJti(crypto.randomUUID())
        .setIssuedAt()
        .setExpirationTime(exp)
        .sign(signingKey)
    const stamp = (await env.DB.prepare('select security_stamp from users where id = ?')
      .bind(user.id)
      .first<string>('security_stamp'))!
    const code = () => totp(secret, nowSeconds() + 30)
    const cases: Array<[string, string]> = [
      ['expired', await forge({ stm: stamp }, Math.floor(Date.now() / 1000) - 10)],
      [
        'signed with another key',
        await forge(
          { stm: stamp },
          Math.floor(Date.now() / 1000) + 60,
          undefined,
          new TextEncoder().encode('another-secret-at-least-32-characters-long'),
        ),
      ],
      ['an access token', user.token],
      ['another audience', await forge({ stm: stamp }, Math.floor(Date.now() / 1000) + 60, 'edgefloor')],
      ['an old security stamp', await forge({ stm: 'old' }, Math.floor(Date.now() / 1000) + 60)],
      ['garbage', 'not-a-token-at-all'],
    ]
    for (const [name, token] of cases) {
      const res = await callJson('POST', '/auth/login/totp', {
        json: { second_factor_token: token, code: await code() },
      })
      expect(res.status, name).toBe(401)
      expect(res.body.code, name).toBe('TOKEN_INVALID')
    }
    const real = await passwordStep(user)
    expect((await call('GET', '/auth/user', { token: real })).status).toBe(401)
  })

  it('refuses malformed proofs with 400', async () => {
    const user = await signUp()
    for (const json of [
      {},
      { code: '12345' },
      { code: 123456 },
      { code: '123456', recovery_code: 'aaaa-bbbb-cccc-dddd' },
      { recovery_code: 'x' },
      { code: '123456', extra: 1 },
    ]) {
      const res = await callJson('DELETE', '/auth/totp', { token: user.token, json })
      expect(res.status, JSON.stringify(json)).toBe(400)
      expect(res.body.code).toBe('VALIDATION_FAILED')
    }
    expect(await callJson('DELETE', '/auth/totp', { token: user.token, json: { code: '123456' } })).toMatchObject({
      status: 409,
      body: { code: 'TOTP_NOT_ENABLED' },
    })
  })

  it('rate-limits code attempts per account like passwords (AUTH_RATE_LIMIT_PER_MINUTE), from any address', async () => {
    const user = await signUp()
    const { secret } = await enrol(user)
    // Fixed one-minute windows: the first 429 comes after at most two windows' worth of attempts (the confirmation
    // counted one), whenever the test starts.
    const statuses: number[] = []
    while (statuses.at(-1) !== 429 && statuses.length < 30) {
      const token = await passwordStep(user)
      statuses.push(
        (
          await call('POST', '/auth/login/totp', {
            json: { second_factor_token: token, code: await wrongCode(secret) },
          })
        ).status,
      )
    }
    expect(statuses.at(-1)).toBe(429)
    expect(statuses.filter((status) => status === 401).length).toBeLessThanOrEqual(19)
    const right = await call('POST', '/auth/login/totp', {
      json: { second_factor_token: await passwordStep(user), code: await totp(secret, nowSeconds() + 30) },
    })
    expect(right.status).toBe(429)
    expect(right.headers.get('retry-after')).toMatch(/^\d+$/)
  })
})
