// The magic-number helpers both the files module and the engines read headers with (worker/magic.ts).
import { describe, expect, it } from 'vitest'
import { fourCharacterCode, hasAscii } from '../worker/magic'

const bytes = (text: string) => Uint8Array.from(text, (char) => char.charCodeAt(0))

describe('fourCharacterCode', () => {
  // ISO/IEC 14496-12 §4.2: a box is a 32-bit size then a four-character type; an ftyp's major brand follows it.
  // PNG (W3C, §5.3): a chunk is a 4-byte length then a 4-byte chunk type.
  it.each([
    ['\0\0\0\x18ftypheic', 4, 'ftyp'],
    ['\0\0\0\x18ftypheic', 8, 'heic'],
    ['\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR', 12, 'IHDR'],
    ['\0\0\0\x18ft', 4, 'ft'],
    ['ftyp', 4, ''],
  ])('reads %j at %i as %j', (text, offset, code) => {
    expect(fourCharacterCode(bytes(text), offset)).toBe(code)
  })

  it('agrees with hasAscii where the bytes hold the code', () => {
    const png = bytes('\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR')
    expect(hasAscii(png, 12, fourCharacterCode(png, 12))).toBe(true)
    expect(hasAscii(png, 13, 'IHDR')).toBe(false)
  })
})
