// Listing, reading, renaming, replacing and deleting files; every route scoped to the caller.
import { env } from 'cloudflare:test'
import { beforeAll, describe, expect, it } from 'vitest'
import { openDatabase } from '../../worker/db/client'
import { storeFile } from '../../worker/files/store'
import { type Answer, call, callJson, callWithSettings } from '../support/api'
import { signUp, type TestUser } from '../support/accounts'
import { multipartBody, PNG_HEAD, uploaded } from '../support/files'

/** A converted child as the pipeline stores it (the pipeline's own tests cover making them). */
async function storeChild(user: TestUser, parentId: string, name: string, index: number) {
  return storeFile(
    { db: openDatabase(env.DB), bucket: env.BUCKET },
    {
      userId: user.id,
      parentId,
      name,
      extension: '.png',
      contentType: 'image/png',
      body: PNG_HEAD,
      partIndex: index,
      partTotal: 2,
    },
  )
}

const ids = (body: Array<{ _id: string }>) => body.map((file) => file._id)

describe('listing and reading', () => {
  let owner: TestUser
  let files: Array<{ _id: string }>
  let children: Array<{ id: string }>

  beforeAll(async () => {
    owner = await signUp()
    files = []
    for (const name of ['a.txt', 'b.pdf', 'c.txt'])
      files.push(await uploaded(owner, name, name.endsWith('.pdf') ? '%PDF-1.4\n' : 'text'))
    children = [
      await storeChild(owner, files[1]!._id, 'b (1 of 2).png', 0),
      await storeChild(owner, files[1]!._id, 'b (2 of 2).png', 1),
    ]
  })

  it('lists newest first with cursor pagination in the Link header', async () => {
    const first = await callJson('GET', '/files?limit=2', { token: owner.token })
    expect(ids(first.body)).toEqual([children[1]!.id, children[0]!.id])
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.get('link')!)![1]!
    const second = await callJson<typeof first.body>('GET', next, { token: owner.token })
    expect(ids(second.body)).toEqual([files[2]!._id, files[1]!._id])
  })

  it.each([
    ['?root=true', () => [files[2]!._id, files[1]!._id, files[0]!._id]],
    ['?extension=.TXT', () => [files[2]!._id, files[0]!._id]],
    ['?content_type=application/pdf', () => [files[1]!._id]],
    ['?parent_file=PARENT', () => [children[1]!.id, children[0]!.id]],
  ])('filters %s', async (query, expected) => {
    const res = await callJson<Answer<'GET', '/files'>>('GET', `/files${query.replace('PARENT', files[1]!._id)}`, {
      token: owner.token,
    })
    expect(ids(res.body)).toEqual(expected())
  })

  it('reads one file with its children in page order', async () => {
    const res = await callJson('GET', `/files/${files[1]!._id}`, { token: owner.token })
    expect(res.body).toMatchObject({ _id: files[1]!._id, name: 'b.pdf', content_type: 'application/pdf' })
    expect(res.body.files.map((kid) => [kid.name, kid.parent_file, kid.part_index])).toEqual([
      ['b (1 of 2).png', files[1]!._id, 0],
      ['b (2 of 2).png', files[1]!._id, 1],
    ])
    const kids = await callJson('GET', `/files/${files[1]!._id}/files`, { token: owner.token })
    expect(ids(kids.body)).toEqual([children[1]!.id, children[0]!.id])
  })

  it("answers 404 for another user's file on every route, exactly like a missing one", async () => {
    const stranger = await signUp()
    const target = files[1]!._id
    const missing = await callJson('GET', '/files/0123456789abcdef01234567', { token: stranger.token })
    for (const [method, path, options] of [
      ['GET', `/files/${target}`, {}],
      ['GET', `/files/${target}/files`, {}],
      ['GET', `/files/${target}/download`, {}],
      ['PUT', `/files/${target}`, { json: { name: 'mine.pdf' } }],
      ['PUT', `/files/${target}`, { body: multipartBody('x.txt', 'x') }],
      ['DELETE', `/files/${target}`, {}],
    ] as const) {
      const res = await callJson(method, path, { token: stranger.token, ...options })
      expect(res, `${method} ${path}`).toMatchObject({ status: 404, body: missing.body })
    }
    const list = await callJson('GET', `/files?parent_file=${target}`, { token: stranger.token })
    expect(list.body).toEqual([])
    expect((await callJson('GET', `/files/${target}`, { token: owner.token })).body.name).toBe('b.pdf')
  })
})

describe('changing and deleting', () => {
  it('renames with JSON and refuses fields that are not the name', async () => {
    const user = await signUp()
    const file = await uploaded(user, 'old.txt', 'x')
    const renamed = await callJson('PUT', `/files/${file._id}`, { token: user.token, json: { name: 'new name.txt' } })
    expect(renamed).toMatchObject({ status: 200, body: { name: 'new name.txt', hash: file.hash } })
    for (const body of [
      { size: 1 },
      { user_id: 'x' },
      { key: 'u/x' },
      { parent_file: file._id },
      { name: 'ok', hash: 'x' },
    ]) {
      expect(
        (await callJson('PUT', `/files/${file._id}`, { token: user.token, json: body })).status,
        JSON.stringify(body),
      ).toBe(400)
    }
  })

  it('replaces the content, deleting the stale conversions and the old bytes', async () => {
    const user = await signUp()
    const file = await uploaded(user, 'doc.txt', 'first version')
    const child = await storeChild(user, file._id, 'doc (1 of 1).png', 0)
    const res = await callJson('PUT', `/files/${file._id}`, {
      token: user.token,
      body: multipartBody('ignored.bin', 'second version!'),
    })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ _id: file._id, name: 'doc.txt', size: 15 })
    expect(res.body.hash).not.toBe(file.hash)
    expect((await callJson('GET', `/files/${child.id}`, { token: user.token })).status).toBe(404)
    expect((await env.BUCKET.list({ prefix: `u/${user.id}/` })).objects).toHaveLength(1)
    const body = await (await call('GET', `/files/${file._id}/download`, { token: user.token })).text()
    expect(body).toBe('second version!')
  })

  it('refuses a replace that is neither JSON nor multipart (415) or too large (413), keeping the old content', async () => {
    const user = await signUp()
    const file = await uploaded(user, 'doc.txt', 'kept')
    const plain = await callJson('PUT', `/files/${file._id}`, {
      token: user.token,
      body: 'new',
      headers: { 'content-type': 'text/plain' },
    })
    expect(plain).toMatchObject({
      status: 415,
      body: { message: 'the content type is not accepted here', code: 'CONTENT_TYPE_UNSUPPORTED' },
    })
    const large = await callWithSettings({ FILES_MAX_BYTES: '4' }, 'PUT', `/files/${file._id}`, {
      token: user.token,
      body: multipartBody('doc.txt', 'too large'),
    })
    expect(large.status).toBe(413)
    expect(await large.json()).toMatchObject({ message: 'the file is larger than 4 bytes' })
    expect(await (await call('GET', `/files/${file._id}/download`, { token: user.token })).text()).toBe('kept')
    expect((await env.BUCKET.list({ prefix: `u/${user.id}/` })).objects).toHaveLength(1)
  })

  it('does not count the replaced bytes and their conversions against the quota', async () => {
    const user = await signUp()
    const file = await uploaded(user, 'doc.txt', '0123456789')
    await storeChild(user, file._id, 'doc (1 of 1).png', 0)
    await uploaded(user, 'other.txt', 'keep')
    // 10 + 16 (the conversion) + 4 = 30 bytes used of 30: the replace frees 26 of them.
    const quota = { FILES_QUOTA_BYTES: '30' }
    const replace = (content: string, headers: Record<string, string> = {}) =>
      callWithSettings(quota, 'PUT', `/files/${file._id}`, {
        token: user.token,
        body: multipartBody('doc.txt', content),
        headers,
      })
    const atEdge = await replace('x'.repeat(26))
    expect(atEdge.status).toBe(200)
    expect(await atEdge.json()).toMatchObject({ _id: file._id, size: 26 })
    for (const headers of [{}, { 'x-edgefloor-size': '27' }] as Record<string, string>[]) {
      const over = await replace('y'.repeat(27), headers)
      expect(over.status, JSON.stringify(headers)).toBe(413)
      expect(await over.json()).toMatchObject({ code: 'QUOTA_EXCEEDED', used: 4, quota: 30 })
    }
    expect(await (await call('GET', `/files/${file._id}/download`, { token: user.token })).text()).toBe('x'.repeat(26))
    expect((await env.BUCKET.list({ prefix: `u/${user.id}/` })).objects).toHaveLength(2)
  })

  it('deletes a file with all its conversions, records and bytes', async () => {
    const user = await signUp()
    const file = await uploaded(user, 'deck.pdf', '%PDF-1.4\n')
    const page = await storeChild(user, file._id, 'deck (1 of 2).png', 0)
    const grandchild = await storeChild(user, page.id, 'deeper.png', 0)
    const keep = await uploaded(user, 'keep.txt', 'k')
    const res = await callJson('DELETE', `/files/${file._id}`, { token: user.token })
    expect(res.status).toBe(200)
    expect(res.body.deleted.sort()).toEqual([file._id, page.id, grandchild.id].sort())
    expect(ids((await callJson('GET', '/files', { token: user.token })).body)).toEqual([keep._id])
    expect((await env.BUCKET.list({ prefix: `u/${user.id}/` })).objects).toHaveLength(1)
    expect((await callJson('DELETE', `/files/${file._id}`, { token: user.token })).status).toBe(404)
  })

  it('deletes a tree of 150 conversions in one statement, records and bytes', async () => {
    // One DELETE … RETURNING over the recursive tree: no bound-parameter limit, and no window between reading the
    // tree and deleting it in which a conversion step could add a child that would outlive its parent.
    const user = await signUp()
    const file = await uploaded(user, 'big.pdf', '%PDF-1.4\n')
    const pages = await Promise.all(
      Array.from({ length: 150 }, (_, i) => storeChild(user, file._id, `big (${i + 1} of 150).png`, i)),
    )
    const res = await callJson('DELETE', `/files/${file._id}`, { token: user.token })
    expect(res.status).toBe(200)
    expect(res.body.deleted.sort()).toEqual([file._id, ...pages.map((page) => page.id)].sort())
    expect(await env.DB.prepare('SELECT count(*) AS n FROM files WHERE user_id = ?').bind(user.id).first('n')).toBe(0)
    expect((await env.BUCKET.list({ prefix: `u/${user.id}/` })).objects).toHaveLength(0)
  })
})
