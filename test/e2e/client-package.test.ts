// @edgefloor/client as an app installs it: `npm pack` in client/ (its prepack builds dist/), the tarball installed
// into a fresh project with no access to this repository's sources, the app type-checked under `strict` with
// moduleResolution NodeNext and with Bundler (the package's declarations checked too: skipLibCheck is off), then
// run by Node against the local service (test/fixtures/client-app/flow.ts: sign-in with a token store, an early
// and a forced refresh, a one-request and a tus upload, a conversion followed to its end, a preview, typed errors).
// TypeScript's reference for the two resolutions: https://www.typescriptlang.org/docs/handbook/modules/reference.html
// ("node16, nodenext: … the only correct module options for modern Node.js"; "bundler: for use with bundlers").
import { spawnSync } from 'node:child_process'
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { root } from '../../bench/wrangler-dev.ts'
import { START_MS, uniqueEmail, waitForServers } from './dev-worker.ts'

const worker = { url: inject('devWorkerUrl') }
const fixture = join(root, 'test', 'fixtures', 'client-app')
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc')
/** The project's own Node 22 (it strips the app's types); the one running vitest otherwise. */
const node = existsSync(join(root, 'node_modules', '.bin', 'node'))
  ? join(root, 'node_modules', '.bin', 'node')
  : process.execPath

let work: string
let app: string

function run(command: string, args: string[], cwd: string) {
  const result = spawnSync(command, args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' },
  })
  return { status: result.status, output: `${result.stdout}${result.stderr}`, stdout: result.stdout }
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'edgefloor-client-package-'))
  app = join(work, 'app')
  mkdirSync(app)
  const packed = run('npm', ['pack', '--pack-destination', work], join(root, 'client'))
  expect(packed.status, packed.output).toBe(0)
  const tarball = readdirSync(work).find((name) => name.endsWith('.tgz'))
  expect(tarball).toBe('edgefloor-client-0.1.0.tgz')
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'an-app', private: true, type: 'module' }))
  // The package has no dependencies, so it installs from the tarball alone, with no registry.
  const installed = run('npm', ['install', '--offline', '--no-package-lock', join(work, tarball!)], app)
  expect(installed.status, installed.output).toBe(0)
  // An app on Node brings its own @types/node; this one borrows the repository's copy.
  mkdirSync(join(app, 'node_modules', '@types'), { recursive: true })
  symlinkSync(join(root, 'node_modules', '@types', 'node'), join(app, 'node_modules', '@types', 'node'), 'dir')
  for (const name of readdirSync(fixture)) copyFileSync(join(fixture, name), join(app, name))
  await waitForServers(worker.url)
}, START_MS)

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true })
})

describe('@edgefloor/client from its tarball', () => {
  it('ships an ES module and standalone declarations: nothing of the Worker, no dependencies', () => {
    const installed = join(app, 'node_modules', '@edgefloor', 'client')
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'))
    expect(manifest).toMatchObject({
      name: '@edgefloor/client',
      type: 'module',
      types: './dist/index.d.ts',
      exports: { '.': { types: './dist/index.d.ts', import: './dist/index.js' } },
    })
    expect(manifest.dependencies).toBeUndefined()
    const shipped = readdirSync(join(installed, 'dist'))
    expect(shipped).toContain('index.js')
    for (const name of shipped.filter((file) => file.endsWith('.d.ts'))) {
      const declarations = readFileSync(join(installed, 'dist', name), 'utf8')
      expect(declarations, name).not.toMatch(/worker\/|hono|zod|\.ts['"]/)
    }
  })

  it.each(['nodenext', 'bundler'])(
    'type-checks an app under strict with moduleResolution %s, with zero errors',
    (resolution) => {
      const checked = run(node, [tsc, '-p', `tsconfig.${resolution}.json`], app)
      expect(checked.output).toBe('')
      expect(checked.status).toBe(0)
    },
  )

  it("runs an app's flow against the local service", () => {
    const email = uniqueEmail('package')
    const ran = run(node, ['main.ts', worker.url, email], app)
    expect(ran.status, ran.output).toBe(0)
    const result = JSON.parse(ran.stdout.trim().split('\n').at(-1)!)
    expect(result).toMatchObject({
      storedKeys: ['edgefloor.tokens'],
      userEmail: email,
      small: {
        name: 'hello.txt',
        extension: '.txt',
        size: 'Hello from an app that installed @edgefloor/client.\n'.length * 20,
      },
      resumable: { size: 3 * 1024 * 1024 + 123, hashMatches: true, downloadedMatches: true },
      previewType: 'image/png',
      refreshedEarly: true,
      refreshedAfter401: true,
      notFoundCode: 'FILE_NOT_FOUND',
      signedOut: true,
      refreshAfterLogoutCode: 'INVALID_REFRESH_TOKEN',
    })
    // tus: one PATCH of 1 MiB + 7 bytes at a time, the last completing the file.
    const chunk = 1024 * 1024 + 7
    expect(result.resumable.progress).toEqual([chunk, 2 * chunk, 3 * chunk, 3 * 1024 * 1024 + 123])
    expect(result.targets).toContain('.png')
    expect(result.converted.length).toBeGreaterThanOrEqual(1)
    expect(result.converted[0]).toEqual({ extension: '.png', parent_file: expect.any(String) })
    expect(result.statuses.at(-1) ?? 'done').toBe('done')
  })
})
