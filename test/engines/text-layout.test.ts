import { describe, expect, it } from 'vitest'
import { decodeText, decodeTextPieces } from '../../worker/engines/text/decode'
import {
  charColumns,
  layoutPages,
  limitMarks,
  MAX_MARKS_PER_BASE,
  startLayout,
  wrapLine,
} from '../../worker/engines/text/layout'
import { drawable } from '../../worker/engines/text/render'

const geometry = { columns: 10, rows: 3, tabSize: 4 }

describe('text layout', () => {
  it.each([
    ['short', ['short']],
    ['two words here', ['two words', 'here']],
    ['abcdefghijklmnopqrstuvwxyz', ['abcdefghij', 'klmnopqrst', 'uvwxyz']],
    ['a verylongwordindeed b', ['a', 'verylongwo', 'rdindeed b']],
    ['', ['']],
    ['trailing   ', ['trailing']],
    ['漢字漢字漢字漢字', ['漢字漢字漢', '字漢字']],
  ])('wraps %j', (line, expected) => {
    expect(wrapLine(line, 10)).toEqual(expected)
  })

  it('drops invisible characters and the marks past MAX_MARKS_PER_BASE', () => {
    const marks = (count: number) => '\u0301'.repeat(count)
    expect(limitMarks(`a${marks(200_000)}b`)).toBe(`a${marks(MAX_MARKS_PER_BASE)}b`)
    expect(layoutPages(`a\u200bb\u00adc\u{e0041}d`, geometry)).toEqual([['abcd']])
    expect(layoutPages('x\u200b'.repeat(9), geometry)).toEqual([['xxxxxxxxx']])
  })

  it('breaks a word wider than many lines a line at a time', () => {
    expect(layoutPages('ab'.repeat(15), geometry)).toEqual([['ababababab', 'ababababab', 'ababababab']])
  })

  it('expands tabs to stops, keeps blank lines, and paginates', () => {
    expect(layoutPages('a\tb\n\nab\tc\nx\r\ny\n', geometry)).toEqual([
      ['a   b', '', 'ab  c'],
      ['x', 'y'],
    ])
  })

  it('makes one blank page of an empty text', () => {
    expect(layoutPages('', geometry)).toEqual([['']])
  })

  it('counts wide characters as two columns', () => {
    expect([charColumns('a'.codePointAt(0)!), charColumns('漢'.codePointAt(0)!), charColumns(0x0301)]).toEqual([
      1, 2, 0,
    ])
  })

  it.each([
    ['UTF-8 with BOM', new Uint8Array([0xef, 0xbb, 0xbf, 0x68, 0x69]), 'hi'],
    ['UTF-16 LE', new Uint8Array([0xff, 0xfe, 0x68, 0x00, 0xe9, 0x00]), 'hé'],
    ['UTF-16 BE', new Uint8Array([0xfe, 0xff, 0x00, 0x68, 0x00, 0xe9]), 'hé'],
    ['invalid UTF-8', new Uint8Array([0x61, 0xff, 0x62]), 'a\uFFFDb'],
  ])('decodes %s', (_case, bytes, text) => {
    expect(decodeText(bytes)).toBe(text)
  })

  const utf16 = (text: string, bigEndian: boolean) => {
    const units = [...text].flatMap((char) => [...char].map((_, i) => char.charCodeAt(i)))
    return new Uint8Array([
      ...(bigEndian ? [0xfe, 0xff] : [0xff, 0xfe]),
      ...units.flatMap((unit) => (bigEndian ? [unit >> 8, unit & 0xff] : [unit & 0xff, unit >> 8])),
    ])
  }
  const mixed = 'héllo 🙂 漢字\r\nmark\u0301 end\n'.repeat(5)
  it.each([
    ['UTF-8', new TextEncoder().encode(mixed)],
    ['UTF-8 with BOM', new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode(mixed)])],
    ['UTF-16 LE', utf16(mixed, false)],
    ['UTF-16 BE', utf16(mixed, true)],
    ['invalid UTF-8', new Uint8Array([0x61, 0xff, 0xf0, 0x9f, 0x99, 0x62])],
  ])('decodes %s a piece at a time, whatever the chunks, as in one call', async (_case, bytes) => {
    for (const chunkBytes of [1, 3, bytes.length]) {
      const chunks = Array.from({ length: Math.ceil(bytes.length / chunkBytes) }, (_, i) =>
        bytes.slice(i * chunkBytes, (i + 1) * chunkBytes),
      )
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          for (const chunk of chunks) controller.enqueue(chunk)
          controller.close()
        },
      })
      const pieces: string[] = []
      let read = 0
      for await (const piece of decodeTextPieces(stream, 5)) {
        expect(piece.bytes).toBeLessThanOrEqual(5)
        read += piece.bytes
        pieces.push(piece.text)
      }
      expect(read).toBe(bytes.length - (bytes[0] === 0xff || bytes[0] === 0xfe ? 2 : 0))
      expect(pieces.join('')).toBe(decodeText(bytes))
      // No piece ends inside a surrogate pair.
      expect(pieces.filter((piece) => /[\ud800-\udbff]$|^[\udc00-\udfff]/.test(piece))).toEqual([])
      expect(Math.max(...pieces.map((piece) => piece.length))).toBeLessThanOrEqual(5)
    }
  })

  it('lays a text written in pieces out as in one piece, lines and \\r\\n split anywhere', () => {
    const text = 'a\tb\r\n\r\nab\tc x\u200by\u0301\rlast word here 漢字🙂 \r\n'
    const whole = layoutPages(text, geometry)
    for (let size = 1; size <= 4; size++) {
      const layout = startLayout(geometry)
      for (let start = 0; start < text.length; start += size) layout.write(text.slice(start, start + size))
      expect(layout.end()).toEqual(whole)
    }
  })

  it('replaces characters the font cannot draw, visibly', () => {
    expect(drawable('Ωmega Жук café 漢字 🙂')).toBe('Ωmega Жук café \uFFFD\uFFFD \uFFFD')
  })
})
