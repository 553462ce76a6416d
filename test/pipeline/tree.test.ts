// GET /files/:id/tree: a file's whole conversion tree (every descendant through parent_file, not only the direct
// children) and the jobs of its files, each with its state, steps and error code, in one answer read from D1.
import { env } from 'cloudflare:test'
import { beforeAll, describe, expect, it } from 'vitest'
import { callJson } from '../support/api'
import { signUp, type TestUser } from '../support/accounts'
import { uploaded } from '../support/files'
import { registerChainConverters } from '../support/chain-converters'
import { TREE_FILES_MAX } from '../../worker/pipeline/routes'

let user: TestUser

beforeAll(async () => {
  registerChainConverters()
  user = await signUp()
})

interface TreeFile {
  _id: string
  name: string
  parent_file: string | null
  url: string
}

describe('GET /files/:id/tree', () => {
  it('answers the file, its outputs and their outputs, with the job that made them', async () => {
    const source = await uploaded(user, 'notes.tsplit', 'abcdwxyz')
    const made = await callJson('POST', `/files/${source._id}/convert`, { token: user.token })
    expect(made.status).toBe(200)
    const [part1, part2, upper1, upper2] = made.body

    const tree = await callJson('GET', `/files/${source._id}/tree`, { token: user.token })
    expect(tree.status).toBe(200)
    expect(tree.body.truncated).toBe(false)
    const files = tree.body.files as TreeFile[]
    expect(files[0]).toMatchObject({
      _id: source._id,
      parent_file: null,
      url: expect.stringContaining(`/files/${source._id}/download?token=`),
    })
    expect(new Set(files.map((file) => file._id))).toEqual(
      new Set([source._id, part1!._id, part2!._id, upper1!._id, upper2!._id]),
    )
    // Two levels below the upload: the direct children alone (GET /files/:id) would miss these.
    expect(files.find((file) => file._id === upper2!._id)!.parent_file).toBe(part2!._id)

    expect(tree.body.jobs).toHaveLength(1)
    const [job] = tree.body.jobs
    expect(job).toMatchObject({ file_id: source._id, status: 'done', error: null, error_code: null })
    expect(job!.steps.map((step) => `${step.converter}:${step.status}`)).toEqual([
      'test-split:done',
      'test-upper:done',
      'test-upper:done',
    ])
    expect(job!.files.map((file: TreeFile) => file._id)).toEqual([part1!._id, part2!._id, upper1!._id, upper2!._id])
  })

  it('answers the tree of a converted file from that file down', async () => {
    const source = await uploaded(user, 'halves.tsplit', 'abcdwxyz')
    const [part1, , upper1] = (await callJson('POST', `/files/${source._id}/convert`, { token: user.token })).body
    const tree = await callJson('GET', `/files/${part1!._id}/tree`, { token: user.token })
    expect(tree.body.files.map((file: TreeFile) => file._id)).toEqual([part1!._id, upper1!._id])
    // The job belongs to the upload, not to this file.
    expect(tree.body.jobs).toEqual([])
  })

  it("shows a failed job's error code and message, and its failed step", async () => {
    const source = await uploaded(user, 'broken.tbroken', 'x')
    const failed = await callJson('POST', `/files/${source._id}/convert`, { token: user.token })
    expect(failed.status).toBe(422)
    const tree = await callJson('GET', `/files/${source._id}/tree`, { token: user.token })
    expect(tree.body.files.map((file: TreeFile) => file._id)).toEqual([source._id])
    expect(tree.body.jobs).toHaveLength(1)
    expect(tree.body.jobs[0]).toMatchObject({
      status: 'failed',
      error_code: failed.body.code,
      error: expect.stringContaining('corrupt at byte 3'),
    })
    expect(tree.body.jobs[0]!.steps).toMatchObject([
      { converter: 'test-broken', status: 'failed', error: expect.stringContaining('corrupt at byte 3') },
    ])
  })

  it('answers at most TREE_FILES_MAX files, the file first, and says the tree was cut', async () => {
    const source = await uploaded(user, 'book.pdf', '%PDF-1.4 not really')
    // 1100 pages of a PDF as records (no bytes: the tree reads records only), made in one statement.
    await env.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 1099)
       INSERT INTO files (id, user_id, parent_id, name, extension, content_type, size, hash, key, part_index, part_total, created_at, updated_at)
       SELECT substr(?1, 1, 12) || printf('%012x', i), ?2, ?1, 'book (' || (i + 1) || ' of 1100)', '.png', 'image/png', 1, 'h', 'k/' || ?1 || '/' || i, i, 1100, 0, 0 FROM n`,
    )
      .bind(source._id, user.id)
      .run()
    const tree = await callJson('GET', `/files/${source._id}/tree`, { token: user.token })
    expect(tree.status).toBe(200)
    expect(tree.body.truncated).toBe(true)
    expect(tree.body.files).toHaveLength(TREE_FILES_MAX)
    // Made before its pages by the clock's say (created_at 0 here), the file is still first.
    expect(tree.body.files[0]!._id).toBe(source._id)
  })

  it("answers another user's file as if it did not exist", async () => {
    const source = await uploaded(user, 'mine.tsplit', 'abcd')
    const other = await signUp()
    const res = await callJson('GET', `/files/${source._id}/tree`, { token: other.token })
    expect(res.status).toBe(404)
    expect(res.body).toMatchObject({ code: 'FILE_NOT_FOUND' })
  })
})
