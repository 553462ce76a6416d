// Monospace page layout: lines wrapped at word boundaries to the page's columns (words longer than a line are
// broken), tabs expanded to stops, blank lines kept, wide (East Asian) characters two columns, then cut into
// pages. Pure: the renderer only draws what this decides. The work is linear in the text and bounded: invisible
// characters (controls, format characters) are dropped, at most MAX_MARKS_PER_BASE combining marks follow one
// character (the rest are dropped: a letter with 200,000 marks is one glyph cluster the shaper would take minutes
// over), a page may draw at most MAX_CHARS_PER_CELL characters per cell of its grid, and the layout stops as soon
// as the text needs more than the caller's maxPages. The text is written in pieces (`startLayout`), a character at
// a time through one pass that keeps only the current word and display line: a 5 MB line is never held whole, nor
// copied, and the caller gives the event loop a turn between pieces.

export interface PageGeometry {
  readonly columns: number
  readonly rows: number
  readonly tabSize: number
}

/**
 * Combining marks kept after one base character: Unicode's Stream-Safe Text Format (UAX #15, section 13) allows
 * at most 30 non-starters in a row; real text (Vietnamese, Hebrew points, IPA) uses a handful.
 */
export const MAX_MARKS_PER_BASE = 30

/**
 * Characters one page may draw, per cell of its grid. A page of combining-mark stacks takes the renderer seconds
 * (docs/benchmarks.md, "Engine constants"); a page of plain text is about one per cell. Three per cell leaves room
 * for pointed Hebrew or Vietnamese and refuses a page of mark towers.
 */
export const MAX_CHARS_PER_CELL = 3

/**
 * Characters a caller writes between two turns of the event loop: a few milliseconds of layout. One synchronous
 * call over a 5 MB text would hold every request of the isolate.
 */
export const TURN_CHARS = 64 * 1024

/** A page would draw more characters than MAX_CHARS_PER_CELL allows. */
export class TextTooDenseError extends Error {
  override readonly name = 'TextTooDenseError'
  constructor(
    readonly page: number,
    readonly maxChars: number,
  ) {
    super(`page ${page} of the text would draw more than ${maxChars} characters (combining marks included)`)
  }
}

/** The text needs more pages than the caller allows. */
export class TextTooLongError extends Error {
  override readonly name = 'TextTooLongError'
  constructor(readonly maxPages: number) {
    super(`the text needs more than ${maxPages} pages`)
  }
}

const MARK = /\p{M}/u
/**
 * Per BMP code point: 0 not yet known, 1 a combining mark, 2 not one.
 * A regular expression per character is slow on CJK text.
 */
const markCache = new Uint8Array(0x10000)

/** Whether a code point is a combining mark (general category M), the common block without a regular expression. */
function isMark(codePoint: number): boolean {
  if (codePoint < 0x0300) return false
  if (codePoint <= 0x036f) return true
  if (codePoint > 0xffff) return MARK.test(String.fromCodePoint(codePoint))
  if (markCache[codePoint] === 0) markCache[codePoint] = MARK.test(String.fromCharCode(codePoint)) ? 1 : 2
  return markCache[codePoint] === 1
}

/** Columns a character takes: 2 for East Asian wide and fullwidth ranges, 0 for combining marks. */
export function charColumns(codePoint: number): number {
  if (codePoint < 0x0300) return 1
  if (isMark(codePoint)) return 0
  const wide =
    (codePoint >= 0x1100 && codePoint <= 0x115f) ||
    (codePoint >= 0x2e80 && codePoint <= 0xa4cf) ||
    (codePoint >= 0xac00 && codePoint <= 0xd7a3) ||
    (codePoint >= 0xf900 && codePoint <= 0xfaff) ||
    (codePoint >= 0xfe30 && codePoint <= 0xfe4f) ||
    (codePoint >= 0xff00 && codePoint <= 0xff60) ||
    (codePoint >= 0xffe0 && codePoint <= 0xffe6) ||
    (codePoint >= 0x1f300 && codePoint <= 0x1faff) ||
    (codePoint >= 0x20000 && codePoint <= 0x3fffd)
  return wide ? 2 : 1
}

/**
 * Control characters (but tab) and the format characters (category Cf) of the BMP and the tag block: zero-width
 * space and joiners, direction controls, soft hyphen, BOM, tags. They draw nothing.
 */
function isInvisible(codePoint: number): boolean {
  if (codePoint < 0x20) return codePoint !== 0x09 && codePoint !== 0x0a
  if (codePoint < 0x7f) return false
  if (codePoint < 0x0600) return codePoint === 0x7f || codePoint === 0xad
  if (codePoint > 0xffff) return codePoint === 0xe0001 || (codePoint >= 0xe0020 && codePoint <= 0xe007f)
  return (
    (codePoint >= 0x0600 && codePoint <= 0x0605) ||
    codePoint === 0x061c ||
    codePoint === 0x06dd ||
    codePoint === 0x070f ||
    codePoint === 0x0890 ||
    codePoint === 0x0891 ||
    codePoint === 0x08e2 ||
    codePoint === 0x180e ||
    (codePoint >= 0x200b && codePoint <= 0x200f) ||
    (codePoint >= 0x202a && codePoint <= 0x202e) ||
    (codePoint >= 0x2060 && codePoint <= 0x2064) ||
    (codePoint >= 0x2066 && codePoint <= 0x206f) ||
    codePoint === 0xfeff ||
    (codePoint >= 0xfff9 && codePoint <= 0xfffb)
  )
}

/** White space as regular expressions' \s and String.prototype.trim see it (one UTF-16 unit). */
function isSpace(unit: number): boolean {
  if (unit <= 0x20) return unit === 0x20 || (unit >= 0x09 && unit <= 0x0d)
  if (unit < 0xa0) return false
  return (
    unit === 0xa0 ||
    unit === 0x1680 ||
    (unit >= 0x2000 && unit <= 0x200a) ||
    unit === 0x2028 ||
    unit === 0x2029 ||
    unit === 0x202f ||
    unit === 0x205f ||
    unit === 0x3000 ||
    unit === 0xfeff
  )
}

/** UTF-16 units appended one or two at a time, read back as a string; reused from line to line. */
class Units {
  private buffer = new Uint16Array(256)
  length = 0

  push(codePoint: number): void {
    if (this.length + 2 > this.buffer.length) {
      const grown = new Uint16Array(this.buffer.length * 2)
      grown.set(this.buffer)
      this.buffer = grown
    }
    if (codePoint > 0xffff) {
      this.buffer[this.length++] = 0xd800 + ((codePoint - 0x10000) >> 10)
      this.buffer[this.length++] = 0xdc00 + ((codePoint - 0x10000) & 0x3ff)
    } else this.buffer[this.length++] = codePoint
  }

  append(other: Units): void {
    for (let i = 0; i < other.length; i++) this.push(other.buffer[i]!)
  }

  /** The code points, a pair read as one (a lone surrogate as itself). */
  *codePoints(): Generator<number> {
    for (let i = 0; i < this.length; i++) {
      const unit = this.buffer[i]!
      const next = this.buffer[i + 1] ?? 0
      if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < this.length && next >= 0xdc00 && next <= 0xdfff) {
        yield 0x10000 + ((unit - 0xd800) << 10) + (next - 0xdc00)
        i++
      } else yield unit
    }
  }

  /** The units as a string, white space at the end left out with `trimmed`. */
  text(trimmed = false): string {
    let end = this.length
    if (trimmed) while (end > 0 && isSpace(this.buffer[end - 1]!)) end--
    let out = ''
    for (let start = 0; start < end; start += 8192)
      out += String.fromCharCode(...this.buffer.subarray(start, Math.min(end, start + 8192)))
    return out
  }

  clear(): void {
    this.length = 0
  }
}

/**
 * One source line's characters → display lines no wider than `columns`, handed to `emit` as they are made. A token
 * (a run of white space or of other characters) fits on the current line; or white space that does not fit ends
 * it; or a word starts the next one; or a word wider than a line is broken into line-sized pieces. Only the
 * current token (while it may still fit a line) and the current display line are kept.
 */
class LineWrapper {
  private readonly line = new Units()
  private lineWidth = 0
  private hasInk = false
  private readonly token = new Units()
  private tokenWidth = 0
  private tokenKind: 'none' | 'space' | 'word' | 'breaking' = 'none'
  private emitted = 0

  constructor(
    private readonly columns: number,
    private readonly emit: (display: string) => void,
  ) {}

  add(codePoint: number, width: number): void {
    const space = codePoint <= 0xffff && isSpace(codePoint)
    if (this.tokenKind !== 'none' && (this.tokenKind === 'space') !== space) this.endToken()
    if (space) {
      this.tokenKind = 'space'
      this.tokenWidth += width
      // White space wider than a line can never be kept: only its width matters then.
      if (this.tokenWidth <= this.columns) this.token.push(codePoint)
    } else if (this.tokenKind === 'breaking') this.addPiece(codePoint, width)
    else {
      this.tokenKind = 'word'
      this.token.push(codePoint)
      this.tokenWidth += width
      if (this.tokenWidth > this.columns) this.startBreaking()
    }
  }

  /** The end of the source line: its last display line (an empty line stays one blank display line). */
  endLine(): void {
    this.endToken()
    if (this.hasInk || this.emitted === 0) this.emitLine(true)
    this.line.clear()
    this.lineWidth = 0
    this.hasInk = false
    this.emitted = 0
  }

  private emitLine(trimmed: boolean): void {
    this.emitted++
    this.emit(this.line.text(trimmed))
    this.line.clear()
  }

  /** A word wider than a line: the line so far ends, and the word is cut into pieces as wide as a line. */
  private startBreaking(): void {
    if (this.hasInk) this.emitLine(true)
    this.line.clear()
    this.lineWidth = 0
    this.tokenKind = 'breaking'
    for (const codePoint of this.token.codePoints()) this.addPiece(codePoint, charColumns(codePoint))
    this.token.clear()
  }

  private addPiece(codePoint: number, width: number): void {
    if (this.lineWidth + width > this.columns && this.line.length > 0) {
      this.emitLine(false)
      this.lineWidth = 0
    }
    this.line.push(codePoint)
    this.lineWidth += width
    this.hasInk = true
  }

  private endToken(): void {
    const fits = this.lineWidth + this.tokenWidth <= this.columns
    if (this.tokenKind === 'space' && fits) {
      this.line.append(this.token)
      this.lineWidth += this.tokenWidth
    } else if (this.tokenKind === 'space') {
      this.emitLine(true)
      this.lineWidth = 0
      this.hasInk = false
    } else if (this.tokenKind === 'word') {
      if (!fits) {
        if (this.hasInk) this.emitLine(true)
        this.line.clear()
        this.lineWidth = 0
      }
      this.line.append(this.token)
      this.lineWidth += this.tokenWidth
      this.hasInk = true
    }
    this.tokenKind = 'none'
    this.token.clear()
    this.tokenWidth = 0
  }
}

/** Whether each next code point of a line is kept: at most MAX_MARKS_PER_BASE combining marks after a character. */
function markLimiter(): (codePoint: number) => boolean {
  let marks = 0
  return (codePoint) => {
    if (!isMark(codePoint)) {
      marks = 0
      return true
    }
    return ++marks <= MAX_MARKS_PER_BASE
  }
}

/** The code points of a string, a pair read as one (a lone surrogate as itself). */
function* codePointsOf(text: string): Generator<number> {
  for (let i = 0; i < text.length; i++) {
    const codePoint = text.codePointAt(i)!
    if (codePoint > 0xffff) i++
    yield codePoint
  }
}

/** The line with at most MAX_MARKS_PER_BASE combining marks after each character. */
export function limitMarks(line: string): string {
  const isKept = markLimiter()
  let out = ''
  for (const codePoint of codePointsOf(line)) if (isKept(codePoint)) out += String.fromCodePoint(codePoint)
  return out
}

/** One source line → display lines no wider than `columns`. */
export function wrapLine(line: string, columns: number): string[] {
  const lines: string[] = []
  const wrapper = new LineWrapper(columns, (display) => lines.push(display))
  for (const codePoint of codePointsOf(line)) wrapper.add(codePoint, charColumns(codePoint))
  wrapper.endLine()
  return lines
}

/** A layout being written: the text in pieces of any size (a piece may end inside a line, or between "\r" and "\n"). */
export interface Layout {
  write(piece: string): void
  /** The pages of display lines (an empty text is one page with one empty line). */
  end(): string[][]
}

/**
 * A layout of a text written in pieces. Throws TextTooLongError from `write` as soon as the lines fill more than
 * maxPages pages, and TextTooDenseError as soon as a page would draw too many characters.
 */
export function startLayout(geometry: PageGeometry, maxPages = Number.POSITIVE_INFINITY): Layout {
  const maxLines = maxPages * geometry.rows
  const maxPageChars = geometry.rows * geometry.columns * MAX_CHARS_PER_CELL
  const lines: string[] = []
  let pageChars = 0
  const wrapper = new LineWrapper(geometry.columns, (display) => {
    if (lines.length >= maxLines) throw new TextTooLongError(maxPages)
    if (lines.length % geometry.rows === 0) pageChars = 0
    pageChars += display.length
    if (pageChars > maxPageChars)
      throw new TextTooDenseError(Math.floor(lines.length / geometry.rows) + 1, maxPageChars)
    lines.push(display)
  })
  // The source line being read: its units so far, and how many it may use. A line longer than the rest of the
  // allowed pages may draw is cut (what follows could never be drawn), so that the work stays bounded by
  // TEXT_MAX_PAGES, not by TEXT_MAX_BYTES.
  let lineUnits = 0
  let room = 0
  let isKept = markLimiter()
  let column = 0
  let highSurrogate = -1
  let afterCarriageReturn = false
  let sawLineEnd = false

  const startLine = () => {
    lineUnits = 0
    room = (maxLines - lines.length) * geometry.columns * MAX_CHARS_PER_CELL + 1
    isKept = markLimiter()
    column = 0
  }
  const addCodePoint = (codePoint: number) => {
    if (isInvisible(codePoint) || !isKept(codePoint)) return
    if (codePoint === 0x09) {
      const spaces = geometry.tabSize - (column % geometry.tabSize)
      for (let i = 0; i < spaces; i++) wrapper.add(0x20, 1)
      column += spaces
      return
    }
    const width = charColumns(codePoint)
    column += width
    wrapper.add(codePoint, width)
  }
  const endLine = () => {
    if (highSurrogate >= 0) addCodePoint(highSurrogate)
    highSurrogate = -1
    wrapper.endLine()
    sawLineEnd = true
    startLine()
  }
  startLine()

  return {
    write(piece) {
      for (let i = 0; i < piece.length; i++) {
        const unit = piece.charCodeAt(i)
        if (afterCarriageReturn) {
          afterCarriageReturn = false
          if (unit === 0x0a) continue
        }
        if (unit === 0x0a || unit === 0x0d) {
          afterCarriageReturn = unit === 0x0d
          endLine()
          continue
        }
        if (++lineUnits > room) continue
        if (highSurrogate >= 0) {
          const high = highSurrogate
          highSurrogate = -1
          if (unit >= 0xdc00 && unit <= 0xdfff) {
            addCodePoint(0x10000 + ((high - 0xd800) << 10) + (unit - 0xdc00))
            continue
          }
          addCodePoint(high)
        }
        if (unit >= 0xd800 && unit <= 0xdbff) highSurrogate = unit
        else addCodePoint(unit)
      }
    },
    end() {
      // A final line break ends the last line; it does not start an empty one.
      if (lineUnits > 0 || !sawLineEnd) endLine()
      const pages: string[][] = []
      for (let start = 0; start < lines.length; start += geometry.rows)
        pages.push(lines.slice(start, start + geometry.rows))
      return pages
    },
  }
}

/**
 * The text as pages of display lines (an empty text is one page with one empty line). Throws TextTooLongError
 * as soon as the lines fill more than maxPages pages, before laying out the rest.
 */
export function layoutPages(text: string, geometry: PageGeometry, maxPages = Number.POSITIVE_INFINITY): string[][] {
  const layout = startLayout(geometry, maxPages)
  layout.write(text)
  return layout.end()
}
