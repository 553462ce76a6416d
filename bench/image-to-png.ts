// bench/image: our image → PNG (WASM decoders + our PNG encoder, in workerd) against sharp (libvips, native, on
// Node) on the same images in the same run: a 12 MP and a 2 MP photo-like JPEG, a 1 MP screenshot PNG.
// Ours is timed by this process around a POST to the bench Worker (the bytes go to workerd, the PNG is made and
// read in the isolate, a JSON answer comes back), so the baseline is sharp behind a Node HTTP server in a process
// of its own (bench/sharp-server.ts), called the same way: both pay a loopback round trip and a switch to another
// process, which on a loaded machine costs more than the 1 MP screenshot's conversion. sharp called inside this
// process (the figure before 2026-11-24) and the bare round trip (POST the bytes, JSON answer, no conversion) are
// measured in the same rounds and printed beside it.
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import sharp from 'sharp'
import { alternating, run, scratch, startConvertWorker, timeConverter } from './convert-harness.ts'
import { formatRatio, workerdRssMiB } from './wrangler-dev.ts'

const cases = [
  { name: 'photo-12mp.jpg', make: ['-f', 'lavfi', '-i', 'mandelbrot=size=4000x3000', '-frames:v', '1', '-q:v', '3'] },
  { name: 'photo-2mp.jpg', make: ['-f', 'lavfi', '-i', 'mandelbrot=size=1600x1200', '-frames:v', '1', '-q:v', '3'] },
  { name: 'screenshot-1mp.png', make: ['-f', 'lavfi', '-i', 'testsrc2=size=1280x800', '-frames:v', '1'] },
]

/** sharp-server.ts in a child process: its URL, and how to stop it. */
async function startSharpServer(): Promise<{ url: string; stop(): void }> {
  const child = spawn(process.execPath, [new URL('./sharp-server.ts', import.meta.url).pathname], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const [port] = await createInterface({ input: child.stdout! })
    [Symbol.asyncIterator]()
    .next()
    .then(({ value }) => [Number(value)])
  if (!port) throw new Error('the sharp server did not start')
  return { url: `http://127.0.0.1:${port}`, stop: () => child.kill() }
}

async function timePost(url: string, bytes: Uint8Array): Promise<number> {
  const start = performance.now()
  const response = await fetch(url, { method: 'POST', body: bytes })
  await response.json()
  if (!response.ok) throw new Error(`${url}: ${response.status}`)
  return performance.now() - start
}

const worker = await startConvertWorker()
const sharpServer = await startSharpServer()
try {
  for (const image of cases) {
    const path = join(scratch, image.name)
    run('ffmpeg', ['-loglevel', 'error', '-y', ...image.make, path])
    const bytes = new Uint8Array(readFileSync(path))
    const first = await timeConverter(worker, 'image-to-png', image.name, bytes) // warm-up
    await timePost(sharpServer.url, bytes)
    let sharpBytes = 0
    // In turn, each of the four, seven times: all see the machine as it is at that moment.
    const { ours, sharpServed, sharpHere, request } = await alternating(7, {
      ours: async () => (await timeConverter(worker, 'image-to-png', image.name, bytes)).ms,
      sharpServed: () => timePost(sharpServer.url, bytes),
      sharpHere: async () => {
        const start = performance.now()
        sharpBytes = (await sharp(bytes).png({ compressionLevel: 6, adaptiveFiltering: true }).toBuffer()).byteLength
        return performance.now() - start
      },
      request: () => timePost(`${worker.url}/__bench/echo`, bytes),
    })
    console.log(`${image.name} (${bytes.byteLength} bytes)`)
    console.log(`  ${formatRatio('time', ours, 'sharp served by Node', sharpServed, 'ms')}`)
    console.log(`  ${formatRatio('time', ours, 'sharp in this process', sharpHere, 'ms')}`)
    console.log(`  the bare round trip to workerd (POST the bytes, JSON answer): ${request.toFixed(2)} ms`)
    if (first.outputs > 0)
      console.log(`  ${formatRatio('PNG size', first.bytes / 1024, 'sharp', sharpBytes / 1024, 'KiB')}`)
    else console.log('  our PNG would not be smaller than the input: no output (the chain ends)')
    const { width, height } = await sharp(bytes).metadata()
    // JPEGs and the common PNGs are encoded from the rows in the decoder's heap; before 2026-11-24 every image was
    // also copied out of it as RGBA (width × height × 4 bytes), as the other formats still are.
    console.log(
      `  largest WASM heap so far: ${(first.peakWasmBytes / 2 ** 20).toFixed(0)} MiB; no RGBA copy outside it (was ${((width! * height! * 4) / 2 ** 20).toFixed(0)} MiB)`,
    )
    console.log(`  workerd resident memory (whole process): ${workerdRssMiB(worker.pid).toFixed(0)} MiB`)
  }
} finally {
  worker.stop()
  sharpServer.stop()
}
