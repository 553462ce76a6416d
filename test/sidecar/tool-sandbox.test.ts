// The sidecar's other tools run sandboxed as LibreOffice does (issue 31): qpdf and exiftool inside bubblewrap with
// only their request's folder, so a path that user input names (exiftool's Geotag opens the file its value names,
// a FIFO of the host in the attack that found it) is not there; and metadata keys that name files are refused.
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { argumentFolders, mergePdfs, metadataArguments, writeMetadata } from '../../sidecar/pdf-post'
import { toolSandboxed } from '../../sidecar/sandbox'
import { buildPdf } from '../support/pdf'

const scratch = mkdtempSync(join(tmpdir(), 'sidecar-tool-sandbox-'))
function onePage(path: string) {
  writeFileSync(path, buildPdf([{ width: 200, height: 200, content: '0 0 1 rg 10 10 50 50 re f' }]))
  return path
}
const hostFile = join(mkdtempSync(join(tmpdir(), 'sidecar-host-')), 'secret.txt')
writeFileSync(hostFile, 'host secret')

describe('tools in bubblewrap', { timeout: 60_000 }, () => {
  it('a sandboxed tool sees its folder and the installed software, not the rest of the host', () => {
    const folder = mkdtempSync(join(scratch, 'request-'))
    writeFileSync(join(folder, 'mine.txt'), 'mine')
    const [program, ...args] = toolSandboxed([folder], ['cat', join(folder, 'mine.txt'), hostFile])
    const result = spawnSync(program!, args, { encoding: 'utf8' })
    expect(result.stdout).toBe('mine')
    expect(result.stderr).toContain(`${hostFile}: No such file or directory`)
    const [env, ...envArgs] = toolSandboxed([folder], ['env'])
    expect(
      spawnSync(env!, envArgs, { encoding: 'utf8', env: { ...process.env, SIDECAR_PASSWORD: 'x' } })
        .stdout.split('\n')
        .filter(Boolean)
        .sort(),
    ).toEqual(['LANG=C.UTF-8', 'PATH=/usr/bin:/bin', 'PWD=/'])
  })

  it('opens only the folders of bare paths and @argument files, never of an option value', () => {
    expect(
      argumentFolders([
        '-Title=/etc/passwd',
        '--to=1-z',
        '/req/a/in.pdf',
        '@/req/b/encrypt.args',
        '--',
        '/req/a/out.pdf',
      ]),
    ).toEqual(['/req/a', '/req/b', '/req/a'])
  })

  it('qpdf and exiftool do their work inside it', async () => {
    const folder = mkdtempSync(join(scratch, 'request-'))
    const [a, b] = [onePage(join(folder, 'a.pdf')), onePage(join(folder, 'b.pdf'))]
    const merged = join(folder, 'merged.pdf')
    await mergePdfs([a, b], merged, 30_000)
    expect(execFileSync('qpdf', ['--show-npages', merged], { encoding: 'utf8' }).trim()).toBe('2')
    await writeMetadata(merged, metadataArguments({ Title: 'In the sandbox' }) as string[], 30_000)
    expect(execFileSync('exiftool', ['-s3', '-Title', merged], { encoding: 'utf8' }).trim()).toBe('In the sandbox')
  })
})

describe('metadata keys that name files', () => {
  it.each([
    'Geotag',
    'Geosync',
    'Geotime',
    'FileName',
    'OriginalFileName',
    'XMP:RawFileName',
    'Directory',
    'System:Directory',
    'HardLink',
    'SymLink',
  ])('refuses %s', (key) => {
    expect(metadataArguments({ [key]: hostFile })).toBe(`the key '${key}' cannot be written`)
  })

  it('takes ordinary tags', () => {
    expect(metadataArguments({ Title: '/a/path/is/just/text', Author: 'Ada' })).toEqual([
      '-Title=/a/path/is/just/text',
      '-Author=Ada',
    ])
  })
})
