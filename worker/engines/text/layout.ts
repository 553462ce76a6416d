// Monospace page layout: lines wrapped at word boundaries to the page's columns (words longer than a line are
// broken), tabs expanded to stops, blank lines kept, wide (East Asian) characters two columns, then cut into
// pages. Pure functions: the renderer only draws what this decides. The work is linear in the text and bounded:
// invisible characters (controls, format characters) are dropped, at most MAX_MARKS_PER_BASE combining marks follow
// one character (the rest are dropped: a letter with 200,000 marks is one glyph cluster the shaper would take
// minutes over), a page may draw at most MAX_CHARS_PER_CELL characters per cell of its grid, and the layout stops
// as soon as the text needs more than the caller's maxPages or a page is too dense: lines are wrapped one at a
// time and checked as they come, so the memory held is the text, its cleaned copy and the lines kept so far.

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
 * Characters one page may draw, per cell of its grid: a page of combining-mark stacks takes the renderer seconds
 * (83,000 characters: ~3 s), a page of plain text ~5,000. Three per cell leaves room for pointed Hebrew or
 * Vietnamese and refuses a page of mark towers.
 */
export const MAX_CHARS_PER_CELL = 3

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
 * Control characters (but tab) and the format characters (category Cf) of the BMP and the tag block: zero-width
 * space and joiners, direction controls, soft hyphen, BOM, tags. They draw nothing. (Tested by ranges: a global
 * regular expression over a megabyte line of them keeps every match in memory.)
 */
const INVISIBLE_RANGES: ReadonlyArray<readonly [number, number]> = [
  [0x0000, 0x0008], [0x000b, 0x001f], [0x007f, 0x007f], [0x00ad, 0x00ad], [0x0600, 0x0605], [0x061c, 0x061c], [0x06dd, 0x06dd],
  [0x070f, 0x070f], [0x0890, 0x0891], [0x08e2, 0x08e2], [0x180e, 0x180e], [0x200b, 0x200f], [0x202a, 0x202e], [0x2060, 0x2064],
  [0x2066, 0x206f], [0xfeff, 0xfeff], [0xfff9, 0xfffb], [0xe0001, 0xe0001], [0xe0020, 0xe007f],
]
const isInvisible = (codePoint: number) => INVISIBLE_RANGES.some(([low, high]) => codePoint >= low && codePoint <= high)

/** Whether a code point is a combining mark (general category M), the common block without a regular expression. */
const isMark = (codePoint: number) => codePoint >= 0x0300 && (codePoint <= 0x036f || (codePoint > 0x036f && MARK.test(String.fromCodePoint(codePoint))))

/** Columns a character takes: 2 for East Asian wide and fullwidth ranges, 0 for combining marks. */
export function charColumns(codePoint: number): number {
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

/** Display columns of a text, in one pass over its UTF-16 units (ASCII and Latin-1 without a lookup). */
function widthOf(text: string): number {
  let width = 0
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i)
    if (unit < 0x300) {
      width++
      continue
    }
    const codePoint = text.codePointAt(i)!
    if (codePoint > 0xffff) i++
    width += charColumns(codePoint)
  }
  return width
}

function expandTabs(line: string, tabSize: number): string {
  if (!line.includes('\t')) return line
  let out = ''
  let column = 0
  for (const char of line) {
    if (char === '\t') {
      const spaces = tabSize - (column % tabSize)
      out += ' '.repeat(spaces)
      column += spaces
    } else {
      out += char
      column += charColumns(char.codePointAt(0)!)
    }
  }
  return out
}

/** Breaks a word that is wider than the line into line-sized pieces (slices, not one string built a character at a time). */
function breakWord(word: string, columns: number): string[] {
  const pieces: string[] = []
  let start = 0
  let width = 0
  for (let i = 0; i < word.length; ) {
    const codePoint = word.codePointAt(i)!
    const w = codePoint < 0x300 ? 1 : charColumns(codePoint)
    if (width + w > columns && i > start) {
      pieces.push(word.slice(start, i))
      start = i
      width = 0
    }
    width += w
    i += codePoint > 0xffff ? 2 : 1
  }
  if (start < word.length) pieces.push(word.slice(start))
  return pieces
}

/** Kept runs of a line joined in groups, so a line of a million alternating runs never holds a million strings. */
class RunJoiner {
  private readonly groups: string[] = []
  private runs: string[] = []
  push(run: string): void {
    this.runs.push(run)
    if (this.runs.length === 4096) {
      this.groups.push(this.runs.join(''))
      this.runs = []
    }
  }
  join(): string {
    return this.groups.join('') + this.runs.join('')
  }
}

/**
 * The line without invisible characters and with at most MAX_MARKS_PER_BASE combining marks after each
 * character, in one pass that slices the kept runs: the output is never longer than the line.
 */
export function cleanLine(line: string): string {
  const kept = new RunJoiner()
  let start = 0
  let marks = 0
  for (let i = 0; i < line.length; ) {
    const unit = line.charCodeAt(i)
    if (unit >= 0x20 && unit < 0x7f) {
      marks = 0
      i++
      continue
    }
    const codePoint = line.codePointAt(i)!
    const size = codePoint > 0xffff ? 2 : 1
    // An invisible character is dropped without ending a run of marks (as if it had never been there).
    let isDropped = isInvisible(codePoint)
    if (!isDropped && isMark(codePoint)) isDropped = ++marks > MAX_MARKS_PER_BASE
    else if (!isDropped) marks = 0
    if (isDropped) {
      if (start < i) kept.push(line.slice(start, i))
      start = i + size
    }
    i += size
  }
  if (start === 0) return line
  kept.push(line.slice(start))
  return kept.join()
}

/** One source line → display lines no wider than `columns`. */
export function wrapLine(line: string, columns: number): string[] {
  return [...wrapLines(line, columns)]
}

/**
 * One source line → display lines no wider than `columns`, one at a time (each token's width measured once:
 * linear), so the caller can stop as soon as a limit is reached instead of wrapping a whole megabyte line first.
 */
function* wrapLines(line: string, columns: number): Generator<string> {
  if (widthOf(line) <= columns) {
    yield line.trimEnd()
    return
  }
  let made = 0
  let current = ''
  let currentWidth = 0
  const tokens = /\s+|\S+/gy
  for (let match = tokens.exec(line); match; match = tokens.exec(line)) {
    const token = match[0]
    const isSpace = /^\s/.test(token)
    const tokenWidth = widthOf(token)
    if (currentWidth + tokenWidth <= columns) {
      current += token
      currentWidth += tokenWidth
      continue
    }
    if (isSpace) {
      made++
      yield current.trimEnd()
      current = ''
      currentWidth = 0
      continue
    }
    if (current.trim()) {
      made++
      yield current.trimEnd()
    }
    // A word wider than the line is broken a line at a time: a 5 MB word is never split whole.
    let rest = token
    let restWidth = tokenWidth
    while (restWidth > columns) {
      const [piece] = breakWord(rest.slice(0, columns * (MAX_MARKS_PER_BASE + 1) * 2), columns)
      made++
      yield piece!
      rest = rest.slice(piece!.length)
      restWidth -= widthOf(piece!)
    }
    current = rest
    currentWidth = restWidth
  }
  if (current.trim() || made === 0) yield current.trimEnd()
}

/**
 * The text as pages of display lines (an empty text is one page with one empty line). Throws TextTooLongError
 * as soon as the lines fill more than maxPages pages, before laying out the rest.
 */
export function layoutPages(text: string, geometry: PageGeometry, maxPages = Number.POSITIVE_INFINITY): string[][] {
  const maxLines = maxPages * geometry.rows
  const maxChars = geometry.rows * geometry.columns * MAX_CHARS_PER_CELL
  const lines: string[] = []
  let pageChars = 0
  const source = text.replace(/\r\n?/g, '\n').replace(/\n$/, '')
  for (let start = 0; start <= source.length; ) {
    const end = source.indexOf('\n', start)
    const line = source.slice(start, end < 0 ? source.length : end)
    start = end < 0 ? source.length + 1 : end + 1
    // A line longer than the rest of the allowed pages may draw is cut first (what follows could never be drawn),
    // so that the work stays bounded by TEXT_MAX_PAGES, not by TEXT_MAX_BYTES.
    const room = (maxLines - lines.length) * geometry.columns * MAX_CHARS_PER_CELL + 1
    const cleaned = cleanLine(line.slice(0, Math.min(line.length, room)))
    for (const display of wrapLines(expandTabs(cleaned, geometry.tabSize), geometry.columns)) {
      if (lines.length >= maxLines) throw new TextTooLongError(maxPages)
      if (lines.length % geometry.rows === 0) pageChars = 0
      pageChars += display.length
      if (pageChars > maxChars) throw new TextTooDenseError(Math.floor(lines.length / geometry.rows) + 1, maxChars)
      lines.push(display)
    }
  }
  const pages: string[][] = []
  for (let start = 0; start < lines.length; start += geometry.rows) pages.push(lines.slice(start, start + geometry.rows))
  return pages
}

