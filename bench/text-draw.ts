// bench/text-draw: one text page's drawing, taken apart (issue 17). The same resvg 2.6.2 WASM binary as in the
// Worker (@cf-wasm/resvg's node build; worker/engines/text/render.ts imported as is, its .ttf import mapped to the
// file's bytes, the Worker's extensionless imports given their .ts), timed in Node, whose clock advances during synchronous work (workerd's does not):
// - the whole page in one resvg call as before bands (the baseline): parse (usvg: fonts, shaping, outlines),
//   render (tiny-skia), copy of the pixels out of WASM memory; and the fonts alone (an empty SVG);
// - drawPageBands: its total time, and its longest stretch without a turn of the event loop (the longest wait it
//   can cause another request), against the one call's.
// Alternating rounds, medians, ratios. Pages: a full page of prose, and the densest page the layout allows.
import { register } from 'node:module'
import { loadavg } from 'node:os'

register(
  `data:text/javascript,${encodeURIComponent(`
export async function resolve(specifier, context, next) {
  if (specifier === '@cf-wasm/resvg/workerd') return next('@cf-wasm/resvg/node', context)
  return specifier.startsWith('.') && !/\\.[a-z]+$/.test(specifier) ? next(specifier + '.ts', context) : next(specifier, context)
}
export async function load(url, context, next) {
  if (url.endsWith('.ttf')) return { format: 'module', shortCircuit: true, source: 'import { readFileSync } from "node:fs"; const b = readFileSync(new URL(' + JSON.stringify(url) + ')); export default b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength)' }
  return next(url, context)
}`)}`,
)

const { Resvg } = await import('@cf-wasm/resvg/node')
const { ADVANCE_EM, drawPageBands, FONT_FAMILY, lineHeightPx, pageSvg } = await import('../worker/engines/text/render.ts')
const { default: monoFont } = await import('../worker/engines/text/fonts/DejaVuSansMono.ttf')

const ROUNDS = 7
// pageStyle(150) of worker/converters/text-to-png.ts (not imported: it brings the PNG encoder's .wasm along).
const style = { widthPx: 1241, heightPx: 1754, marginPx: 90, fontPx: (10 / 72) * 150 }
const geometry = { columns: Math.floor((style.widthPx - 2 * style.marginPx) / (style.fontPx * ADVANCE_EM)), rows: Math.floor((style.heightPx - 2 * style.marginPx - style.fontPx * 0.3) / lineHeightPx(style)) }
const fill = (pattern: string) => pattern.repeat(Math.ceil(geometry.columns / pattern.length)).slice(0, geometry.columns)
const PAGES: Record<string, string[]> = {
  'full page of prose': Array.from({ length: geometry.rows }, (_, i) => fill(`${i + 1}. The quick brown fox jumps over the lazy dog; `)),
  'densest page (3 characters a cell)': Array.from({ length: geometry.rows }, () => fill('x\u0301\u0323')),
}
const options = { font: { fontBuffers: [new Uint8Array(monoFont as ArrayBuffer)], loadSystemFonts: false, defaultFontFamily: FONT_FAMILY, monospaceFamily: FONT_FAMILY } }

function wholePage(lines: string[]) {
  const t0 = performance.now()
  const resvg = new Resvg(pageSvg(lines, style), options)
  const t1 = performance.now()
  const rendered = resvg.render()
  const t2 = performance.now()
  void rendered.pixels
  const t3 = performance.now()
  rendered.free()
  resvg.free()
  return { parse: t1 - t0, render: t2 - t1, copy: t3 - t2, total: t3 - t0, longest: t3 - t0 }
}

function fontsAlone() {
  const t0 = performance.now()
  new Resvg(`<svg xmlns="http://www.w3.org/2000/svg" width="${style.widthPx}" height="${style.heightPx}"/>`, options).free()
  return performance.now() - t0
}

/** drawPageBands' total time and longest stretch between two turns (a 0 ms timer re-armed at each turn). */
async function banded(lines: string[]) {
  let longest = 0
  let last = performance.now()
  let running = true
  const tick = () => {
    const now = performance.now()
    longest = Math.max(longest, now - last)
    last = now
    if (running) setTimeout(tick, 0)
  }
  setTimeout(tick, 0)
  const t0 = performance.now()
  for await (const band of drawPageBands(lines, style)) for (let r = 0; r < band.rows; r++) band.row(r)
  const total = performance.now() - t0
  running = false
  tick()
  return { total, longest }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
console.log(`load average ${loadavg()[0]!.toFixed(1)} at the start; ${ROUNDS} alternating rounds, medians in ms`)
for (const [name, lines] of Object.entries(PAGES)) {
  wholePage(lines)
  await banded(lines) // warm
  const whole: ReturnType<typeof wholePage>[] = []
  const bands: Awaited<ReturnType<typeof banded>>[] = []
  const fonts: number[] = []
  for (let round = 0; round < ROUNDS; round++) {
    whole.push(wholePage(lines))
    fonts.push(fontsAlone())
    bands.push(await banded(lines))
  }
  const m = (key: keyof (typeof whole)[number]) => median(whole.map((w) => w[key]))
  const [bandTotal, bandLongest] = [median(bands.map((b) => b.total)), median(bands.map((b) => b.longest))]
  console.log(`${name}: one call ${m('total').toFixed(1)} = parse ${m('parse').toFixed(1)} + render ${m('render').toFixed(1)} + pixel copy ${m('copy').toFixed(1)}; fonts alone ${median(fonts).toFixed(2)} per resvg instance`)
  console.log(`  bands: total ${bandTotal.toFixed(1)} (${(bandTotal / m('total')).toFixed(2)}× the one call), longest stretch without a turn ${bandLongest.toFixed(1)} (${(bandLongest / m('longest')).toFixed(2)}× the one call)`)
}
console.log(`load average ${loadavg()[0]!.toFixed(1)} at the end`)
