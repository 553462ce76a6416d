// text → PNG pages rendered by resvg in WASM with the bundled font.
import { describe, expect, it } from 'vitest'
import { textToPng } from '../../worker/converters/text-to-png'
import { pageStyle } from '../../worker/engines/text/page'
import { decodeImage } from '../../worker/engines/image/decode'
import { readPngHeader, type RawImage } from '../../worker/engines/png/encode'
import { TURN_CHARS } from '../../worker/engines/text/layout'
import { ADVANCE_EM, drawable, lineHeightPx } from '../../worker/engines/text/render'
import { callJson } from '../support/api'
import { signUp } from '../support/accounts'
import { convertAll, inputFromBytes, outputBytes, TEST_IMAGE_LIMITS, testContext } from '../support/conversion'
import { uploaded } from '../support/files'
import { turnsDuring } from '../support/turns'
import { HOSTILE_CASES } from '../hostile/corpus'

async function inkIn(png: Uint8Array, box: { x0: number; y0: number; x1: number; y1: number }) {
  const image = await decodeImage(png, TEST_IMAGE_LIMITS)
  let dark = 0
  let total = 0
  for (let y = Math.floor(box.y0 * image.height); y < box.y1 * image.height; y++) {
    for (let x = Math.floor(box.x0 * image.width); x < box.x1 * image.width; x++) {
      if (image.data[(y * image.width + x) * 4]! < 128) dark++
      total++
    }
  }
  return dark / total
}

const encode = (text: string) => new TextEncoder().encode(text)

describe('text-to-png', () => {
  it('draws the text on white A4 pages at PDF_DPI', async () => {
    const [page] = await convertAll(
      textToPng,
      inputFromBytes('note.txt', encode('Hello, Edgefloor!\nΚαλημέρα · Привет')),
      testContext(),
    )
    const png = await outputBytes(page!)
    expect(readPngHeader(png)).toMatchObject({ width: 1241, height: 1754, colorType: 0 })
    expect(page!.metadata).toEqual({ page: 1, width: 1241, height: 1754, dpi: 150 })
    expect(await inkIn(png, { x0: 0.07, y0: 0.05, x1: 0.4, y1: 0.09 })).toBeGreaterThan(0.02)
    expect(await inkIn(png, { x0: 0, y0: 0.2, x1: 1, y1: 1 })).toBe(0)
  })

  it('plans a long text in steps of CONVERT_PAGES_PER_STEP pages, and a step draws only its own', async () => {
    // A step's CPU is bounded by its pages, as a PDF's is: 200 dense pages in one step were about a minute of CPU
    // as deployed, and Cloudflare ends an invocation at its [limits] cpu_ms (docs/platform-limits.md).
    const { geometry } = pageStyle(72)
    const lines = Array.from({ length: geometry.rows * 3 + 1 }, (_, i) => `line ${i + 1}`)
    const input = inputFromBytes('steps.txt', encode(lines.join('\n')))
    const ctx = testContext({ settings: { PDF_DPI: 72, CONVERT_PAGES_PER_STEP: 3 } })
    expect(await textToPng.plan!(input, ctx)).toEqual({
      total: 4,
      parts: [
        { start: 0, end: 3 },
        { start: 3, end: 4 },
      ],
    })
    const outputs = await convertAll(textToPng, input, { ...ctx, part: { start: 3, end: 4 } })
    expect(outputs.map((output) => [output.index, output.total, output.metadata])).toEqual([
      [3, 4, { page: 4, width: 595, height: 842, dpi: 72 }],
    ])
    // The last page holds the one line left over, at its top.
    const last = await outputBytes(outputs[0]!)
    expect(await inkIn(last, { x0: 0, y0: 0.04, x1: 0.3, y1: 0.1 })).toBeGreaterThan(0)
    expect(await inkIn(last, { x0: 0, y0: 0.2, x1: 1, y1: 1 })).toBe(0)
  })

  it('refuses a text past TEXT_MAX_PAGES when it plans, before any page is drawn', async () => {
    const { geometry } = pageStyle(72)
    const input = inputFromBytes('long.txt', encode('x\n'.repeat(geometry.rows * 3 + 1)))
    await expect(textToPng.plan!(input, testContext({ settings: { PDF_DPI: 72, TEXT_MAX_PAGES: 3 } }))).rejects.toThrow(
      /the limit is 3 \(TEXT_MAX_PAGES\)/,
    )
  })

  it('breaks a long text into pages, in order', async () => {
    const { geometry } = pageStyle(72)
    const lines = Array.from({ length: geometry.rows * 2 + 1 }, (_, i) => `line ${i + 1}`)
    const outputs = await convertAll(
      textToPng,
      inputFromBytes('long.txt', encode(lines.join('\n'))),
      testContext({ settings: { PDF_DPI: 72 } }),
    )
    expect(outputs.map((output) => [output.index, output.total])).toEqual([
      [0, 3],
      [1, 3],
      [2, 3],
    ])
    const last = await outputBytes(outputs[2]!)
    expect(await inkIn(last, { x0: 0, y0: 0.2, x1: 1, y1: 1 })).toBe(0)
  })

  it('reads UTF-16 and draws CJK it has no glyph for as visible replacements', async () => {
    const utf16 = new Uint8Array([
      0xff,
      0xfe,
      ...new Uint8Array(new Uint16Array([...'漢字 ok'].map((c) => c.charCodeAt(0))).buffer),
    ])
    const [page] = await convertAll(
      textToPng,
      inputFromBytes('cjk.txt', utf16),
      testContext({ settings: { PDF_DPI: 72 } }),
    )
    expect(await inkIn(await outputBytes(page!), { x0: 0.05, y0: 0.04, x1: 0.2, y1: 0.09 })).toBeGreaterThan(0.02)
  })

  it('makes one blank page of an empty file', async () => {
    const outputs = await convertAll(
      textToPng,
      inputFromBytes('empty.txt', new Uint8Array(0)),
      testContext({ settings: { PDF_DPI: 72 } }),
    )
    expect(outputs).toHaveLength(1)
    expect(await inkIn(await outputBytes(outputs[0]!), { x0: 0, y0: 0, x1: 1, y1: 1 })).toBe(0)
  })

  it('lays a 5,000-line file out on pages in order', async () => {
    const { geometry } = pageStyle(72)
    const text = Array.from({ length: 5000 }, (_, i) => `line ${i + 1}`).join('\n')
    const outputs = await convertAll(
      textToPng,
      inputFromBytes('long.txt', encode(text)),
      testContext({ settings: { PDF_DPI: 72 } }),
    )
    expect(outputs).toHaveLength(Math.ceil(5000 / geometry.rows))
    expect(outputs.map((output) => output.index)).toEqual(outputs.map((_, i) => i))
  }, 120_000)

  it('refuses a text over TEXT_MAX_PAGES', async () => {
    const text = 'x\n'.repeat(500)
    await expect(
      convertAll(textToPng, inputFromBytes('big.txt', encode(text)), testContext({ settings: { TEXT_MAX_PAGES: 2 } })),
    ).rejects.toMatchObject({
      retryable: false,
      message: 'the text needs more than 2 pages; the limit is 2 (TEXT_MAX_PAGES)',
    })
  })

  /** The case's bytes as a stream that hands out CHUNK_BYTES when read, never ahead, counting what it handed out. */
  function countedInput(name: string, bytes: Uint8Array) {
    const CHUNK_BYTES = TURN_CHARS / 4
    let handedOut = 0
    const input = {
      ...inputFromBytes(name, bytes),
      stream: () =>
        new ReadableStream<Uint8Array>(
          {
            pull(controller) {
              if (handedOut >= bytes.byteLength) return controller.close()
              controller.enqueue(bytes.slice(handedOut, handedOut + CHUNK_BYTES))
              handedOut = Math.min(bytes.byteLength, handedOut + CHUNK_BYTES)
            },
          },
          { highWaterMark: 0 },
        ),
      bytes: async () => {
        handedOut = bytes.byteLength
        return bytes
      },
    }
    return { input, handedOut: () => handedOut }
  }

  it.each(HOSTILE_CASES.filter((hostile) => hostile.name.endsWith('.txt') && hostile.expect !== 'refused'))(
    'reads and lays out $name a piece at a time, with a turn of the event loop after every TURN_CHARS bytes at most',
    async (hostile) => {
      // Five of them are 5 MB (TEXT_MAX_BYTES); before, each was decoded whole and laid out from one string, with
      // stretches of up to 260 ms between two turns in bench:hostile (GET / p95 8× idle).
      const { input, handedOut } = countedInput(hostile.name, await hostile.bytes())
      const readAtTurns = [0]
      const { result } = await turnsDuring(
        () =>
          convertAll(textToPng, input, testContext()).then(
            (outputs) => ({ outputs: outputs.length }),
            (error: Error) => error,
          ),
        () => readAtTurns.push(handedOut()),
      )
      readAtTurns.push(handedOut())
      const stretches = readAtTurns.slice(1).map((read, i) => read - readAtTurns[i]!)
      expect(Math.max(...stretches)).toBeLessThanOrEqual(TURN_CHARS)
      if (hostile.expect === 'done') expect(result).toEqual({ outputs: 1 })
      else expect(result).toMatchObject({ name: 'ConversionError', message: expect.stringMatching(hostile.reason!) })
    },
  )

  it('stops reading a text as soon as it needs more than TEXT_MAX_PAGES', async () => {
    // One line of 5 MB without a space (the hostile corpus's long-line.txt): 200 pages of 84 columns are ~1 MB.
    const { input, handedOut } = countedInput('long.txt', new Uint8Array(5 * 2 ** 20 - 1).fill(0x61))
    await expect(convertAll(textToPng, input, testContext())).rejects.toMatchObject({
      message: 'the text needs more than 200 pages; the limit is 200 (TEXT_MAX_PAGES)',
    })
    expect(handedOut()).toBeLessThan(2 * 2 ** 20)
  })

  it('refuses a text over TEXT_MAX_BYTES before reading it', async () => {
    await expect(
      convertAll(
        textToPng,
        inputFromBytes('big.txt', encode('abcdef')),
        testContext({ settings: { TEXT_MAX_BYTES: 3 } }),
      ),
    ).rejects.toMatchObject({ code: 'FILE_TOO_LARGE' })
  })
})

describe('text → PNG through the pipeline', () => {
  it('converts an uploaded text file into page PNGs', async () => {
    const user = await signUp()
    const txt = await uploaded(user, 'readme.txt', 'Edgefloor turns text into pages.\n')
    const res = await callJson('POST', `/files/${txt._id}/convert`, { token: user.token })
    expect(res.status).toBe(200)
    expect(res.body.map((file) => [file.name, file.parent_file])).toEqual([['readme (1 of 1)', txt._id]])
  })

  it('converts a text longer than a step (CONVERT_PAGES_PER_STEP, 10) in steps, each page named n of the total', async () => {
    const user = await signUp()
    const { geometry } = pageStyle(150)
    const lines = Array.from({ length: geometry.rows * 10 + 1 }, (_, i) => `line ${i + 1}`)
    const txt = await uploaded(user, 'long.txt', `${lines.join('\n')}\n`)
    const res = await callJson('POST', `/files/${txt._id}/convert`, { token: user.token })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    const names = res.body.map((file) => file.name).sort((a, b) => a.localeCompare(b, 'en', { numeric: true }))
    expect(names).toEqual(Array.from({ length: 11 }, (_, i) => `long (${i + 1} of 11)`))
    // The planning step split the pages into two steps, one of CONVERT_PAGES_PER_STEP pages and one of the rest.
    const [job] = (await callJson('GET', `/files/${txt._id}/jobs`, { token: user.token })).body
    const steps = job!.steps
      .map((step) => [step.part, step.status] as const)
      .sort((a, b) => (a[0]?.start ?? -1) - (b[0]?.start ?? -1))
    expect(steps).toEqual([
      [null, 'split'],
      [{ start: 0, end: 10 }, 'done'],
      [{ start: 10, end: 11 }, 'done'],
    ])
  })

  it('draws accented Latin, Greek and Cyrillic with their own glyphs, not replacement boxes', async () => {
    const scripts = ['àéîõüçñÀÉÎÕÜÇÑ', 'αβγδεζηθΑΒΓΔΕΖΗΘ', 'абвгдежзАБВГДЕЖЗ']
    for (const line of scripts) expect(drawable(line)).toBe(line) // the bundled font covers them
    const replacements = '\uFFFD'.repeat(16)
    const [page] = await convertAll(
      textToPng,
      inputFromBytes('scripts.txt', encode([...scripts, replacements].join('\n'))),
      testContext(),
    )
    const image = await decodeImage(await outputBytes(page!), TEST_IMAGE_LIMITS)
    const { style } = pageStyle(150)
    const advance = style.fontPx * ADVANCE_EM
    const step = lineHeightPx(style)
    /** Dark pixels of character cell `column` on text line `row`, as a bitmap (the rows of a line's height). */
    const cell = (source: RawImage, row: number, column: number): boolean[] => {
      const dark: boolean[] = []
      const top = Math.round(style.marginPx + row * step)
      const left = Math.round(style.marginPx + column * advance)
      for (let y = top; y < top + Math.round(step); y++) {
        for (let x = left; x < left + Math.round(advance); x++)
          dark.push(source.data[(y * source.width + x) * 4]! < 128)
      }
      return dark
    }
    scripts.forEach((line, row) => {
      ;[...line].forEach((char, column) => {
        const glyph = cell(image, row, column)
        const replacement = cell(image, scripts.length, column)
        const ink = glyph.filter(Boolean).length
        const differing = glyph.filter((dark, i) => dark !== replacement[i]).length
        expect({ char, inked: ink > 20 }).toEqual({ char, inked: true })
        expect({ char, unlikeReplacement: differing > glyph.length * 0.1 }).toEqual({ char, unlikeReplacement: true })
      })
    })
  })
})
