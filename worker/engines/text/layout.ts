// Monospace page layout: lines wrapped at word boundaries to the page's columns (words longer than a line are
// broken), tabs expanded to stops, blank lines kept, wide (East Asian) characters two columns, then cut into
// pages. Pure functions: the renderer only draws what this decides.

export interface PageGeometry {
  readonly columns: number
  readonly rows: number
  readonly tabSize: number
}

/** Columns a character takes: 2 for East Asian wide and fullwidth ranges, 0 for combining marks. */
export function charColumns(codePoint: number): number {
  if ((codePoint >= 0x0300 && codePoint <= 0x036f) || codePoint === 0x200b) return 0
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

const widthOf = (text: string) => [...text].reduce((sum, char) => sum + charColumns(char.codePointAt(0)!), 0)

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

/** Breaks a word that is wider than the line into line-sized pieces. */
function breakWord(word: string, columns: number): string[] {
  const pieces: string[] = []
  let piece = ''
  let width = 0
  for (const char of word) {
    const w = charColumns(char.codePointAt(0)!)
    if (width + w > columns && piece) {
      pieces.push(piece)
      piece = ''
      width = 0
    }
    piece += char
    width += w
  }
  if (piece) pieces.push(piece)
  return pieces
}

/** One source line → display lines no wider than `columns`. */
export function wrapLine(line: string, columns: number): string[] {
  if (widthOf(line) <= columns) return [line.trimEnd()]
  const lines: string[] = []
  let current = ''
  for (const token of line.split(/(\s+)/)) {
    if (token === '') continue
    const isSpace = /^\s+$/.test(token)
    if (widthOf(current) + widthOf(token) <= columns) {
      current += token
      continue
    }
    if (isSpace) {
      lines.push(current.trimEnd())
      current = ''
      continue
    }
    if (current.trim()) lines.push(current.trimEnd())
    current = ''
    const pieces = widthOf(token) > columns ? breakWord(token, columns) : [token]
    lines.push(...pieces.slice(0, -1))
    current = pieces.at(-1)!
  }
  if (current.trim() || lines.length === 0) lines.push(current.trimEnd())
  return lines
}

/** The text as pages of display lines (an empty text is one page with one empty line). */
export function layoutPages(text: string, geometry: PageGeometry): string[][] {
  const lines = text
    .replace(/\r\n?/g, '\n')
    .replace(/\n$/, '')
    .split('\n')
    .flatMap((line) => wrapLine(expandTabs(line.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, ''), geometry.tabSize), geometry.columns))
  const pages: string[][] = []
  for (let start = 0; start < lines.length; start += geometry.rows) pages.push(lines.slice(start, start + geometry.rows))
  return pages
}

