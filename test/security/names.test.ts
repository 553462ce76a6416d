// Names that cannot lie: account and file names refuse Unicode format characters (general category Cf; UAX #44,
// Table 12: "Cf | Format | a format control character") on every path that sets one, with 400
// NAME_FORMAT_CHARACTER. "\u202Egnp.exe" (U+202E RIGHT-TO-LEFT OVERRIDE) shows as "exe.png": the Trojan Source
// trick (CVE-2021-42574) in a file list. Zero-width joiner and non-joiner stay allowed between visible characters,
// where Persian words and emoji sequences need them.
import { env } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { forbiddenFormatCharacter } from '../../worker/names'
import { call, callJson } from '../support/api'
import { signUp, uniqueEmail } from '../support/accounts'
import { multipartBody, uploaded } from '../support/files'
import { grantRole } from '../support/roles'

const LYING = '\u202Egnp.exe'
const b64 = (text: string) => btoa(String.fromCharCode(...new TextEncoder().encode(text)))
const refusal = (codePoint: string) => ({
  code: 'NAME_FORMAT_CHARACTER',
  character: codePoint,
  message: expect.stringContaining(codePoint),
})

describe('which format characters a name may hold', () => {
  it.each([
    // Bidi embeddings and overrides, isolates, marks (UAX #9, "Explicit Directional Formatting Characters").
    ...[
      '\u202A',
      '\u202B',
      '\u202C',
      '\u202D',
      '\u202E',
      '\u2066',
      '\u2067',
      '\u2068',
      '\u2069',
      '\u200E',
      '\u200F',
      '\u061C',
    ].map((char) => [`report${char}.pdf`, char]),
    // Zero-width characters and the BOM, word joiner, invisible operators, soft hyphen, tag characters.
    ...['\u200B', '\uFEFF', '\u2060', '\u2062', '\u00AD', '\u{E0041}'].map((char) => [`report${char}.pdf`, char]),
    // Joiners at the ends, or beside white space, only hide.
    ['\u200Dreport.pdf', '\u200D'],
    ['report.pdf\u200C', '\u200C'],
    [' \u200Dreport.pdf ', '\u200D'],
    ['my \u200Dreport.pdf', '\u200D'],
  ])('refuses %j (%j)', (name, char) => {
    expect(forbiddenFormatCharacter(name)).toBe(`U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`)
  })

  it.each([
    'report.pdf',
    'Q3 report – final.pdf',
    // Persian "می‌خواهم" needs U+200C between its letters.
    'می\u200Cخواهم.txt',
    // 👩‍💻 (woman technologist) is a ZWJ sequence of two emoji.
    '\u{1F469}\u200D\u{1F4BB} notes.txt',
    // Right-to-left letters themselves are fine: only the invisible controls are refused.
    'שלום.txt',
  ])('takes %j', (name) => {
    expect(forbiddenFormatCharacter(name)).toBeUndefined()
  })
})

describe('every path that sets a name refuses format characters', { timeout: 120_000 }, () => {
  it("register, and the admin's POST /users", async () => {
    const res = await callJson('POST', '/auth/register', {
      json: { email: uniqueEmail(), password: 'a long enough password', name: `Ada${LYING}` },
    })
    expect(res).toMatchObject({ status: 400, body: refusal('U+202E') })
    const admin = await signUp()
    await grantRole(admin, 'admin')
    const created = await callJson('POST', '/users', {
      token: admin.token,
      json: { email: uniqueEmail(), password: 'a long enough password', name: '\u2067Eve' },
    })
    expect(created).toMatchObject({ status: 400, body: refusal('U+2067') })
  })

  it('a profile update (PUT /users/:id) keeps the old name', async () => {
    const user = await signUp({ name: 'Grace' })
    const res = await callJson('PUT', `/users/${user.id}`, { token: user.token, json: { name: `Grace\u200F` } })
    expect(res).toMatchObject({ status: 400, body: refusal('U+200F') })
    expect(await env.DB.prepare('SELECT name FROM users WHERE id = ?').bind(user.id).first('name')).toBe('Grace')
    expect(
      (await callJson('PUT', `/users/${user.id}`, { token: user.token, json: { name: 'می\u200Cخواهم' } })).status,
    ).toBe(200)
  })

  it("POST /files: the form's filename and X-Edgefloor-Name (URI-encoded too); nothing is stored", async () => {
    const user = await signUp()
    const byForm = await callJson('POST', '/files', { token: user.token, body: multipartBody(LYING, 'MZ') })
    expect(byForm).toMatchObject({ status: 400, body: refusal('U+202E') })
    const byHeader = await callJson('POST', '/files', {
      token: user.token,
      body: multipartBody('x.txt', 'hi'),
      headers: { 'x-edgefloor-name': encodeURIComponent(LYING) },
    })
    expect(byHeader).toMatchObject({ status: 400, body: refusal('U+202E') })
    expect((await env.BUCKET.list({ prefix: `u/${user.id}/` })).objects).toEqual([])
  })

  it('the parts API (POST /files/uploads) and tus (Upload-Metadata filename)', async () => {
    const user = await signUp()
    const parts = await callJson('POST', '/files/uploads', {
      token: user.token,
      json: { name: encodeURIComponent(LYING) },
    })
    expect(parts).toMatchObject({ status: 400, body: refusal('U+202E') })
    const tus = await callJson('POST', '/files/tus', {
      token: user.token,
      headers: { 'tus-resumable': '1.0.0', 'upload-length': '5', 'upload-metadata': `filename ${b64(LYING)}` },
    })
    expect(tus).toMatchObject({ status: 400, body: refusal('U+202E') })
    expect(await env.DB.prepare('SELECT COUNT(*) AS n FROM uploads WHERE user_id = ?').bind(user.id).first('n')).toBe(0)
  })

  it('rename (PUT /files/:id with JSON) and a replace naming the file anew keep the old name', async () => {
    const user = await signUp()
    const file = await uploaded(user, 'notes.txt', 'hello')
    const renamed = await callJson('PUT', `/files/${file._id}`, { token: user.token, json: { name: LYING } })
    expect(renamed).toMatchObject({ status: 400, body: refusal('U+202E') })
    const replaced = await callJson('PUT', `/files/${file._id}`, {
      token: user.token,
      body: multipartBody('notes.txt', 'new'),
      headers: { 'x-edgefloor-name': encodeURIComponent(LYING) },
    })
    expect(replaced).toMatchObject({ status: 400, body: refusal('U+202E') })
    const read = await callJson('GET', `/files/${file._id}`, { token: user.token })
    expect(read.body).toMatchObject({ name: 'notes.txt', size: 5 })
    const emoji = await callJson('PUT', `/files/${file._id}`, {
      token: user.token,
      json: { name: '\u{1F469}\u200D\u{1F4BB}.txt' },
    })
    expect(emoji).toMatchObject({ status: 200, body: { name: '\u{1F469}\u200D\u{1F4BB}.txt' } })
    const res = await call('GET', `/files/${file._id}`, { token: user.token })
    expect(res.status).toBe(200)
  })
})
