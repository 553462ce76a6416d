// Following a conversion job as a client would: GET /jobs/:id until it settles; fails loudly at the deadline.
import type { JobView } from '../../worker/pipeline/jobs'
import type { TestUser } from './accounts'
import { callJson } from './api'
import { until, type UntilOptions } from './until'

export async function readJob(id: string, owner: TestUser): Promise<JobView> {
  return (await callJson('GET', `/jobs/${id}`, { token: owner.token })).body
}

export const settled = (job: JobView) => job.status === 'done' || job.status === 'failed'

/** The job once `done` holds (by default: once it is done or failed); throws at the deadline with the last view. */
export function pollJob(
  id: string,
  owner: TestUser,
  done: (job: JobView) => boolean = settled,
  options?: UntilOptions,
): Promise<JobView> {
  return until(`job ${id} settling`, () => readJob(id, owner), done, options)
}
