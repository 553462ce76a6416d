// bench/image: our image → PNG (Squoosh WASM decoders + our PNG encoder, in workerd) against sharp (libvips,
// native, on Node) on the same images in the same run: a 12 MP and a 2 MP photo-like JPEG, a 1 MP screenshot PNG.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import sharp from 'sharp'
import { alternating, run, scratch, startConvertWorker, timeConverter } from './convert-harness.ts'
import { formatRatio, workerdRssMiB } from './wrangler-dev.ts'

const cases = [
  { name: 'photo-12mp.jpg', make: ['-f', 'lavfi', '-i', 'mandelbrot=size=4000x3000', '-frames:v', '1', '-q:v', '3'] },
  { name: 'photo-2mp.jpg', make: ['-f', 'lavfi', '-i', 'mandelbrot=size=1600x1200', '-frames:v', '1', '-q:v', '3'] },
  { name: 'screenshot-1mp.png', make: ['-f', 'lavfi', '-i', 'testsrc2=size=1280x800', '-frames:v', '1'] },
]

const worker = await startConvertWorker()
try {
  for (const image of cases) {
    const path = join(scratch, image.name)
    run('ffmpeg', ['-loglevel', 'error', '-y', ...image.make, path])
    const bytes = new Uint8Array(readFileSync(path))
    const first = await timeConverter(worker, 'image-to-png', image.name, bytes) // warm-up
    let sharpBytes = 0
    // In turn, ours then sharp, five times: both see the machine as it is at that moment.
    const { ours, baseline } = await alternating(5, {
      ours: async () => (await timeConverter(worker, 'image-to-png', image.name, bytes)).ms,
      baseline: async () => {
        const start = performance.now()
        sharpBytes = (await sharp(bytes).png({ compressionLevel: 6, adaptiveFiltering: true }).toBuffer()).byteLength
        return performance.now() - start
      },
    })
    console.log(`${image.name} (${bytes.byteLength} bytes)`)
    console.log(`  ${formatRatio('time', ours, 'sharp', baseline, 'ms')}`)
    if (first.outputs > 0) console.log(`  ${formatRatio('PNG size', first.bytes / 1024, 'sharp', sharpBytes / 1024, 'KiB')}`)
    else console.log('  our PNG would not be smaller than the input: no output (the chain ends)')
    const { width, height } = await sharp(bytes).metadata()
    console.log(`  peak WASM memory of the decoder: ${(first.peakWasmBytes / 2 ** 20).toFixed(0)} MiB; decoded RGBA outside it: ${((width! * height! * 4) / 2 ** 20).toFixed(0)} MiB`)
    console.log(`  workerd resident memory (whole process): ${workerdRssMiB(worker.pid).toFixed(0)} MiB`)
  }
} finally {
  worker.stop()
}
