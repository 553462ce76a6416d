import { env } from 'cloudflare:test'
import Argon2, { Argon2Type, Argon2Version } from '@phi-ag/argon2'
import argon2Wasm from '@phi-ag/argon2/argon2.wasm'
import bcrypt from 'bcryptjs'
import { decodeJwt, SignJWT } from 'jose'
import { describe, expect, it } from 'vitest'
import { newId } from '../../worker/db/ids'
import { call, callJson, callJsonWithSettings, callWithSettings } from '../support/api'
import { signUp, tokenIn, uniqueEmail, waitForEmail } from '../support/accounts'

const secret = new TextEncoder().encode(env.JWT_SECRET)
const base64url = (value: object) =>
  btoa(JSON.stringify(value)).replaceAll('=', '').replaceAll('+', '-').replaceAll('/', '_')

async function forge(
  claims: Record<string, unknown>,
  options: { expiresIn?: string | number; issuer?: string; audience?: string } = {},
) {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer(options.issuer ?? 'edgefloor')
    .setAudience(options.audience ?? 'edgefloor')
    .setJti(crypto.randomUUID())
    .setIssuedAt()
    .setExpirationTime(options.expiresIn ?? '1h')
    .sign(secret)
}

/** The live session of a user's token, which a forged access token must name (`sid`) to be accepted. */
async function sessionOf(userId: string): Promise<string> {
  return (await env.DB.prepare('select id from sessions where user_id = ? and revoked_at is null')
    .bind(userId)
    .first('id')) as string
}

async function stampOf(userId: string): Promise<string> {
  return (await env.DB.prepare('select security_stamp from users where id = ?')
    .bind(userId)
    .first('security_stamp')) as string
}

describe('access tokens', () => {
  it('refuses a verify or reset token used as a bearer token', async () => {
    const user = await signUp()
    const verifyToken = tokenIn(await waitForEmail(user.email))
    await call('POST', '/auth/forgot', { json: { email: user.email } })
    const resetToken = tokenIn(await waitForEmail(user.email, 2))
    for (const token of [verifyToken, resetToken]) {
      const res = await callJson('GET', '/auth/user', { token })
      expect(res).toMatchObject({ status: 401, body: { message: 'invalid or expired token' } })
    }
  })

  it('refuses an access token used as a verify or reset token', async () => {
    const user = await signUp()
    expect((await call('POST', '/auth/verify', { json: { token: user.token } })).status).toBe(401)
    expect((await call('POST', '/auth/reset', { json: { token: user.token, password: 'new password!' } })).status).toBe(
      401,
    )
  })

  it.each([
    ['expired', { expiresIn: Math.floor(Date.now() / 1000) - 10 }],
    ['foreign issuer', { issuer: 'someone-else' }],
    ['foreign audience', { audience: 'someone-else' }],
  ])('refuses an %s token', async (_, options) => {
    const user = await signUp()
    const token = await forge(
      { sub: user.id, typ: 'auth', stm: await stampOf(user.id), sid: await sessionOf(user.id) },
      options,
    )
    expect((await call('GET', '/auth/user', { token })).status).toBe(401)
  })

  it('accepts a correctly forged token (the forging above is sound)', async () => {
    const user = await signUp()
    const token = await forge({ sub: user.id, typ: 'auth', stm: await stampOf(user.id), sid: await sessionOf(user.id) })
    expect((await call('GET', '/auth/user', { token })).status).toBe(200)
  })

  it('refuses a tampered payload and a token signed with another secret', async () => {
    const user = await signUp()
    const [header, , signature] = user.token.split('.')
    const tampered = `${header}.${base64url({ sub: user.id, typ: 'auth', role: 'admin' })}.${signature}`
    expect((await call('GET', '/auth/user', { token: tampered })).status).toBe(401)
    const other = await new SignJWT({
      sub: user.id,
      typ: 'auth',
      stm: await stampOf(user.id),
      sid: await sessionOf(user.id),
    })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer('edgefloor')
      .setAudience('edgefloor')
      .setJti('x')
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode('another-secret-that-is-long-enough-too'))
    expect((await call('GET', '/auth/user', { token: other })).status).toBe(401)
  })

  it('refuses alg "none" and other algorithms', async () => {
    const user = await signUp()
    const now = Math.floor(Date.now() / 1000)
    const payload = {
      sub: user.id,
      typ: 'auth',
      stm: await stampOf(user.id),
      sid: await sessionOf(user.id),
      iss: 'edgefloor',
      aud: 'edgefloor',
      iat: now,
      exp: now + 3600,
      jti: 'x',
    }
    for (const alg of ['none', 'HS512', 'RS256']) {
      const token = `${base64url({ alg, typ: 'JWT' })}.${base64url(payload)}.`
      expect((await call('GET', '/auth/user', { token })).status).toBe(401)
    }
  })

  it('answers 404 on the current user when the account was deleted, 401 elsewhere', async () => {
    const user = await signUp()
    await env.DB.prepare('delete from users where id = ?').bind(user.id).run()
    expect(await callJson('GET', '/auth/user', { token: user.token })).toMatchObject({
      status: 404,
      body: { message: 'user not found' },
    })
    expect((await call('POST', '/auth/verify/resend', { token: user.token })).status).toBe(401)
  })
})

describe('refresh tokens', () => {
  it('rotates on every use and issues a working access token', async () => {
    const user = await signUp()
    const first = await callJson('POST', '/auth/refresh', { json: { refresh_token: user.refreshToken } })
    expect(first.status).toBe(200)
    expect(Object.keys(first.body).sort()).toEqual(['expires_in', 'refresh_token', 'token'])
    expect(first.body.refresh_token).not.toBe(user.refreshToken)
    expect((await call('GET', '/auth/user', { token: first.body.token })).status).toBe(200)
    const second = await callJson('POST', '/auth/refresh', { json: { refresh_token: first.body.refresh_token } })
    expect(second.status).toBe(200)
  })

  it('revokes the whole family when a spent token is presented again', async () => {
    const user = await signUp()
    const rotated = await callJson('POST', '/auth/refresh', { json: { refresh_token: user.refreshToken } })
    const reuse = await callJson('POST', '/auth/refresh', { json: { refresh_token: user.refreshToken } })
    expect(reuse).toMatchObject({ status: 401, body: { code: 'REFRESH_TOKEN_REUSED' } })
    const afterTheft = await callJson('POST', '/auth/refresh', { json: { refresh_token: rotated.body.refresh_token } })
    expect(afterTheft).toMatchObject({ status: 401, body: { code: 'INVALID_REFRESH_TOKEN' } })
  })

  it('stores only hashes of refresh tokens', async () => {
    const user = await signUp()
    const rows = await env.DB.prepare('select token_hash from refresh_tokens where user_id = ?').bind(user.id).all()
    expect(rows.results).toHaveLength(1)
    expect(JSON.stringify(rows.results)).not.toContain(user.refreshToken)
  })

  it('refuses unknown and malformed refresh tokens', async () => {
    expect((await call('POST', '/auth/refresh', { json: { refresh_token: 'x'.repeat(43) } })).status).toBe(401)
    expect((await call('POST', '/auth/refresh', { json: {} })).status).toBe(400)
  })
})

describe('logout', () => {
  it('revokes the presented refresh token only', async () => {
    const user = await signUp()
    const other = await callJson('POST', '/auth/login', { json: { email: user.email, password: user.password } })
    const res = await callJson('POST', '/auth/logout', {
      token: user.token,
      json: { refresh_token: user.refreshToken },
    })
    expect(res).toMatchObject({ status: 200, body: { message: 'signed out' } })
    expect((await call('POST', '/auth/refresh', { json: { refresh_token: user.refreshToken } })).status).toBe(401)
    expect((await call('POST', '/auth/refresh', { json: { refresh_token: other.body.refresh_token } })).status).toBe(
      200,
    )
  })

  it('signs out everywhere with { all: true }, access tokens included', async () => {
    const user = await signUp()
    const other = await callJson('POST', '/auth/login', { json: { email: user.email, password: user.password } })
    expect((await call('POST', '/auth/logout', { token: user.token, json: { all: true } })).status).toBe(200)
    expect((await call('POST', '/auth/refresh', { json: { refresh_token: other.body.refresh_token } })).status).toBe(
      401,
    )
    expect((await call('GET', '/auth/user', { token: other.body.token })).status).toBe(401)
  })

  it("cannot revoke another user's session", async () => {
    const alice = await signUp()
    const bob = await signUp()
    await call('POST', '/auth/logout', { token: bob.token, json: { refresh_token: alice.refreshToken } })
    expect((await call('POST', '/auth/refresh', { json: { refresh_token: alice.refreshToken } })).status).toBe(200)
  })
})

describe('imported Basefloor users', () => {
  it.each(['$2a$', '$2b$'])('log in with a %s bcrypt hash, which is rehashed to argon2id', async (prefix) => {
    const email = uniqueEmail('imported')
    const hash = bcrypt.hashSync('legacy password', 4).replace(/^\$2[ab]\$/, prefix)
    const id = newId()
    await env.DB.prepare(
      "insert into users (id, email, password_hash, name, role, security_stamp, created_at, updated_at) values (?, ?, ?, 'Old', 'user', 'stamp', 0, 0)",
    )
      .bind(id, email, hash)
      .run()
    expect((await call('POST', '/auth/login', { json: { email, password: 'wrong password' } })).status).toBe(401)
    const res = await callJson('POST', '/auth/login', { json: { email, password: 'legacy password' } })
    expect(res).toMatchObject({ status: 200, body: { user: { _id: id, email } } })
    const stored = (await env.DB.prepare('select password_hash from users where id = ?')
      .bind(id)
      .first('password_hash')) as string
    expect(stored).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/)
    expect((await call('POST', '/auth/login', { json: { email, password: 'legacy password' } })).status).toBe(200)
  })
})

describe('token lifetimes follow the configuration', () => {
  const lifetimeOf = (token: string) => {
    const { exp, iat } = decodeJwt(token)
    return exp! - iat!
  }

  it('uses the shipped defaults: access 7d, verify 24h, reset 1h, refresh 30d', async () => {
    const user = await signUp()
    expect(lifetimeOf(user.token)).toBe(7 * 24 * 3600)
    expect(lifetimeOf(tokenIn(await waitForEmail(user.email, 1)))).toBe(24 * 3600)
    await call('POST', '/auth/forgot', { json: { email: user.email } })
    expect(lifetimeOf(tokenIn(await waitForEmail(user.email, 2)))).toBe(3600)
    const refresh = await env.DB.prepare('select expires_at - created_at as ttl from refresh_tokens where user_id = ?')
      .bind(user.id)
      .first('ttl')
    expect(refresh).toBe(30 * 24 * 3600 * 1000)
  })

  it('honours AUTH_JWT_EXPIRATION_* and AUTH_REFRESH_TTL when they are changed', async () => {
    const settings = {
      AUTH_JWT_EXPIRATION_AUTH: '15m',
      AUTH_JWT_EXPIRATION_VERIFY: '2h',
      AUTH_JWT_EXPIRATION_RESET: '10m',
      AUTH_REFRESH_TTL: '2d',
    }
    const email = uniqueEmail('lifetimes')
    const password = 'lifetime password'
    expect((await callWithSettings(settings, 'POST', '/auth/register', { json: { email, password } })).status).toBe(201)
    expect(lifetimeOf(tokenIn(await waitForEmail(email, 1)))).toBe(2 * 3600)

    const session = (await callJsonWithSettings(settings, 'POST', '/auth/login', { json: { email, password } })).body
    expect(lifetimeOf(session.token)).toBe(15 * 60)
    expect(session.expires_in).toBe(15 * 60)
    const refreshTtl = await env.DB.prepare(
      'select expires_at - created_at as ttl from refresh_tokens where user_id = ?',
    )
      .bind(session.user._id)
      .first('ttl')
    expect(refreshTtl).toBe(2 * 24 * 3600 * 1000)

    const rotated = (
      await callJsonWithSettings(settings, 'POST', '/auth/refresh', { json: { refresh_token: session.refresh_token } })
    ).body
    expect(lifetimeOf(rotated.token)).toBe(15 * 60)
    expect(rotated.expires_in).toBe(15 * 60)

    await callWithSettings(settings, 'POST', '/auth/forgot', { json: { email } })
    expect(lifetimeOf(tokenIn(await waitForEmail(email, 2)))).toBe(10 * 60)
  })
})

describe('argon2id parameters raised after a hash was stored', () => {
  async function insertUserWithHash(hash: string) {
    const email = uniqueEmail('older-hash')
    const id = newId()
    await env.DB.prepare(
      "insert into users (id, email, password_hash, name, role, security_stamp, created_at, updated_at) values (?, ?, ?, 'Old', 'user', 'stamp', 0, 0)",
    )
      .bind(id, email, hash)
      .run()
    return { id, email }
  }
  const storedHash = async (id: string) =>
    (await env.DB.prepare('select password_hash from users where id = ?').bind(id).first('password_hash')) as string

  it.each([
    ['less memory', { memoryCost: 4096, timeCost: 2, parallelism: 1 }],
    ['fewer passes', { memoryCost: 19 * 1024, timeCost: 1, parallelism: 1 }],
  ])('rehashes a hash with %s to the current parameters on login', async (_, params) => {
    const argon2 = new Argon2(await WebAssembly.instantiate(argon2Wasm))
    const { encoded } = argon2.hash('older password', {
      ...params,
      hashLength: 32,
      type: Argon2Type.Argon2id,
      version: Argon2Version.Version13,
      salt: crypto.getRandomValues(new Uint8Array(16)),
    })
    const { id, email } = await insertUserWithHash(encoded)
    expect((await call('POST', '/auth/login', { json: { email, password: 'wrong password' } })).status).toBe(401)
    expect(await storedHash(id)).toBe(encoded)
    expect((await call('POST', '/auth/login', { json: { email, password: 'older password' } })).status).toBe(200)
    const rehashed = await storedHash(id)
    expect(rehashed).not.toBe(encoded)
    expect(rehashed).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/)
    expect((await call('POST', '/auth/login', { json: { email, password: 'older password' } })).status).toBe(200)
  })

  it('leaves a hash with the current parameters as it is', async () => {
    const user = await signUp()
    const before = await storedHash(user.id)
    expect((await call('POST', '/auth/login', { json: { email: user.email, password: user.password } })).status).toBe(
      200,
    )
    expect(await storedHash(user.id)).toBe(before)
  })
})
