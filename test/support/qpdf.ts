// Encrypting test PDFs with qpdf (Node only): the outside reference for the standard security handler. Each kind
// is one of the handler's versions and revisions as qpdf writes them (`qpdf --encrypt user owner bits …`).
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** qpdf's arguments after the key length for each kind (V and R are what qpdf writes in /Encrypt). */
export const ENCRYPTIONS = {
  'rc4-40': ['40'], // V 1, R 2
  'rc4-128': ['128', '--use-aes=n'], // V 2, R 3
  'rc4-128-v4': ['128', '--use-aes=n', '--force-V4'], // V 4, R 4, crypt filter /V2
  'aes-128': ['128', '--use-aes=y'], // V 4, R 4, crypt filter /AESV2
  'aes-128-clear-metadata': ['128', '--use-aes=y', '--cleartext-metadata'], // /EncryptMetadata false
  'aes-256-r5': ['256', '--force-R5'], // V 5, R 5 (deprecated, SHA-256 only)
  'aes-256': ['256'], // V 5, R 6 (algorithm 2.B)
} as const satisfies Record<string, readonly string[]>

export type EncryptionKind = keyof typeof ENCRYPTIONS

/** `plain` encrypted by qpdf with the given user password (empty: opens without one) and owner password. */
export function encryptWithQpdf(
  plain: Uint8Array,
  kind: EncryptionKind,
  userPassword = '',
  ownerPassword = 'owner-secret',
): Uint8Array {
  const [bits, ...options] = ENCRYPTIONS[kind]
  const work = mkdtempSync(join(tmpdir(), 'qpdf-'))
  try {
    writeFileSync(join(work, 'plain.pdf'), plain)
    try {
      // RC4 is written only when asked for (qpdf 11 calls it weak).
      execFileSync(
        'qpdf',
        [
          '--allow-weak-crypto',
          '--encrypt',
          userPassword,
          ownerPassword,
          bits,
          ...options,
          '--',
          join(work, 'plain.pdf'),
          join(work, 'encrypted.pdf'),
        ],
        { stdio: 'pipe', timeout: 120_000 },
      )
    } catch (error) {
      // Exit status 3: written, with warnings about the input (the hostile PDFs have no cross-reference offsets).
      if ((error as { status?: number }).status !== 3) throw error
    }
    return new Uint8Array(readFileSync(join(work, 'encrypted.pdf')))
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}
