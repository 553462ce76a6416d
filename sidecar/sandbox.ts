// What a document can reach while LibreOffice converts it. Inside bubblewrap: no network (its own empty network
// namespace), a cleared environment, and of the filesystem only LibreOffice's install, the fonts, the shared
// libraries and the Python that drives it (read-only), plus a private tmpfs for its profile and the job that
// disappears with the sandbox. A document that links file:///etc/passwd, a picture under /usr/share or
// http://127.0.0.1 finds nothing there.
import { execFile } from 'node:child_process'
import { constants } from 'node:fs'
import { access, readdir, readlink, realpath } from 'node:fs/promises'
import { delimiter, dirname, isAbsolute, join, resolve } from 'node:path'
import { promisify } from 'node:util'

/** The programs and read-only paths a LibreOffice process needs, found once per pool. */
export interface Installation {
  /** soffice.bin itself: the `soffice` shell script would need /bin/sh and half of /usr/bin. */
  readonly program: string
  readonly python: string
  /** Paths mounted read-only at the same place inside the sandbox. */
  readonly readOnly: readonly string[]
  /** [source, path inside the sandbox], read-only: the interpreter as the path it is called by. */
  readonly renamed: ReadonlyArray<readonly [string, string]>
}

/** Fonts and font configuration: what LibreOffice lays text out with. */
const FONTS = [
  '/usr/share/fonts',
  '/usr/local/share/fonts',
  '/usr/share/fontconfig',
  '/etc/fonts',
  '/var/cache/fontconfig',
]
/** The dynamic loader's cache and the C.UTF-8 locale. */
const SYSTEM = ['/etc/ld.so.cache', '/usr/lib/locale', '/usr/lib64']

async function onPath(command: string, path: string): Promise<string> {
  if (isAbsolute(command) || command.includes('/')) return resolve(command)
  for (const folder of path.split(delimiter).filter(Boolean)) {
    const candidate = join(folder, command)
    try {
      await access(candidate, constants.X_OK)
      return candidate
    } catch {}
  }
  throw new Error(`${command} is not on the PATH: install LibreOffice or set SOFFICE`)
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  )
}

/** Where the install's symbolic links lead outside it (Debian keeps its registry in /etc, its icons in /usr/share). */
async function linkTargets(root: string): Promise<string[]> {
  const targets = new Set<string>()
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isSymbolicLink()) continue
    const link = join(entry.parentPath, entry.name)
    const target = await realpath(link).catch(() => undefined)
    if (target && !target.startsWith(`${root}/`)) targets.add(target)
    else if (!target) targets.add(resolve(entry.parentPath, await readlink(link)))
  }
  return [...targets]
}

const PROBE = `import json, sys, sysconfig, uno, unohelper
print(json.dumps([uno.__file__, unohelper.__file__, sysconfig.get_paths()['stdlib'], sysconfig.get_config_var('MULTIARCH') or '']))`

export async function findInstallation(
  soffice: string,
  python: string,
  path = process.env.PATH ?? '',
): Promise<Installation> {
  const found = await realpath(await onPath(soffice, path))
  const beside = join(dirname(found), 'soffice.bin')
  const program = found.endsWith('/soffice') && (await exists(beside)) ? beside : found
  const root = dirname(dirname(program))
  const interpreter = await onPath(python, path)
  const { stdout } = await promisify(execFile)(interpreter, ['-c', PROBE], {
    env: { PATH: '/usr/bin:/bin' } as unknown as NodeJS.ProcessEnv,
  })
  const [uno, unohelper, stdlib, multiarch] = JSON.parse(stdout) as [string, string, string, string]
  // Debian's merged /usr: /lib and /lib64 are links into /usr, made inside the sandbox too.
  const libraries = multiarch ? [`/usr/lib/${multiarch}`] : ['/usr/lib']
  const readOnly = [root, ...(await linkTargets(root)), ...FONTS, ...SYSTEM, ...libraries, stdlib, uno, unohelper]
  for (const file of [uno, unohelper]) {
    const real = await realpath(file)
    if (real !== file) readOnly.push(real)
  }
  return { program, python: interpreter, readOnly, renamed: [[await realpath(interpreter), interpreter]] }
}

/** The only variables LibreOffice and the bridge get: nothing of the sidecar's own (SIDECAR_PASSWORD among them). */
export function officeEnvironment(home: string): Record<string, string> {
  return { HOME: home, TMPDIR: join(home, 'tmp'), PATH: '/usr/bin:/bin', LANG: 'C.UTF-8', SAL_USE_VCLPLUGIN: 'svp' }
}

/**
 * `command` inside a bubblewrap sandbox whose only writable place is a tmpfs at `folder` (so its path, and the
 * profile's, still name the process on the host for ps and pkill) and which sees `bridge` read-only.
 */
export function sandboxed(installation: Installation, folder: string, bridge: string, command: string[]): string[] {
  const args = ['bwrap', '--clearenv', '--unshare-all', '--die-with-parent', '--new-session']
  for (const path of installation.readOnly) args.push('--ro-bind-try', path, path)
  for (const [source, path] of installation.renamed) args.push('--ro-bind', source, path)
  args.push('--symlink', 'usr/lib', '/lib', '--symlink', 'usr/lib64', '/lib64', '--symlink', 'usr/bin', '/bin')
  args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp', '--ro-bind', bridge, bridge, '--tmpfs', folder)
  for (const [name, value] of Object.entries(officeEnvironment(folder))) args.push('--setenv', name, value)
  return [...args, ...command]
}

/**
 * A tool that reads user input (qpdf, exiftool) inside bubblewrap, as LibreOffice is. No network, a cleared
 * environment, the installed software read-only (/usr and the loader's cache, Perl's /etc/perl for exiftool). Of
 * the rest of the disk only `folders` (the request's own), read-write. A metadata value or a PDF that names
 * /etc/passwd, a FIFO or a socket of the host finds nothing there.
 */
export function toolSandboxed(folders: readonly string[], command: readonly string[]): string[] {
  const args = [
    'bwrap',
    '--clearenv',
    '--unshare-all',
    '--die-with-parent',
    '--new-session',
    '--ro-bind',
    '/usr',
    '/usr',
  ]
  args.push('--symlink', 'usr/lib', '/lib', '--symlink', 'usr/lib64', '/lib64', '--symlink', 'usr/bin', '/bin')
  args.push('--ro-bind-try', '/etc/ld.so.cache', '/etc/ld.so.cache', '--ro-bind-try', '/etc/perl', '/etc/perl')
  args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp')
  for (const folder of new Set(folders)) args.push('--bind', folder, folder)
  args.push('--setenv', 'PATH', '/usr/bin:/bin', '--setenv', 'LANG', 'C.UTF-8')
  return [...args, ...command]
}
