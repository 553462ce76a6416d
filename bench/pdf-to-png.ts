// bench/pdf-to-png: our PDF → PNG (PDFium in WASM + our PNG encoder, in workerd) against pdftoppm (poppler,
// native) on the same 24-page PDF at 150 dpi, measured in the same run: time per page and PNG bytes; and our PNG
// encoder against @jsquash/png on the same rendered pixels.
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { median, printPngEncoderComparison, run, scratch, startConvertWorker, timeCommand, timeConverter } from './convert-harness.ts'
import { formatRatio, workerdRssMiB } from './wrangler-dev.ts'
import { buildPdf } from '../test/support/pdf.ts'

const PAGES = 24
const text = Array.from({ length: PAGES }, (_, page) =>
  Array.from({ length: 45 }, (_, line) => `Page ${page + 1}, line ${line + 1}: the quick brown fox jumps over the lazy dog, 0123456789.`).join('\n'),
).join('\f')
writeFileSync(join(scratch, 'bench.txt'), text)
run('soffice', ['--headless', '--convert-to', 'pdf', '--outdir', scratch, join(scratch, 'bench.txt')])
const pdfPath = join(scratch, 'bench.pdf')
const pdf = new Uint8Array(readFileSync(pdfPath))

// One image-heavy A4 page: a 2 MP photo-like JPEG over the whole page.
const jpegPath = join(scratch, 'page-photo.jpg')
run('ffmpeg', ['-loglevel', 'error', '-y', '-f', 'lavfi', '-i', 'mandelbrot=size=1600x1200', '-frames:v', '1', '-q:v', '3', jpegPath])
const photoPage = { width: 595, height: 842, content: 'q 595 0 0 446 0 198 cm /Im0 Do Q', jpeg: { bytes: new Uint8Array(readFileSync(jpegPath)), width: 1600, height: 1200 } }
const photoPdf = buildPdf([photoPage])
const photoPath = join(scratch, 'photo.pdf')
writeFileSync(photoPath, photoPdf)

const worker = await startConvertWorker()
try {
  const first = await timeConverter(worker, 'pdf-to-png', 'bench.pdf', pdf) // warm-up: WASM instantiation
  if (first.outputs !== PAGES) throw new Error(`expected ${PAGES} pages, got ${first.outputs}`)
  const ours = await median(3, async () => (await timeConverter(worker, 'pdf-to-png', 'bench.pdf', pdf)).ms)
  const rss = workerdRssMiB(worker.pid)
  const photoFirst = await timeConverter(worker, 'pdf-to-png', 'photo.pdf', photoPdf)
  const photoOurs = await median(3, async () => (await timeConverter(worker, 'pdf-to-png', 'photo.pdf', photoPdf)).ms)
  const out = join(scratch, 'pdftoppm')
  const baseline = await median(3, () => {
    rmSync(out, { recursive: true, force: true })
    mkdirSync(out)
    return timeCommand('pdftoppm', ['-png', '-r', '150', pdfPath, join(out, 'page')])
  })
  const baselineBytes = readdirSync(out).reduce((sum, file) => sum + statSync(join(out, file)).size, 0)
  console.log(`PDF → PNG, ${PAGES} A4 text pages at 150 dpi (${pdf.byteLength} bytes of PDF)`)
  console.log(formatRatio('time per page', ours / PAGES, 'pdftoppm', baseline / PAGES, 'ms'))
  console.log(formatRatio('PNG bytes per page', first.bytes / PAGES / 1024, 'pdftoppm', baselineBytes / PAGES / 1024, 'KiB'))
  console.log(`peak PDFium WASM memory: ${(first.peakWasmBytes / 2 ** 20).toFixed(0)} MiB; workerd resident memory (whole process): ${rss.toFixed(0)} MiB`)
  await printPngEncoderComparison('pdf-to-png', 'bench.pdf', pdf)

  const photoBaseline = await median(3, () => {
    rmSync(out, { recursive: true, force: true })
    mkdirSync(out)
    return timeCommand('pdftoppm', ['-png', '-r', '150', photoPath, join(out, 'page')])
  })
  console.log(`PDF → PNG, 1 image-heavy A4 page at 150 dpi (${photoPdf.byteLength} bytes of PDF)`)
  console.log(formatRatio('time per page', photoOurs, 'pdftoppm', photoBaseline, 'ms'))
  console.log(`peak PDFium WASM memory: ${(photoFirst.peakWasmBytes / 2 ** 20).toFixed(0)} MiB`)
  await printPngEncoderComparison('pdf-to-png', 'photo.pdf', photoPdf)

} finally {
  worker.stop()
}

// What a step holds of its PNGs: one page at a time (converters yield, the pipeline stores each), against a whole
// part held together (as when convert answered an array). A Worker of its own: after the timed conversions,
// wrangler dev's isolate did not survive more.
const photos = buildPdf(Array.from({ length: 10 }, () => photoPage))
const held = await startConvertWorker()
try {
  const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(2)} MiB`
  for (const [label, name, bytes] of [[`${PAGES} text pages (steps of 10)`, 'bench.pdf', pdf], ['10 image-heavy pages (one step)', 'photos.pdf', photos]] as const) {
    const oneByOne = await timeConverter(held, 'pdf-to-png', name, bytes)
    const together = await timeConverter(held, 'pdf-to-png', name, bytes, true)
    console.log(`PNG bytes a step holds at once, ${label}: ${mib(oneByOne.peakHeldBytes)} one page at a time · ${mib(together.peakHeldBytes)} a part held together`)
  }
} finally {
  held.stop()
}
