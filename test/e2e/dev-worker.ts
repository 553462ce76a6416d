// The real Worker for end-to-end tests: `wrangler dev --local` on a free loopback port with its own migrated
// state (the bench harness), rate limits off so one test can sign in repeatedly.
import { mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { root, startDevWorker, type DevWorker } from '../../bench/wrangler-dev.ts'

export type { DevWorker }

export const artifactsDir = join(root, '.tmp', 'artifacts')

export async function startWorker(vars: Record<string, string> = {}): Promise<DevWorker> {
  mkdirSync(artifactsDir, { recursive: true })
  return startDevWorker('worker/index.ts', { AUTH_RATE_LIMIT_PER_MINUTE: '0', ...vars })
}

/** A 160×120 baseline JPEG (2 KiB) made once by Chromium's canvas encoder. */
export function photoJpeg(): Uint8Array {
  return new Uint8Array(readFileSync(join(root, 'test', 'fixtures', 'docs', 'photo.jpg')))
}

export function uniqueEmail(prefix: string): string {
  return `${prefix}-${crypto.randomUUID().slice(0, 12)}@example.com`
}

/** Width and height from a PNG's IHDR chunk, after checking the signature. */
export function pngSize(bytes: Uint8Array): { width: number; height: number } {
  const signature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]
  if (!signature.every((byte, i) => bytes[i] === byte)) throw new Error('not a PNG')
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  return { width: view.getUint32(16), height: view.getUint32(20) }
}
