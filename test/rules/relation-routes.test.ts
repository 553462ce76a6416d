// A custom model behind a relation route (/users/posts(Posts), the shipped example) and a model with inject:
// records stored as JSON documents, rules as query filters, the foreign key and injected values set by the server.
import { env } from 'cloudflare:test'
import { beforeAll, describe, expect, it } from 'vitest'
import { callWithResources, type JsonAnswer, type ResourceRecord } from '../support/api'
import { signUp, type TestUser } from '../support/accounts'
import { grantRole } from '../support/roles'
import { models, resourcesWithPosts, usersRoute, type ResourceConfig } from '../../worker/models/resources'

/** A post as the Posts example stores it. */
type Post = ResourceRecord & { title: string }

const api = <Body = ResourceRecord>(method: string, path: string, user: TestUser, json?: unknown) =>
  callWithResources<Body>(resourcesWithPosts, method, path, { token: user.token, json })

let admin: TestUser
let alice: TestUser
let bob: TestUser
let draft: { _id: string }
let published: { _id: string }

beforeAll(async () => {
  ;[admin, alice, bob] = await Promise.all([signUp(), signUp(), signUp()])
  await grantRole(admin, 'admin')
  draft = (await api('POST', `/users/${alice.id}/posts`, alice, { title: 'Draft' })).body
  published = (await api('POST', `/users/${alice.id}/posts`, alice, { title: 'Hello', body: 'world', published: true }))
    .body
})

describe('relation route /users/posts(Posts)', () => {
  it('creates a post under your own id, with the foreign key and injected author from the server', async () => {
    const res = await api('POST', `/users/${alice.id}/posts`, alice, { title: 'Third' })
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({
      title: 'Third',
      body: '',
      published: false,
      user_id: alice.id,
      author_email: alice.email,
    })
    expect(Object.keys(res.body).sort()).toEqual([
      '_id',
      'author_email',
      'body',
      'created_at',
      'published',
      'title',
      'updated_at',
      'user_id',
    ])
  })

  it("refuses a post under someone else's id and names the rule", async () => {
    const res = await api('POST', `/users/${alice.id}/posts`, bob, { title: 'Impostor' })
    expect(res).toMatchObject({
      status: 403,
      body: {
        message: 'not allowed',
        rule: '/users/posts(Posts)._create: @_user.user_id=@user._id | @user.role=admin',
      },
    })
  })

  it.each([
    { user_id: 'x' },
    { author_email: 'x@example.com' },
    { _id: '0123456789abcdef01234567' },
    { title: 'ok', extra: 1 },
  ])('refuses fields the client may not set: %j', async (body) => {
    const res = await api('POST', `/users/${alice.id}/posts`, alice, body)
    expect(res.status).toBe(400)
  })

  it('lists drafts only to their author (and admins), filtering in the query', async () => {
    const own = await api<Post[]>('GET', `/users/${alice.id}/posts`, alice)
    expect(own.body.map((post) => post._id)).toEqual(expect.arrayContaining([draft._id, published._id]))
    const other = await api<Post[]>('GET', `/users/${alice.id}/posts`, bob)
    expect(other.status).toBe(200)
    expect(other.body.map((post) => post._id)).toEqual([published._id])
    const all = await api<Post[]>('GET', `/users/${alice.id}/posts`, admin)
    expect(all.body.length).toBe(own.body.length)
    const bobs = await api<Post[]>('GET', `/users/${bob.id}/posts`, bob)
    expect(bobs.body).toEqual([])
  })

  it('filters by a readable field', async () => {
    const res = await api<Post[]>('GET', `/users/${alice.id}/posts?published=true`, alice)
    expect(res.body.map((post) => post._id)).toEqual([published._id])
    const bad = await api('GET', `/users/${alice.id}/posts?published=maybe`, alice)
    expect(bad.status).toBe(400)
  })

  it('pages a rule-filtered list with ?limit=: every visible record once, newest first, nothing hidden', async () => {
    const [carol, dave] = await Promise.all([signUp(), signUp()])
    const titles = ['one', 'two (draft)', 'three', 'four']
    for (const title of titles)
      await api('POST', `/users/${carol.id}/posts`, carol, { title, published: !title.includes('draft') })
    const walk = async (user: TestUser, limit: number) => {
      const pages: string[][] = []
      let next: string | undefined = `/users/${carol.id}/posts?limit=${limit}`
      while (next) {
        const page: JsonAnswer<Post[]> = await api<Post[]>('GET', next, user)
        expect(page.status).toBe(200)
        expect(page.body.length).toBeLessThanOrEqual(limit)
        pages.push(page.body.map((post) => post.title))
        next = /<([^>]+)>; rel="next"/.exec(page.headers.get('link') ?? '')?.[1]
      }
      return pages
    }
    // Another user sees only the published posts, a page at a time.
    expect(await walk(dave, 1)).toEqual([['four'], ['three'], ['one']])
    // The author sees their draft too.
    expect(await walk(carol, 2)).toEqual([
      ['four', 'three'],
      ['two (draft)', 'one'],
    ])
  })

  it('reads a published post for anyone, a draft only for its author', async () => {
    expect((await api('GET', `/users/${alice.id}/posts/${published._id}`, bob)).status).toBe(200)
    const hidden = await api('GET', `/users/${alice.id}/posts/${draft._id}`, bob)
    expect(hidden).toMatchObject({ status: 404, body: { message: 'Posts record not found' } })
    expect((await api('GET', `/users/${alice.id}/posts/${draft._id}`, alice)).status).toBe(200)
  })

  it('finds a post only under its own user', async () => {
    const res = await api('GET', `/users/${bob.id}/posts/${published._id}`, alice)
    expect(res.status).toBe(404)
  })

  it('answers 403 to an update of a post you may read but not change, 404 to one you may not see', async () => {
    const visible = await api('PUT', `/users/${alice.id}/posts/${published._id}`, bob, { title: 'mine now' })
    expect(visible).toMatchObject({
      status: 403,
      body: { rule: '/users/posts(Posts)._update: @_user.user_id=@user._id | @user.role=admin' },
    })
    const hidden = await api('PUT', `/users/${alice.id}/posts/${draft._id}`, bob, { title: 'mine now' })
    expect(hidden.status).toBe(404)
    const stored = await env.DB.prepare('SELECT data FROM records WHERE id = ?')
      .bind(published._id)
      .first<{ data: string }>()
    expect(JSON.parse(stored!.data).title).toBe('Hello')
  })

  it('lets the author update and delete', async () => {
    const updated = await api('PUT', `/users/${alice.id}/posts/${draft._id}`, alice, {
      title: 'Edited',
      published: true,
    })
    expect(updated).toMatchObject({ status: 200, body: { title: 'Edited', published: true, user_id: alice.id } })
    expect((await api('PUT', `/users/${alice.id}/posts/${draft._id}`, alice, { user_id: bob.id })).status).toBe(400)
    expect((await api('DELETE', `/users/${alice.id}/posts/${draft._id}`, bob)).status).toBe(403)
    expect((await api('DELETE', `/users/${alice.id}/posts/${draft._id}`, alice)).status).toBe(204)
    expect((await api('GET', `/users/${alice.id}/posts/${draft._id}`, alice)).status).toBe(404)
  })

  it("deletes a user's posts with the account", async () => {
    const carol = await signUp()
    const post = await api('POST', `/users/${carol.id}/posts`, carol, { title: 'bye' })
    expect((await api('DELETE', `/users/${carol.id}`, admin)).status).toBe(204)
    expect(await env.DB.prepare('SELECT count(*) AS n FROM records WHERE id = ?').bind(post.body._id).first('n')).toBe(
      0,
    )
  })
})

describe('inject and default deny', () => {
  const notes: ResourceConfig = {
    models: {
      ...models,
      Notes: { values: { text: ['String', 'cru'], owner: ['String', 'cru'], stamp: ['String', 'r'] } },
    },
    routes: [
      usersRoute,
      {
        _id: '/notes(Notes)',
        _create: { allow: true, inject: { owner: '@user._id', stamp: 'created' } },
        _readAll: { allow: '@_user.owner=@user._id' },
        _update: { allow: '@_user.owner=@user._id', inject: { stamp: 'edited' } },
        // no _read, no _delete: nobody
      },
    ],
  }
  const notesApi = (method: string, path: string, user: TestUser, json?: unknown) =>
    callWithResources(notes, method, path, { token: user.token, json })

  it('overrides client values with injected ones, on create and update', async () => {
    const created = await notesApi('POST', '/notes', alice, { text: 'hi', owner: bob.id })
    expect(created).toMatchObject({ status: 201, body: { text: 'hi', owner: alice.id, stamp: 'created' } })
    const listed = await notesApi('GET', '/notes', bob)
    expect(listed.body).toEqual([])
    const updated = await notesApi('PUT', `/notes/${created.body._id}`, alice, { text: 'hey', owner: bob.id })
    expect(updated).toMatchObject({ status: 200, body: { text: 'hey', stamp: 'edited' } })
  })

  it('denies an operation without a rule to everyone, admins included', async () => {
    const created = await notesApi('POST', '/notes', admin, { text: 'x' })
    for (const [method, path] of [
      ['GET', `/notes/${created.body._id}`],
      ['DELETE', `/notes/${created.body._id}`],
    ] as const) {
      const res = await notesApi(method, path, admin)
      expect(res.status).toBe(403)
      expect(res.body.rule).toMatch(/^\/notes\(Notes\)\._(read|delete): false \(no rule\)$/)
    }
  })
})
