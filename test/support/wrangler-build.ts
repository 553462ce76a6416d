// A Worker built as `wrangler deploy --dry-run` builds it (the sidecar's container image not built), into `outdir`.
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { root } from '../../bench/wrangler-dev.ts'

export function buildWorker(config: string, outdir: string, extraArgs: readonly string[] = []): void {
  const built = spawnSync(
    process.execPath,
    [
      join(root, 'node_modules/wrangler/bin/wrangler.js'),
      'deploy',
      '--dry-run',
      '--containers-rollout=none',
      '--outdir',
      outdir,
      ...extraArgs,
      '-c',
      config,
    ],
    { cwd: root, env: { ...process.env, WRANGLER_SEND_METRICS: 'false' }, encoding: 'utf8' },
  )
  if (built.status !== 0) throw new Error(`wrangler could not build ${config}:\n${built.stdout}\n${built.stderr}`)
}
