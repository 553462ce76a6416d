// Following a conversion job as a client would: GET /jobs/:id until it settles, with a deadline.
import { callJson } from './api'
import type { TestUser } from './accounts'

export async function pollJob(id: string, owner: TestUser) {
  const deadline = Date.now() + 30_000
  for (;;) {
    const res = await callJson('GET', `/jobs/${id}`, { token: owner.token })
    if (res.body.status === 'done' || res.body.status === 'failed' || Date.now() > deadline) return res.body
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}
