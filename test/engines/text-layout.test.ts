import { describe, expect, it } from 'vitest'
import { decodeText } from '../../worker/engines/text/decode'
import { charColumns, layoutPages, limitMarks, MAX_MARKS_PER_BASE, wrapLine } from '../../worker/engines/text/layout'
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
    expect(layoutPages('a\tb\n\nab\tc\nx\r\ny\n', geometry)).toEqual([['a   b', '', 'ab  c'], ['x', 'y']])
  })

  it('makes one blank page of an empty text', () => {
    expect(layoutPages('', geometry)).toEqual([['']])
  })

  it('counts wide characters as two columns', () => {
    expect([charColumns('a'.codePointAt(0)!), charColumns('漢'.codePointAt(0)!), charColumns(0x0301)]).toEqual([1, 2, 0])
  })

  it.each([
    ['UTF-8 with BOM', new Uint8Array([0xef, 0xbb, 0xbf, 0x68, 0x69]), 'hi'],
    ['UTF-16 LE', new Uint8Array([0xff, 0xfe, 0x68, 0x00, 0xe9, 0x00]), 'hé'],
    ['UTF-16 BE', new Uint8Array([0xfe, 0xff, 0x00, 0x68, 0x00, 0xe9]), 'hé'],
    ['invalid UTF-8', new Uint8Array([0x61, 0xff, 0x62]), 'a\uFFFDb'],
  ])('decodes %s', (_case, bytes, text) => {
    expect(decodeText(bytes)).toBe(text)
  })

  it('replaces characters the font cannot draw, visibly', () => {
    expect(drawable('Ωmega Жук café 漢字 🙂')).toBe('Ωmega Жук café \uFFFD\uFFFD \uFFFD')
  })
})
