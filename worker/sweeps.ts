// The scheduled sweeps (the cron in wrangler.consumer.toml, run by worker/consumer.ts `scheduled`): housekeeping that
// retries or expires what a request could not finish. Each runs on its own: one failing does not stop the
// others. A new sweep is one more entry in `sweeps`.
import { describeError } from './errors'
import { retryPendingDeletes } from './files/objects'
import { sweepPreviewRows } from './files/previews'
import { sweepExpiredReservations } from './files/quota'
import { sweepExpiredUploads } from './files/resumable'
import type { PipelineDeps } from './pipeline/step-runner'

export type SweepDeps = Pick<PipelineDeps, 'db' | 'bucket' | 'config'>

const sweeps: Record<string, (deps: SweepDeps) => Promise<unknown>> = {
  // Abandoned uploads first: aborting one releases its quota reservation and may leave keys to delete.
  expiredUploads: (deps) => sweepExpiredUploads({ db: deps.db, bucket: deps.bucket }),
  pendingDeletes: (deps) => retryPendingDeletes(deps.db, deps.bucket),
  expiredReservations: (deps) => sweepExpiredReservations(deps.db),
  // Preview failures past PREVIEW_FAILURE_TTL and drawings whose messages ran out: rows only, no object.
  previewRows: (deps) => sweepPreviewRows(deps.db, deps.config),
}

/** Runs every sweep; answers each one's result (what it removed), or 'failed' (the reason is logged). */
export async function runSweeps(deps: SweepDeps): Promise<Record<string, unknown>> {
  const names = Object.keys(sweeps)
  const results = await Promise.allSettled(names.map((name) => sweeps[name]!(deps)))
  return Object.fromEntries(
    names.map((name, index) => {
      const result = results[index]!
      if (result.status === 'fulfilled') return [name, result.value]
      console.error(JSON.stringify({ level: 'error', sweep: name, error: describeError(result.reason) }))
      return [name, 'failed']
    }),
  )
}
