// Monospace page layout: lines wrapped at word boundaries to the page's columns (words longer than a line are
// broken), tabs expanded to stops, blank lines kept, wide (East Asian) characters two columns, then cut into
// pages. Pure functions: the renderer only draws what this decides. The work is linear in the text and bounded:
// invisible characters (controls, format characters) are dropped, at most MAX_MARKS_PER_BASE combining marks follow
// one character (the rest are dropped: a letter with 200,000 marks is one glyph cluster the shaper would take
// minutes over), a page may draw at most MAX_CHARS_PER_CELL characters per cell of its grid, and the layout stops
// as soon as the text needs more than the caller's maxPages. `layoutSlices` does the same work in slices of at
// most TURN_CHARS characters (one 5 MB line included), so a caller can give the event loop a turn between them.

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

/**
 * Characters of layout work between two pauses of `layoutSlices` (a few milliseconds on an idle core): the 5 MB
 * worst cases took 0.2–1.6 s in one synchronous call before, holding every request of the isolate.
 */
export const TURN_CHARS = 64 * 1024

/** Work done since the last pause, shared by the steps of one layout. */
interface Slicer {
  chars: number
}

const MARK = /\p{M}/u
/**
 * Control characters (but tab) and the format characters (category Cf) of the BMP and the tag block: zero-width
 * space and joiners, direction controls, soft hyphen, BOM, tags. They draw nothing. (Without the u flag: scanning
 * megabytes with \p{Cf} is several times slower.)
 */
const INVISIBLE = /[\u0000-\u0008\u000b-\u001f\u007f\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb]|\udb40[\udc01\udc20-\udc7f]/g

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

/**
 * Display columns of a text, in one pass over its UTF-16 units (ASCII and Latin-1 without a lookup), counted only
 * until they pass `upTo`: a wider text answers some width above it, after at most ~`upTo` units.
 */
function widthOf(text: string, upTo = Number.POSITIVE_INFINITY): number {
  let width = 0
  for (let i = 0; i < text.length && width <= upTo; i++) {
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

function* expandTabs(line: string, tabSize: number, slicer: Slicer): Generator<void, string> {
  if (!line.includes('\t')) return line
  let out = ''
  let column = 0
  for (const char of line) {
    if (++slicer.chars >= TURN_CHARS) {
      slicer.chars = 0
      yield
    }
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
function* breakWord(word: string, columns: number, slicer: Slicer): Generator<void, string[]> {
  const pieces: string[] = []
  let start = 0
  let width = 0
  for (let i = 0; i < word.length; ) {
    if (++slicer.chars >= TURN_CHARS) {
      slicer.chars = 0
      yield
    }
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

/** The line with at most MAX_MARKS_PER_BASE combining marks after each character (one pass, kept runs sliced). */
export function limitMarks(line: string): string {
  return drain(limitMarksSliced(line, { chars: 0 }))
}

function* limitMarksSliced(line: string, slicer: Slicer): Generator<void, string> {
  if (!MARK.test(line)) return line
  const kept: string[] = []
  let start = 0
  let marks = 0
  for (let i = 0; i < line.length; ) {
    if (++slicer.chars >= TURN_CHARS) {
      slicer.chars = 0
      yield
    }
    const codePoint = line.codePointAt(i)!
    const size = codePoint > 0xffff ? 2 : 1
    if (!isMark(codePoint)) marks = 0
    else if (++marks > MAX_MARKS_PER_BASE) {
      if (start < i) kept.push(line.slice(start, i))
      start = i + size
    }
    i += size
  }
  kept.push(line.slice(start))
  return kept.join('')
}

/**
 * One source line → display lines no wider than `columns` (each token's width measured once: linear), stopping
 * once more than maxLines are made.
 */
export function wrapLine(line: string, columns: number, maxLines = Number.POSITIVE_INFINITY): string[] {
  return drain(wrapLineSliced(line, columns, maxLines, { chars: 0 }))
}

function* wrapLineSliced(line: string, columns: number, maxLines: number, slicer: Slicer): Generator<void, string[]> {
  if (widthOf(line, columns) <= columns) return [line.trimEnd()]
  const lines: string[] = []
  let current = ''
  let currentWidth = 0
  const tokens = /\s+|\S+/gy
  for (let match = tokens.exec(line); match; match = tokens.exec(line)) {
    if (lines.length > maxLines) return lines
    const token = match[0]
    // Counted by the token's length: the width below stops counting past the line, breakWord counts its own.
    slicer.chars += Math.min(token.length, columns)
    if (slicer.chars >= TURN_CHARS) {
      slicer.chars = 0
      yield
    }
    const isSpace = /^\s/.test(token)
    const tokenWidth = widthOf(token, columns)
    if (currentWidth + tokenWidth <= columns) {
      current += token
      currentWidth += tokenWidth
      continue
    }
    if (isSpace) {
      lines.push(current.trimEnd())
      current = ''
      currentWidth = 0
      continue
    }
    if (current.trim()) lines.push(current.trimEnd())
    const pieces = tokenWidth > columns ? yield* breakWord(token, columns, slicer) : [token]
    lines.push(...pieces.slice(0, -1))
    current = pieces.at(-1)!
    currentWidth = widthOf(current)
  }
  if (current.trim() || lines.length === 0) lines.push(current.trimEnd())
  return lines
}

/**
 * The text as pages of display lines (an empty text is one page with one empty line). Throws TextTooLongError
 * as soon as the lines fill more than maxPages pages, before laying out the rest.
 */
export function layoutPages(text: string, geometry: PageGeometry, maxPages = Number.POSITIVE_INFINITY): string[][] {
  return drain(layoutSlices(text, geometry, maxPages))
}

/** The whole of a generator that pauses (yields nothing) between slices of its work: its return value. */
function drain<T>(slices: Generator<void, T>): T {
  for (;;) {
    const step = slices.next()
    if (step.done) return step.value
  }
}

/** The line without invisible characters, removed a slice at a time (never between the halves of a surrogate pair). */
function* withoutInvisible(line: string, slicer: Slicer): Generator<void, string> {
  if (line.length <= TURN_CHARS) {
    slicer.chars += line.length
    return line.replace(INVISIBLE, '')
  }
  const kept: string[] = []
  for (let start = 0; start < line.length; ) {
    let end = Math.min(line.length, start + TURN_CHARS)
    if (end < line.length && line.charCodeAt(end) >= 0xdc00 && line.charCodeAt(end) <= 0xdfff) end++
    kept.push(line.slice(start, end).replace(INVISIBLE, ''))
    start = end
    slicer.chars = 0
    yield
  }
  return kept.join('')
}

/**
 * layoutPages in slices: the generator pauses (yields) after every TURN_CHARS characters of work and returns the
 * pages (or throws as layoutPages does).
 */
export function* layoutSlices(text: string, geometry: PageGeometry, maxPages = Number.POSITIVE_INFINITY): Generator<void, string[][]> {
  const maxLines = maxPages * geometry.rows
  const maxChars = geometry.rows * geometry.columns * MAX_CHARS_PER_CELL
  const slicer: Slicer = { chars: 0 }
  const lines: string[] = []
  let pageChars = 0
  const normalized = text.replace(/\r\n?/g, '\n')
  const source = normalized.endsWith('\n') ? normalized.slice(0, -1) : normalized
  yield
  for (let start = 0; start <= source.length; ) {
    const end = source.indexOf('\n', start)
    const line = source.slice(start, end < 0 ? source.length : end)
    start = end < 0 ? source.length + 1 : end + 1
    if (++slicer.chars >= TURN_CHARS) {
      slicer.chars = 0
      yield
    }
    // A line longer than the rest of the allowed pages may draw is cut first (what follows could never be drawn),
    // so that the work stays bounded by TEXT_MAX_PAGES, not by TEXT_MAX_BYTES.
    const room = (maxLines - lines.length) * geometry.columns * MAX_CHARS_PER_CELL + 1
    const cleaned = yield* limitMarksSliced(yield* withoutInvisible(line.slice(0, Math.min(line.length, room)), slicer), slicer)
    const expanded = yield* expandTabs(cleaned, geometry.tabSize, slicer)
    for (const display of yield* wrapLineSliced(expanded, geometry.columns, maxLines - lines.length, slicer)) {
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

