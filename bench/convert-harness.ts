// Shared by the converter benchmarks: the bench Worker, a timed call of one converter in it, and medians.
import { spawnSync } from 'node:child_process'
import { mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { formatRatio, startDevWorker, type DevWorker } from './wrangler-dev.ts'

// Outside the project: wrangler dev reloads the Worker when files under the project change.
export const scratch = join(tmpdir(), 'edgefloor-bench-files')
mkdirSync(scratch, { recursive: true })

export function startConvertWorker(): Promise<DevWorker> {
  return startDevWorker('bench/workers/convert.ts')
}

/** `holdParts`: the consumer holds each part's outputs together, as the pipeline did before converters yielded them. */
export async function timeConverter(
  worker: DevWorker,
  converter: string,
  name: string,
  bytes: Uint8Array,
  holdParts = false,
): Promise<{ ms: number; outputs: number; bytes: number; peakWasmBytes: number; peakHeldBytes: number }> {
  const hold = holdParts ? '&hold=parts' : ''
  const url = `${worker.url}/__bench/convert/${converter}?name=${encodeURIComponent(name)}${hold}`
  let start = performance.now()
  const response = await fetch(url, { method: 'POST', body: bytes }).catch((error) => {
    // A kept-alive connection that workerd closed while a native baseline held this process (spawnSync): a POST is
    // not retried by fetch itself, so once here, on a new connection, timed from the retry.
    if (!['EPIPE', 'ECONNRESET', 'UND_ERR_SOCKET'].includes(error?.cause?.code)) throw error
    start = performance.now()
    return fetch(url, { method: 'POST', body: bytes })
  })
  const result = (await response.json()) as {
    outputs: number
    bytes: number
    peakWasmBytes: number
    peakHeldBytes: number
    message?: string
  }
  if (!response.ok) throw new Error(`${converter}: ${response.status} ${result.message}`)
  return { ms: performance.now() - start, ...result }
}

/**
 * Our PNG encoder against @jsquash/png (Squoosh's Rust png crate in WASM) on the pixels of the converter's
 * first outputs, both in one isolate: median time and bytes per image. A Worker of its own: after the timed
 * conversions, the decoded pages pushed the shared one over what wrangler dev's isolate survives.
 */
export async function comparePngEncoders(
  converter: string,
  name: string,
  bytes: Uint8Array,
): Promise<Record<'ours' | 'jsquash', { ms: number; bytes: number }>> {
  const worker = await startConvertWorker()
  try {
    return await comparePngEncodersIn(worker, converter, name, bytes)
  } finally {
    worker.stop()
  }
}

async function comparePngEncodersIn(
  worker: DevWorker,
  converter: string,
  name: string,
  bytes: Uint8Array,
): Promise<Record<'ours' | 'jsquash', { ms: number; bytes: number }>> {
  const post = async (path: string, body?: Uint8Array) => {
    const response = await fetch(`${worker.url}${path}`, { method: 'POST', body })
    const result = (await response.json()) as { images: number; bytes: number; message?: string }
    if (!response.ok) throw new Error(`${path}: ${response.status} ${result.message}`)
    return result
  }
  const { images } = await post(`/__bench/png-encoders/prepare/${converter}?name=${encodeURIComponent(name)}`, bytes)
  const measure = async (encoder: 'ours' | 'jsquash') => {
    const { bytes: total } = await post(`/__bench/png-encoders/encode/${encoder}`) // warm-up
    const ms = await median(3, async () => {
      const start = performance.now()
      await post(`/__bench/png-encoders/encode/${encoder}`)
      return performance.now() - start
    })
    return { ms: ms / images, bytes: total / images }
  }
  return { ours: await measure('ours'), jsquash: await measure('jsquash') }
}

export async function printPngEncoderComparison(converter: string, name: string, bytes: Uint8Array): Promise<void> {
  const { ours, jsquash } = await comparePngEncoders(converter, name, bytes)
  console.log(formatRatio('  PNG encoding per page', ours.ms, '@jsquash/png', jsquash.ms, 'ms'))
  console.log(formatRatio('  PNG size per page', ours.bytes / 1024, '@jsquash/png', jsquash.bytes / 1024, 'KiB'))
}

export function timeCommand(command: string, args: string[]): number {
  const start = performance.now()
  const run = spawnSync(command, args, { stdio: 'ignore' })
  if (run.status !== 0) throw new Error(`${command} failed`)
  return performance.now() - start
}

/**
 * Medians of several measurements taken in turn (a, b, c, a, b, c, …), so that a machine getting busier or
 * quieter during the run weighs on each of them alike.
 */
export async function alternating<K extends string>(
  times: number,
  runs: Record<K, () => Promise<number> | number>,
): Promise<Record<K, number>> {
  const samples = Object.fromEntries(Object.keys(runs).map((key) => [key, [] as number[]])) as Record<K, number[]>
  for (let i = 0; i < times; i++) for (const key of Object.keys(runs) as K[]) samples[key].push(await runs[key]())
  const medians = {} as Record<K, number>
  for (const key of Object.keys(runs) as K[]) {
    const sorted = samples[key].sort((a, b) => a - b)
    medians[key] = sorted[Math.floor(sorted.length / 2)]!
  }
  return medians
}

export async function median(times: number, run: () => Promise<number> | number): Promise<number> {
  const samples: number[] = []
  for (let i = 0; i < times; i++) samples.push(await run())
  samples.sort((a, b) => a - b)
  return samples[Math.floor(samples.length / 2)]!
}

export function run(command: string, args: string[]): void {
  const result = spawnSync(command, args, { stdio: 'ignore' })
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed`)
}
