// bench/pdf-to-png: our PDF → PNG (PDFium in WASM + our PNG encoder, in workerd) against pdftoppm (poppler,
// native) and `mutool draw` (MuPDF, native: the fastest renderer users would pick instead) on the same 24-page PDF
// at 150 dpi, measured in turn in the same run: time per page and PNG bytes; and our PNG encoder against
// @jsquash/png on the same rendered pixels.
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import {
  alternating,
  printPngEncoderComparison,
  run,
  scratch,
  startConvertWorker,
  timeCommand,
  timeConverter,
} from './convert-harness.ts'
import { formatRatio, workerdRssMiB } from './wrangler-dev.ts'
import { buildPdf } from '../test/support/pdf.ts'

const PAGES = 24
const text = Array.from({ length: PAGES }, (_, page) =>
  Array.from(
    { length: 45 },
    (_, line) => `Page ${page + 1}, line ${line + 1}: the quick brown fox jumps over the lazy dog, 0123456789.`,
  ).join('\n'),
).join('\f')
writeFileSync(join(scratch, 'bench.txt'), text)
run('soffice', ['--headless', '--convert-to', 'pdf', '--outdir', scratch, join(scratch, 'bench.txt')])
const pdfPath = join(scratch, 'bench.pdf')
const pdf = new Uint8Array(readFileSync(pdfPath))

// One image-heavy A4 page: a 2 MP photo-like JPEG over the whole page.
const jpegPath = join(scratch, 'page-photo.jpg')
run('ffmpeg', [
  '-loglevel',
  'error',
  '-y',
  '-f',
  'lavfi',
  '-i',
  'mandelbrot=size=1600x1200',
  '-frames:v',
  '1',
  '-q:v',
  '3',
  jpegPath,
])
const photoPage = {
  width: 595,
  height: 842,
  content: 'q 595 0 0 446 0 198 cm /Im0 Do Q',
  jpeg: { bytes: new Uint8Array(readFileSync(jpegPath)), width: 1600, height: 1200 },
}
const photoPdf = buildPdf([photoPage])
const photoPath = join(scratch, 'photo.pdf')
writeFileSync(photoPath, photoPdf)

const worker = await startConvertWorker()
try {
  const first = await timeConverter(worker, 'pdf-to-png', 'bench.pdf', pdf) // warm-up: WASM instantiation
  if (first.outputs !== PAGES) throw new Error(`expected ${PAGES} pages, got ${first.outputs}`)
  const out = join(scratch, 'renders')
  /** A native renderer's time on `path` into a fresh folder (the folder then holds its PNGs, for their bytes). */
  const native = (command: 'pdftoppm' | 'mutool', path: string) => () => {
    rmSync(out, { recursive: true, force: true })
    mkdirSync(out)
    return command === 'pdftoppm'
      ? timeCommand('pdftoppm', ['-png', '-r', '150', path, join(out, 'page')])
      : timeCommand('mutool', ['draw', '-q', '-r', '150', '-o', join(out, 'page-%d.png'), path])
  }
  const rendersBytes = () => readdirSync(out).reduce((sum, file) => sum + statSync(join(out, file)).size, 0)
  const times = await alternating(3, {
    ours: async () => (await timeConverter(worker, 'pdf-to-png', 'bench.pdf', pdf)).ms,
    pdftoppm: native('pdftoppm', pdfPath),
    mutool: native('mutool', pdfPath),
  })
  const mutoolBytes = rendersBytes()
  native('pdftoppm', pdfPath)()
  const pdftoppmBytes = rendersBytes()
  const rss = workerdRssMiB(worker.pid)
  console.log(`PDF → PNG, ${PAGES} A4 text pages at 150 dpi (${pdf.byteLength} bytes of PDF)`)
  console.log(formatRatio('time per page', times.ours / PAGES, 'pdftoppm', times.pdftoppm / PAGES, 'ms'))
  console.log(formatRatio('time per page', times.ours / PAGES, 'mutool draw', times.mutool / PAGES, 'ms'))
  console.log(
    formatRatio('PNG bytes per page', first.bytes / PAGES / 1024, 'pdftoppm', pdftoppmBytes / PAGES / 1024, 'KiB'),
  )
  console.log(
    formatRatio('PNG bytes per page', first.bytes / PAGES / 1024, 'mutool draw', mutoolBytes / PAGES / 1024, 'KiB'),
  )
  console.log(
    `peak PDFium WASM memory: ${(first.peakWasmBytes / 2 ** 20).toFixed(0)} MiB; workerd resident memory (whole process): ${rss.toFixed(0)} MiB`,
  )
  await printPngEncoderComparison('pdf-to-png', 'bench.pdf', pdf)

  const photoFirst = await timeConverter(worker, 'pdf-to-png', 'photo.pdf', photoPdf)
  const photoTimes = await alternating(3, {
    ours: async () => (await timeConverter(worker, 'pdf-to-png', 'photo.pdf', photoPdf)).ms,
    pdftoppm: native('pdftoppm', photoPath),
    mutool: native('mutool', photoPath),
  })
  console.log(`PDF → PNG, 1 image-heavy A4 page at 150 dpi (${photoPdf.byteLength} bytes of PDF)`)
  console.log(formatRatio('time per page', photoTimes.ours, 'pdftoppm', photoTimes.pdftoppm, 'ms'))
  console.log(formatRatio('time per page', photoTimes.ours, 'mutool draw', photoTimes.mutool, 'ms'))
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
  for (const [label, name, bytes] of [
    [`${PAGES} text pages (steps of 10)`, 'bench.pdf', pdf],
    ['10 image-heavy pages (one step)', 'photos.pdf', photos],
  ] as const) {
    const oneByOne = await timeConverter(held, 'pdf-to-png', name, bytes)
    const together = await timeConverter(held, 'pdf-to-png', name, bytes, true)
    console.log(
      `PNG bytes a step holds at once, ${label}: ${mib(oneByOne.peakHeldBytes)} one page at a time · ${mib(together.peakHeldBytes)} a part held together`,
    )
  }
} finally {
  held.stop()
}
