// What follows a stored upload: with FILES_AUTO_CONVERT its conversion chain starts by itself (in the
// background: the upload answers at once, the job is listed at GET /files/:id/jobs).
import type { Context } from 'hono'
import type { AppEnv } from '../api'
import { converterForFile } from '../converters/registry'
import { startJob } from '../pipeline/start'
import type { FileRow } from './records'

export async function afterUpload(c: Context<AppEnv>, row: FileRow): Promise<void> {
  if (!c.var.config.FILES_AUTO_CONVERT || !converterForFile(row).converter) return
  await startJob({ db: c.var.db, queue: c.env.CONVERSIONS }, c.var.config, row)
}
