// bench/text-to-png: our text → PNG (our layout, resvg in WASM, our PNG encoder, in workerd) against the
// LibreOffice + pdftoppm route a self-hoster would otherwise take (soffice → PDF → pdftoppm -r 150), same text,
// same run: time per page; and our PNG encoder against @jsquash/png on the same rendered pixels.
import { readdirSync, rmSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import {
  median,
  printPngEncoderComparison,
  scratch,
  startConvertWorker,
  timeCommand,
  timeConverter,
} from './convert-harness.ts'
import { formatRatio } from './wrangler-dev.ts'

const lines = Array.from(
  { length: 20 * 70 },
  (_, i) => `${i + 1}\tEdgefloor renders text pages: the quick brown fox jumps over the lazy dog.`,
)
const text = new TextEncoder().encode(lines.join('\n'))
const txtPath = join(scratch, 'pages.txt')
writeFileSync(txtPath, text)

const worker = await startConvertWorker()
try {
  const first = await timeConverter(worker, 'text-to-png', 'pages.txt', text)
  const ours = await median(3, async () => (await timeConverter(worker, 'text-to-png', 'pages.txt', text)).ms)
  const out = join(scratch, 'text-baseline')
  const baseline = await median(3, () => {
    rmSync(out, { recursive: true, force: true })
    mkdirSync(out)
    const soffice = timeCommand('soffice', ['--headless', '--convert-to', 'pdf', '--outdir', out, txtPath])
    return soffice + timeCommand('pdftoppm', ['-png', '-r', '150', join(out, 'pages.pdf'), join(out, 'page')])
  })
  const baselinePages = readdirSync(out).filter((file) => file.endsWith('.png')).length
  console.log(
    `text → PNG, ${text.byteLength} bytes of text: ours ${first.outputs} pages, LibreOffice ${baselinePages} pages`,
  )
  console.log(formatRatio('time per page', ours / first.outputs, 'soffice + pdftoppm', baseline / baselinePages, 'ms'))
  await printPngEncoderComparison('text-to-png', 'pages.txt', text)
} finally {
  worker.stop()
}
