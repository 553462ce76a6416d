// What a page's content streams draw, counted before PDFium loads the page: the work pdf-paint.ts's walk of PDFium's
// objects cannot see. A glyph costs PDFium about as much as a small object, and one text operator shows any number
// of them at one spot; a form is built again for each reference; a Type 3 glyph runs its procedure, a tiling
// pattern its cell and a soft mask its group, for each object drawn with them; a function shading runs its function
// for each pixel, a DeviceN image its tint transform, a mesh fills each triangle. So the content of every stream is
// lexed as pdf-streams.ts decodes it (its operators counted, never kept), and each page's work is added up through
// its resources, each drawing as many times as it is drawn, over the area it covers. A page past the walk's bound is
// refused before it is loaded (docs/platform-limits.md, "The content count").
import { MAX_PAINTED_AREAS, PAINT_WEIGHTS } from './pdf-paint'
import {
  asArray,
  isRegular,
  isWhite,
  nameOf,
  ObjectIndex,
  ObjectReader,
  objectHeaderAt,
  PdfObjectsOverlapError,
  type PdfStream,
  PdfStreamSyntaxError,
  type PdfValue,
  type Sink,
  spells,
  type StreamObserver,
} from './pdf-streams'

/** A page (or a stream alone) would draw more than MAX_PAINTED_AREAS areas of the page. */
export class PdfDrawingTooLargeError extends Error {
  override readonly name = 'PdfDrawingTooLargeError'
  readonly drawing: Drawing
  readonly areas: number

  constructor(what: string, drawing: Drawing, areas: number) {
    const count = (value: number) => (Number.isFinite(value) ? value.toFixed(1) : 'endlessly many')
    super(
      `${what} would draw ${count(drawing.units).replace(/\.0$/, '')} objects and glyphs and ${count(drawing.boxes)} times its area again (glyphs, soft-mask groups, pattern cells, Type 3 procedures, shading functions and meshes, each time they are drawn): ${count(areas)} areas of the page at ${PAINT_WEIGHTS.object} pixels an object or a glyph; at most ${MAX_PAINTED_AREAS} are drawn`,
    )
    this.drawing = drawing
    this.areas = areas
  }
}

/** What `drawing` costs in areas of a page of `maxPagePixels`: the paint bound's unit. */
export const drawnAreas = (drawing: Drawing, maxPagePixels: number) =>
  (drawing.units * PAINT_WEIGHTS.object + drawing.pixels) / maxPagePixels + drawing.boxes

/** What one content stream draws by itself, and what it draws by name from its resources (how many times). */
export interface ContentSummary {
  /** Painting operators: fills, strokes, shadings, images, forms and text operators. */
  objects: number
  /** Bytes of the strings text operators show: a glyph is one or two of them. */
  glyphs: number
  /**
   * Times a resource is drawn, by kind and name: `X` an XObject (`Do`), `G` a graphics state (objects drawn while it
   * is set: its soft mask's group is drawn for each), `P` a pattern (objects painted with it), `F` a font (glyphs
   * shown with it), `S` a shading (`sh`). `X*` and the like: names past MAX_NAMES, taken as the costliest of their
   * kind.
   */
  uses: Map<string, Use>
  /**
   * The area its objects cover, each its own, in its space: a path's box (a stroke's widened), an image's unit
   * square, a glyph's em square, a shading's clip (unbounded without one); a form's area is added by the count.
   */
  area: number
  /** The part of `area` its glyphs cover: PDFium draws each glyph, where the walk sees a text object's box. */
  glyphArea: number
  /** Operators of any kind (a PostScript function's are its cost). */
  words: number
}

/**
 * A resource's uses: how many, and the sum of the area scales they were drawn at (the current transformation
 * matrix's determinant: at `Do` for a form, at `gs` for a soft mask, whose group is drawn in the space of then; a
 * glyph's em square for a font; 1 a use for a pattern, drawn in the stream's own space).
 */
export interface Use {
  times: number
  scale: number
  /** The areas of the objects a soft mask or a pattern is drawn for, added up: PDFium draws it within each one. */
  within: number
}

/** Distinct names a stream's summary keeps; the rest are counted under their kind's `*`. */
const MAX_NAMES = 1024
/** Graphics states a stream keeps track of, nested in one another with `q`; deeper ones change nothing. */
const MAX_STATE_DEPTH = 1024
/** Graphics states kept in force at once; more count as `G*`. */
const MAX_STATES_SET = 4
/** Bytes of a string PDFium keeps in a content stream (kMaxStringLength, cpdf_streamparser.cpp); it drops the rest. */
const MAX_STRING_BYTES = 32_767
/** Bytes of a name or an operator kept: PDF names are at most 127 bytes. */
const MAX_WORD_BYTES = 128

/**
 * The graphics state the count follows: states set with `gs` (and the area scale each was set at), the font and
 * its size, the fill and stroke patterns, the current matrix, the line width, the clip's box.
 */
interface DrawState {
  readonly states: readonly string[]
  readonly stateScales: readonly number[]
  readonly font: string | undefined
  readonly fontSize: number
  readonly horizontalScale: number
  readonly fill: string | undefined
  readonly stroke: string | undefined
  readonly matrix: Matrix
  readonly lineWidth: number
  readonly clip: Box | undefined
}

/** An affine matrix [a b c d e f]. */
type Matrix = readonly [number, number, number, number, number, number]
/** A box [x0 y0 x1 y1]. */
type Box = readonly [number, number, number, number]

/** `inner` then `outer` (the first six of `inner`). */
const compose = (inner: ArrayLike<number>, outer: Matrix): Matrix => [
  inner[0]! * outer[0] + inner[1]! * outer[2],
  inner[0]! * outer[1] + inner[1]! * outer[3],
  inner[2]! * outer[0] + inner[3]! * outer[2],
  inner[2]! * outer[1] + inner[3]! * outer[3],
  inner[4]! * outer[0] + inner[5]! * outer[2] + outer[4],
  inner[4]! * outer[1] + inner[5]! * outer[3] + outer[5],
]

const clipArea = (box: Box) => Math.max(0, box[2] - box[0]) * Math.max(0, box[3] - box[1])

/** |a d − b c|: the factor a matrix [a b c d e f] multiplies areas by. */
const areaScale = (matrix: ArrayLike<number>) => {
  const scale = Math.abs(matrix[0]! * matrix[3]! - matrix[1]! * matrix[2]!)
  return Number.isFinite(scale) ? scale : Number.MAX_VALUE
}

/** The operators the count reads, by their bytes (wordCode). */
const OPERATORS = new Map(
  [
    ...['q', 'Q', 'cm', 'w', 'gs', 'Tf', 'Tz', 'BT', 'Tm', 'scn', 'SCN', 'sh', 'Do', 'BI', 'ID'],
    ...['m', 'l', 'c', 'v', 'y', 're', 'W', 'W*', 'n'],
    ...['cs', 'sc', 'g', 'rg', 'k', 'CS', 'SC', 'G', 'RG', 'K'],
    ...['f', 'F', 'f*', 'S', 's', 'B', 'B*', 'b', 'b*'],
    ...['Tj', 'TJ', "'", '"'],
  ].map((op) => [wordCode(new TextEncoder().encode(op), op.length), op]),
)

/** Up to three bytes as one number. */
function wordCode(word: Uint8Array, length: number): number {
  return length === 1
    ? word[0]!
    : length === 2
      ? word[0]! | (word[1]! << 8)
      : word[0]! | (word[1]! << 8) | (word[2]! << 16)
}

/** Whether the word is `true`, `false` or `null`: operands, not operators. */
function isOperand(word: Uint8Array, length: number): boolean {
  if ((length !== 4 && length !== 5) || (word[0] !== 0x74 && word[0] !== 0x66 && word[0] !== 0x6e)) return false
  const text = String.fromCharCode(...word.subarray(0, length))
  return text === 'true' || text === 'false' || text === 'null'
}

/** A PDF number's value from its bytes (sign, digits, one point); anything else in it ends it. */
function readNumber(word: Uint8Array, length: number): number {
  let at = 0
  let sign = 1
  while (at < length && (word[at] === 0x2b || word[at] === 0x2d)) if (word[at++] === 0x2d) sign = -sign
  let value = 0
  let fraction = 0
  for (; at < length; at++) {
    const byte = word[at]!
    if (byte === 0x2e && fraction === 0) fraction = 1
    else if (byte >= 0x30 && byte <= 0x39) {
      if (fraction > 0) value += (byte - 0x30) / (fraction *= 10)
      else value = value * 10 + (byte - 0x30)
    } else break
  }
  // Past a double's range: the largest, so that what it scales counts as large as can be (never as nothing).
  return sign * Math.min(value, Number.MAX_VALUE)
}

/** What the lexer is reading. */
const Mode = {
  Normal: 0,
  Word: 1,
  Comment: 2,
  String: 3,
  Hex: 4,
  /** After `<`: a hex string or `<<`. */
  Angle: 5,
  /** Inline image data, after `ID`: up to an `EI` that stands alone. */
  ImageData: 6,
} as const
type Mode = (typeof Mode)[keyof typeof Mode]

const PATH_FILLS = new Set(['f', 'F', 'f*'])
const PATH_STROKES = new Set(['S', 's'])
const PATH_BOTH = new Set(['B', 'B*', 'b', 'b*'])
const TEXT_SHOWS = new Set(['Tj', 'TJ', "'", '"'])
const FILL_COLOURS = new Set(['cs', 'sc', 'g', 'rg', 'k'])
const STROKE_COLOURS = new Set(['CS', 'SC', 'G', 'RG', 'K'])

/**
 * Lexes a content stream's decoded bytes as they come, in pieces, and counts what its operators draw. Linear in the
 * bytes; keeps a word of at most MAX_WORD_BYTES and the graphics-state stack. Bytes that are not content (a font
 * program read by mistake) are lexed the same way and count what they happen to spell.
 */
export class ContentLexer implements Sink {
  readonly summary: ContentSummary = { objects: 0, glyphs: 0, uses: new Map(), area: 0, glyphArea: 0, words: 0 }
  private mode: Mode = Mode.Normal
  private readonly word = new Uint8Array(MAX_WORD_BYTES)
  private wordLength = 0
  private wordIsName = false
  /** A string's nesting, and where an escape is (1 after the backslash, 2–3 within octal digits). */
  private depth = 0
  private escape = 0
  private hexDigits = 0
  /** What the operands since the last operator hold. */
  private shownBytes = 0
  /** Bytes of the literal string being read. */
  private stringBytes = 0
  private lastName: string | undefined
  /** The last six numbers among the operands (a matrix's, for `cm`), `numberCount` of them. */
  private readonly numbers = new Float64Array(6)
  private numberCount = 0
  private inImageDictionary = false
  /** The bytes before this one in image data: an `EI` stands between two of white space or delimiters. */
  private previous = 0x20
  private beforePrevious = 0x20
  /** The byte before those two: an `EI` ends the data only after white space or a delimiter. */
  private third = 0x20
  private state: DrawState = {
    states: [],
    stateScales: [],
    font: undefined,
    fontSize: 1,
    horizontalScale: 1,
    fill: undefined,
    stroke: undefined,
    matrix: [1, 0, 0, 1, 0, 0],
    lineWidth: 1,
    clip: undefined,
  }
  private readonly stack: DrawState[] = []

  constructor(private readonly onEnd?: (summary: ContentSummary) => void) {}

  write(piece: Uint8Array): void {
    for (let i = 0; i < piece.length; i++) {
      const byte = piece[i]!
      switch (this.mode) {
        case Mode.Word:
          if (isRegular(byte)) {
            if (this.wordLength < MAX_WORD_BYTES) this.word[this.wordLength] = byte
            this.wordLength++
            continue
          }
          this.endWord()
          break // the byte that ended the word is read as Normal below
        case Mode.Comment:
          if (byte === 0x0a || byte === 0x0d) this.mode = Mode.Normal
          continue
        case Mode.String:
          this.stringByte(byte)
          continue
        case Mode.Hex:
          if (byte === 0x3e) {
            this.shownBytes += Math.min(Math.ceil(this.hexDigits / 2), MAX_STRING_BYTES)
            this.mode = Mode.Normal
          } else if (!isWhite(byte)) this.hexDigits++
          continue
        case Mode.Angle:
          if (byte === 0x3c) {
            this.mode = Mode.Normal // `<<`: a dictionary operand
            continue
          }
          this.mode = Mode.Hex
          this.hexDigits = 0
          i-- // this byte is the hex string's first
          continue
        case Mode.ImageData:
          // `EI` between white space or delimiters ends the data (PDFium skips what is before its keyword `EI` too).
          if (!isRegular(byte) && this.previous === 0x49 && this.beforePrevious === 0x45 && this.isImageDataEnd()) {
            this.mode = Mode.Normal
            this.paint(false, false, areaScale(this.state.matrix))
          }
          this.track(byte)
          if (this.mode === Mode.ImageData) continue
          break
      }
      this.normalByte(byte)
    }
  }

  end(): void {
    if (this.mode === Mode.Word) this.endWord()
    if (this.mode === Mode.ImageData && this.previous === 0x49 && this.beforePrevious === 0x45)
      this.paint(false, false, areaScale(this.state.matrix))
    this.onEnd?.(this.summary)
  }

  private track(byte: number): void {
    this.third = this.beforePrevious
    this.beforePrevious = this.previous
    this.previous = byte
  }
  private isImageDataEnd(): boolean {
    return !isRegular(this.third)
  }

  private normalByte(byte: number): void {
    if (isWhite(byte)) return
    switch (byte) {
      case 0x25:
        this.mode = Mode.Comment
        return
      case 0x28:
        this.mode = Mode.String
        this.depth = 1
        this.escape = 0
        this.stringBytes = 0
        return
      case 0x3c:
        this.mode = Mode.Angle
        return
      case 0x2f:
        this.mode = Mode.Word
        this.wordIsName = true
        this.wordLength = 0
        return
      case 0x3e:
      case 0x29:
      case 0x5b:
      case 0x5d:
      case 0x7b:
      case 0x7d:
        return // arrays, dictionaries: their strings and names are operands like any
      default:
        this.mode = Mode.Word
        this.wordIsName = false
        this.word[0] = byte
        this.wordLength = 1
    }
  }

  private stringByte(byte: number): void {
    if (this.escape === 1) {
      // An octal escape is one byte of up to three digits; any other escaped byte is one.
      this.escape = byte >= 0x30 && byte <= 0x37 ? 2 : 0
      this.stringBytes++
      return
    }
    if (this.escape >= 2) {
      if (byte >= 0x30 && byte <= 0x37) {
        this.escape = this.escape === 3 ? 0 : 3
        return
      }
      this.escape = 0
    }
    if (byte === 0x5c) {
      this.escape = 1
      return
    }
    if (byte === 0x28) this.depth++
    else if (byte === 0x29 && --this.depth === 0) {
      this.mode = Mode.Normal
      this.shownBytes += Math.min(this.stringBytes, MAX_STRING_BYTES)
      this.stringBytes = 0
      return
    }
    this.stringBytes++
  }

  private endWord(): void {
    this.mode = Mode.Normal
    const { word } = this
    const length = Math.min(this.wordLength, MAX_WORD_BYTES)
    if (this.wordIsName) {
      this.lastName = String.fromCharCode(...word.subarray(0, length)).replace(/#([0-9a-fA-F]{2})/g, (_, hex: string) =>
        String.fromCharCode(Number.parseInt(hex, 16)),
      )
      return
    }
    const first = word[0]!
    if ((first >= 0x30 && first <= 0x39) || first === 0x2b || first === 0x2d || first === 0x2e) {
      this.pushNumber(readNumber(word, length))
      return
    }
    this.summary.words++
    // An operator the count reads is 1 to 3 bytes; any other word (true, false, null among them) changes nothing.
    const op = this.wordLength <= 3 ? OPERATORS.get(wordCode(word, length)) : undefined
    if (op === undefined && isOperand(word, this.wordLength)) return
    if (op !== undefined) this.operator(op)
    this.shownBytes = 0
    this.lastName = undefined
    this.numberCount = 0
  }

  private pushNumber(value: number): void {
    const { numbers } = this
    if (this.numberCount === numbers.length) numbers.copyWithin(0, 1)
    else this.numberCount++
    numbers[this.numberCount - 1] = value
  }

  private operator(op: string): void {
    if (this.inImageDictionary) {
      if (op === 'ID') {
        this.inImageDictionary = false
        this.mode = Mode.ImageData
        this.previous = 0x20
        this.beforePrevious = 0x20
        this.third = 0x20
      }
      return
    }
    const { state, numbers, numberCount } = this
    switch (op) {
      case 'q':
        if (this.stack.length < MAX_STATE_DEPTH) this.stack.push(state)
        return
      case 'Q':
        this.state = this.stack.pop() ?? state
        return
      case 'cm':
        if (numberCount === 6) this.state = { ...state, matrix: compose(numbers, state.matrix) }
        return
      case 'w':
        if (numberCount >= 1) this.state = { ...state, lineWidth: Math.abs(numbers[numberCount - 1]!) }
        return
      case 'gs':
        if (this.lastName !== undefined) this.setState(this.lastName)
        return
      case 'Tf':
        this.state = { ...state, font: this.lastName, fontSize: numberCount >= 1 ? numbers[numberCount - 1]! : 1 }
        return
      case 'Tz':
        if (numberCount >= 1) this.state = { ...state, horizontalScale: Math.abs(numbers[numberCount - 1]!) / 100 }
        return
      case 'BT':
        this.textScale = 1
        return
      case 'Tm':
        if (numberCount === 6) this.textScale = areaScale(numbers)
        return
      case 'scn':
        this.state = { ...state, fill: this.lastName }
        return
      case 'SCN':
        this.state = { ...state, stroke: this.lastName }
        return
      case 'm':
      case 'l':
        if (numberCount >= 2) this.addPoints(numberCount - 2, 1)
        return
      case 'c':
        if (numberCount >= 6) this.addPoints(0, 3)
        return
      case 'v':
      case 'y':
        if (numberCount >= 4) this.addPoints(numberCount - 4, 2)
        return
      case 're':
        if (numberCount >= 4) this.addRectangle()
        return
      case 'W':
      case 'W*':
        this.clipping = true
        return
      case 'n':
        this.endPath()
        return
      case 'sh': {
        // A shading fills the clip: its function or its mesh is resolved by name.
        const area = this.state.clip ? clipArea(this.state.clip) : Number.POSITIVE_INFINITY
        this.paint(false, false, area)
        if (this.lastName !== undefined) this.use('S', this.lastName, 1, 1, area)
        return
      }
      case 'Do':
        // An image's or a form's area is added when its name is resolved.
        this.paint(false, false, 0, Number.POSITIVE_INFINITY)
        if (this.lastName !== undefined) this.use('X', this.lastName, 1, areaScale(state.matrix))
        return
      case 'BI':
        this.inImageDictionary = true
        return
    }
    if (FILL_COLOURS.has(op)) this.state = { ...state, fill: undefined }
    else if (STROKE_COLOURS.has(op)) this.state = { ...state, stroke: undefined }
    else if (PATH_FILLS.has(op)) this.paintPath(true, false)
    else if (PATH_STROKES.has(op)) this.paintPath(false, true)
    else if (PATH_BOTH.has(op)) this.paintPath(true, true)
    else if (TEXT_SHOWS.has(op)) this.show()
  }

  /** The path's box so far, in the stream's space (the current matrix applied to each point), or undefined. */
  private path: [number, number, number, number] | undefined
  /** A `W` was read: the path clips when it ends. */
  private clipping = false
  /** The area scale of the text matrix (`Tm`), within BT … ET. */
  private textScale = 1

  private addPoints(from: number, count: number): void {
    for (let i = 0; i < count; i++) this.addPoint(this.numbers[from + 2 * i]!, this.numbers[from + 2 * i + 1]!)
  }

  private addRectangle(): void {
    const at = this.numberCount - 4
    const [x, y, width, height] = [
      this.numbers[at]!,
      this.numbers[at + 1]!,
      this.numbers[at + 2]!,
      this.numbers[at + 3]!,
    ]
    this.addPoint(x, y)
    this.addPoint(x + width, y)
    this.addPoint(x, y + height)
    this.addPoint(x + width, y + height)
  }

  private addPoint(x: number, y: number): void {
    const [a, b, c, d, e, f] = this.state.matrix
    const px = a * x + c * y + e
    const py = b * x + d * y + f
    const box = this.path
    if (!box) this.path = [px, py, px, py]
    else {
      box[0] = Math.min(box[0], px)
      box[1] = Math.min(box[1], py)
      box[2] = Math.max(box[2], px)
      box[3] = Math.max(box[3], py)
    }
  }

  /** Ends the path: a `W` before makes it the clip (the boxes intersected); it is forgotten. */
  private endPath(): void {
    if (this.clipping) {
      const box = this.path ?? [0, 0, 0, 0]
      const clip = this.state.clip
      this.state = {
        ...this.state,
        clip: clip
          ? [Math.max(clip[0], box[0]), Math.max(clip[1], box[1]), Math.min(clip[2], box[2]), Math.min(clip[3], box[3])]
          : [...box],
      }
    }
    this.clipping = false
    this.path = undefined
  }

  /** A path filled or stroked: its box (a stroke's widened by half its width), within the clip. */
  private paintPath(fills: boolean, strokes: boolean): void {
    const box = this.path
    let area = 0
    if (box) {
      const half = strokes ? (Math.max(this.state.lineWidth, 1) * Math.sqrt(areaScale(this.state.matrix))) / 2 : 0
      const clip = this.state.clip
      const x0 = Math.max(box[0] - half, clip ? clip[0] : Number.NEGATIVE_INFINITY)
      const y0 = Math.max(box[1] - half, clip ? clip[1] : Number.NEGATIVE_INFINITY)
      const x1 = Math.min(box[2] + half, clip ? clip[2] : Number.POSITIVE_INFINITY)
      const y1 = Math.min(box[3] + half, clip ? clip[3] : Number.POSITIVE_INFINITY)
      const [width, height] = [x1 - x0, y1 - y0]
      // A box past a double's range (NaN) counts as unbounded.
      area =
        Number.isNaN(width) || Number.isNaN(height)
          ? Number.POSITIVE_INFINITY
          : width > 0 && height > 0
            ? width * height
            : 0
    }
    this.endPath()
    this.paint(fills, strokes, area)
  }

  /** A text operator: its glyphs, each over its em square at the font's size (the text and current matrices'). */
  private show(): void {
    const glyphs = this.shownBytes
    const { state } = this
    const glyphScale =
      state.fontSize * state.fontSize * state.horizontalScale * this.textScale * areaScale(state.matrix)
    this.summary.glyphs += glyphs
    this.summary.glyphArea = Math.min(Number.MAX_VALUE, this.summary.glyphArea + glyphs * glyphScale)
    this.paint(false, false, glyphs * glyphScale)
    if (state.font !== undefined) this.use('F', state.font, glyphs, glyphs * glyphScale)
    if (state.fill !== undefined) this.use('P', state.fill, glyphs, glyphs, glyphs * glyphScale)
  }

  /** A soft mask's group is drawn in the space of the `gs` that set it: the scale of then is kept with it. */
  private setState(name: string): void {
    const { state } = this
    const kept = state.states.indexOf(name)
    const states = kept >= 0 ? state.states.filter((_, i) => i !== kept) : [...state.states]
    const stateScales = kept >= 0 ? state.stateScales.filter((_, i) => i !== kept) : [...state.stateScales]
    states.push(states.length < MAX_STATES_SET ? name : '*')
    stateScales.push(areaScale(state.matrix))
    if (states.length > MAX_STATES_SET) {
      states.shift()
      stateScales.shift()
    }
    this.state = { ...state, states, stateScales }
  }

  /**
   * One object drawn over `area` (in the stream's space): counted, and once for each soft mask and pattern, which
   * PDFium draws within the object's box (`within`: unbounded for a `Do`, whose area is known once it is resolved).
   */
  private paint(fills: boolean, strokes: boolean, area: number, within = area): void {
    this.summary.objects++
    this.summary.area += area
    const { states, stateScales, fill, stroke } = this.state
    for (const [i, name] of states.entries()) this.use('G', name, 1, stateScales[i]!, within)
    if (fills && fill !== undefined) this.use('P', fill, 1, 1, within)
    if (strokes && stroke !== undefined) this.use('P', stroke, 1, 1, within)
  }

  private use(kind: string, name: string, times: number, scale: number, within = Number.POSITIVE_INFINITY): void {
    const { uses } = this.summary
    let key = `${kind}${name}`
    if (!uses.has(key) && uses.size >= MAX_NAMES) key = `${kind}*`
    const use = uses.get(key)
    if (use) {
      use.times += times
      use.scale = Math.min(Number.MAX_VALUE, use.scale + scale)
      use.within += within
    } else uses.set(key, { times, scale, within })
  }
}

/** Two readings of one stream: the larger of each count (the reading PDFium takes is not known). */
function merge(into: ContentSummary | undefined, summary: ContentSummary): ContentSummary {
  if (!into) return summary
  into.objects = Math.max(into.objects, summary.objects)
  into.glyphs = Math.max(into.glyphs, summary.glyphs)
  into.area = Math.max(into.area, summary.area)
  into.glyphArea = Math.max(into.glyphArea, summary.glyphArea)
  into.words = Math.max(into.words, summary.words)
  for (const [key, use] of summary.uses) {
    const known = into.uses.get(key)
    into.uses.set(key, {
      times: Math.max(known?.times ?? 0, use.times),
      scale: Math.max(known?.scale ?? 0, use.scale),
      within: Math.max(known?.within ?? 0, use.within),
    })
  }
  return into
}

/** Kinds of stream that are not content: fonts, images, metadata, functions, files, ICC profiles. */
function mayBeContent(stream: PdfStream): boolean {
  const { dictionary } = stream
  const subtype = nameOf(dictionary.get('Subtype'))
  if (subtype !== undefined && subtype !== 'Form') return false
  const type = nameOf(dictionary.get('Type'))
  if (type !== undefined && type !== 'XObject' && type !== 'Pattern') return false
  for (const key of ['Length1', 'Length2', 'Length3', 'Width', 'N', 'FunctionType', 'ShadingType'])
    if (dictionary.has(key)) return false
  return !stream.isStructure
}

/** Shadings of triangles and patches (types 4 to 7): their data's size bounds their triangles. */
const isMesh = (dictionary: ReadonlyMap<string, PdfValue>) => {
  const type = dictionary.get('ShadingType')
  return typeof type === 'number' && type >= 4 && type <= 7
}

/** Bytes of object streams kept for the count, at most (their objects name pages, resources, fonts). */
const MAX_KEPT_OBJECT_STREAM_BYTES = 16 * 2 ** 20

/**
 * Reads the streams pdf-streams.ts decodes: lexes those that may be content (ContentLexer) and keeps object streams'
 * data, then counts each page's drawing (check).
 */
export class ContentScan implements StreamObserver {
  private readonly summaries = new Map<string, ContentSummary>()
  private readonly objectStreams = new Map<PdfStream, Uint8Array>()
  /** A PostScript function's operators, a mesh shading's decoded bytes, by object. */
  private readonly dataSizes = new Map<string, number>()
  private keptBytes = 0

  wants(stream: PdfStream): boolean {
    return (
      nameOf(stream.dictionary.get('Type')) === 'ObjStm' ||
      mayBeContent(stream) ||
      stream.dictionary.get('FunctionType') === 4 ||
      isMesh(stream.dictionary)
    )
  }

  open(stream: PdfStream): Sink {
    if (nameOf(stream.dictionary.get('Type')) === 'ObjStm') return this.keeper(stream)
    const key = `${stream.object} ${stream.generation}`
    if (stream.dictionary.get('FunctionType') === 4) {
      // A PostScript calculator function: its operators, each run for every value it is asked for.
      return new ContentLexer((summary) =>
        this.dataSizes.set(key, Math.max(this.dataSizes.get(key) ?? 0, summary.words)),
      )
    }
    if (isMesh(stream.dictionary)) {
      let bytes = 0
      return {
        write: (piece) => {
          bytes += piece.length
        },
        end: () => this.dataSizes.set(key, Math.max(this.dataSizes.get(key) ?? 0, bytes)),
      }
    }
    return new ContentLexer((summary) => this.summaries.set(key, merge(this.summaries.get(key), summary)))
  }

  /** Keeps an object stream's longest reading, within MAX_KEPT_OBJECT_STREAM_BYTES for all of them. */
  private keeper(stream: PdfStream): Sink {
    const pieces: Uint8Array[] = []
    let length = 0
    return {
      write: (piece) => {
        length += piece.length
        if (this.keptBytes + length <= MAX_KEPT_OBJECT_STREAM_BYTES) pieces.push(piece.slice())
      },
      end: () => {
        const kept = this.objectStreams.get(stream)
        if (this.keptBytes + length > MAX_KEPT_OBJECT_STREAM_BYTES || (kept && kept.length >= length)) return
        const bytes = new Uint8Array(length)
        let at = 0
        for (const piece of pieces) {
          bytes.set(piece, at)
          at += piece.length
        }
        this.keptBytes += length - (kept?.length ?? 0)
        this.objectStreams.set(stream, bytes)
      },
    }
  }

  /**
   * Counts what each page of the file draws, and each content stream no page draws, alone, in areas of a page of
   * `maxPagePixels` (drawnAreas), and throws PdfDrawingTooLargeError for the first past MAX_PAINTED_AREAS. Pages are
   * every dictionary with /Contents the file's bytes or its object streams hold (PDFium's page tree picks among
   * them). Returns the costliest (what tests and benches count). The scan is done with after it.
   */
  check(bytes: Uint8Array, streams: readonly PdfStream[], maxPagePixels: number): Drawing & { areas: number } {
    try {
      return this.countPages(bytes, streams, maxPagePixels)
    } finally {
      // Counted once: what was kept (object streams' data, up to 16 MiB) is not held while the pages are drawn.
      this.summaries.clear()
      this.objectStreams.clear()
      this.dataSizes.clear()
      this.keptBytes = 0
    }
  }

  private countPages(bytes: Uint8Array, streams: readonly PdfStream[], maxPagePixels: number) {
    const count = new DrawingCount(bytes, streams, this.summaries, this.objectStreams, this.dataSizes)
    let most = { units: 0, boxes: 0, paint: 0, pixels: 0, areas: 0 }
    const weigh = (what: string, drawing: Drawing) => {
      const areas = drawnAreas(drawing, maxPagePixels)
      if (!(areas <= MAX_PAINTED_AREAS)) throw new PdfDrawingTooLargeError(what, drawing, areas)
      if (areas > most.areas) most = { ...drawing, areas }
    }
    const numbers = count.pageNumbers(streams)
    for (const page of count.pages()) {
      const number = numbers.get(`${page.object} ${page.generation}`)
      weigh(number ? `page ${number}` : `the page in object ${page.object}`, count.page(page.dictionary))
    }
    // A stream no page draws (PDFium may find a page this count does not) is counted alone, its boxes as pages.
    for (const stream of streams) {
      const key = `${stream.object} ${stream.generation}`
      if (this.summaries.has(key) && !count.counted.has(key))
        weigh(`object ${stream.object}'s content`, count.form(stream, undefined))
    }
    return most
  }
}

/** Forms, patterns and masks drawn inside one another this deep, at most: PDFium draws no deeper. */
const MAX_NESTING = 64
/** Pages numbered, at most (PDF_MAX_PAGES is smaller). */
const MAX_PAGE_NUMBERS = 100_000
/** A Type 3 font's glyph procedures looked at, at most: a simple font shows 256 codes. */
const MAX_GLYPH_PROCEDURES = 4096

type Resources = ReadonlyMap<string, PdfValue> | undefined

/** The count of what pages and streams draw, through the objects of the file and of its object streams. */
class DrawingCount {
  private readonly index: ObjectIndex
  private readonly streamsByKey = new Map<string, PdfStream>()
  private readonly packed = new Map<string, { bytes: Uint8Array; start: number; end: number }>()
  private readonly packedValues = new Map<string, PdfValue>()
  private readonly costs = new Map<string, Drawing>()
  private readonly resourceIds = new WeakMap<object, number>()
  private readonly drawing = new Set<string>()
  private lastResourceId = 0
  /** The streams counted so far, as a page's or within one. */
  readonly counted = new Set<string>()

  constructor(
    private readonly bytes: Uint8Array,
    streams: readonly PdfStream[],
    private readonly summaries: ReadonlyMap<string, ContentSummary>,
    objectStreams: ReadonlyMap<PdfStream, Uint8Array>,
    private readonly dataSizes: ReadonlyMap<string, number>,
  ) {
    this.index = new ObjectIndex(bytes)
    for (const stream of streams) this.streamsByKey.set(`${stream.object} ${stream.generation}`, stream)
    for (const [stream, data] of objectStreams) this.unpack(stream, data)
  }

  /** Where each object of an object stream is: its header's pairs of object number and offset after /First. */
  private unpack(stream: PdfStream, data: Uint8Array): void {
    const count = stream.dictionary.get('N')
    const first = stream.dictionary.get('First')
    if (typeof count !== 'number' || typeof first !== 'number' || first > data.length) return
    const reader = new ObjectReader(data, 0, first)
    const entries: [number, number][] = []
    try {
      for (let i = 0; i < count && i < data.length; i++) {
        const object = reader.value()
        const offset = reader.value()
        if (typeof object !== 'number' || typeof offset !== 'number') break
        entries.push([object, first + offset])
      }
    } catch (error) {
      if (!(error instanceof PdfStreamSyntaxError)) throw error
    }
    for (const [i, [object, start]] of entries.entries()) {
      const end = i + 1 < entries.length ? Math.max(start, entries[i + 1]![1]) : data.length
      if (start < data.length) this.packed.set(`${object} 0`, { bytes: data, start, end: Math.min(end, data.length) })
    }
  }

  /** A value, a reference followed once: in the file's bytes, else in an object stream; undefined if neither. */
  resolve(value: PdfValue | undefined): PdfValue | undefined {
    if (!value || typeof value !== 'object' || !('ref' in value)) return value
    const key = value.ref.join(' ')
    try {
      const resolved = this.index.resolve(value, true)
      if (resolved !== undefined) return resolved
    } catch (error) {
      // An object that cannot be read counts as missing, unless the objects read overlap (the reading is refused).
      if (!(error instanceof PdfStreamSyntaxError) || error instanceof PdfObjectsOverlapError) throw error
    }
    if (this.packedValues.has(key)) return this.packedValues.get(key)
    const place = this.packed.get(key)
    let resolved: PdfValue | undefined
    if (place) {
      try {
        resolved = new ObjectReader(place.bytes, place.start, place.end).value()
      } catch (error) {
        if (!(error instanceof PdfStreamSyntaxError)) throw error
      }
    }
    this.packedValues.set(key, resolved ?? null)
    return resolved
  }

  private dictionary(value: PdfValue | undefined): ReadonlyMap<string, PdfValue> | undefined {
    const resolved = this.resolve(value)
    return resolved instanceof Map ? resolved : undefined
  }

  private streamOf(value: PdfValue | undefined): PdfStream | undefined {
    return value && typeof value === 'object' && 'ref' in value ? this.streamsByKey.get(value.ref.join(' ')) : undefined
  }

  /**
   * The pages' numbers, by object, in the order of the page tree the last trailer (or cross-reference stream) names:
   * what messages call a page. A page not found there is named by its object.
   */
  pageNumbers(streams: readonly PdfStream[]): Map<string, number> {
    const { bytes } = this
    let root: PdfValue | undefined
    for (let at = bytes.lastIndexOf(0x74); at >= 0; at = bytes.lastIndexOf(0x74, at - 1)) {
      if (!spells(bytes, at, 'trailer')) continue
      const reader = new ObjectReader(bytes, at + 'trailer'.length, bytes.length)
      try {
        reader.skipWhite()
        const value = reader.value()
        if (value instanceof Map) root = value.get('Root')
      } catch (error) {
        if (!(error instanceof PdfStreamSyntaxError)) throw error
      }
      break
    }
    for (const stream of streams)
      if (nameOf(stream.dictionary.get('Type')) === 'XRef') root = stream.dictionary.get('Root') ?? root
    const numbers = new Map<string, number>()
    const seen = new Set<string>()
    const visit = (node: PdfValue | undefined, depth: number): void => {
      if (!node || typeof node !== 'object' || !('ref' in node) || depth > MAX_NESTING) return
      const key = node.ref.join(' ')
      if (seen.has(key) || numbers.size >= MAX_PAGE_NUMBERS) return
      seen.add(key)
      const dictionary = this.dictionary(node)
      const kids = dictionary?.get('Kids')
      if (!dictionary) return
      if (nameOf(dictionary.get('Type')) === 'Page' || kids === undefined) numbers.set(key, numbers.size + 1)
      else for (const kid of asArray(this.resolve(kids))) visit(kid, depth + 1)
    }
    visit(this.dictionary(root)?.get('Pages'), 0)
    return numbers
  }

  /** Every dictionary with /Contents that names a stream, in the file's bytes and in its object streams. */
  *pages(): Generator<{ object: number; generation: number; dictionary: ReadonlyMap<string, PdfValue> }> {
    const { bytes } = this
    const headers: { at: number; object: number; generation: number }[] = []
    for (let at = bytes.indexOf(0x6f); at >= 0; at = bytes.indexOf(0x6f, at + 1)) {
      const header = objectHeaderAt(bytes, at)
      if (header) headers.push({ at, object: header.object, generation: header.generation })
    }
    const seen = new Set<string>()
    let nearest = -1
    for (let at = bytes.indexOf(0x2f); at >= 0; at = bytes.indexOf(0x2f, at + 1)) {
      if (!spells(bytes, at, '/Contents')) continue
      while (nearest + 1 < headers.length && headers[nearest + 1]!.at < at) nearest++
      const header = headers[nearest]
      if (!header) continue
      const key = `${header.object} ${header.generation}`
      if (seen.has(key)) continue
      seen.add(key)
      const dictionary = this.dictionary({ ref: [header.object, header.generation] })
      if (dictionary && this.contentStreams(dictionary).length > 0)
        yield { object: header.object, generation: header.generation, dictionary }
    }
    for (const key of this.packed.keys()) {
      if (seen.has(key)) continue
      const [object, generation] = key.split(' ').map(Number) as [number, number]
      const dictionary = this.dictionary({ ref: [object, generation] })
      if (dictionary && this.contentStreams(dictionary).length > 0) yield { object, generation, dictionary }
    }
  }

  /** The streams a page's /Contents names: one, or an array of them. */
  private contentStreams(page: ReadonlyMap<string, PdfValue>): PdfStream[] {
    const contents = page.get('Contents')
    const one = this.streamOf(contents)
    if (one) return [one]
    return asArray(this.resolve(contents)).flatMap((item) => this.streamOf(item) ?? [])
  }

  /** What a page draws: its content streams with its resources (its own or inherited), and its annotations. */
  page(page: ReadonlyMap<string, PdfValue>): Drawing {
    let resources = this.dictionary(page.get('Resources'))
    let box = boxArea(this.resolve(page.get('CropBox'))) ?? boxArea(this.resolve(page.get('MediaBox')))
    let parent = this.dictionary(page.get('Parent'))
    for (let depth = 0; (!resources || box === undefined) && parent && depth < MAX_NESTING; depth++) {
      resources ??= this.dictionary(parent.get('Resources'))
      box ??= boxArea(this.resolve(parent.get('CropBox'))) ?? boxArea(this.resolve(parent.get('MediaBox')))
      parent = this.dictionary(parent.get('Parent'))
    }
    const clip = box ?? LETTER_AREA
    const total = nothing()
    for (const stream of this.contentStreams(page)) addTo(total, this.stream(stream, resources, clip))
    for (const annotation of asArray(this.resolve(page.get('Annots')))) {
      const appearances = this.dictionary(this.dictionary(annotation)?.get('AP'))
      addTo(total, this.appearance(appearances?.get('N'), resources))
    }
    return total
  }

  /** An annotation's normal appearance: a form, or the costliest of its states' forms. */
  private appearance(value: PdfValue | undefined, resources: Resources): Drawing {
    const states = [value, ...(this.dictionary(value)?.values() ?? [])]
    const most = nothing()
    for (const state of states) {
      const form = this.streamOf(state)
      if (form) mostOf(most, this.form(form, resources))
    }
    return most
  }

  /** A form, a pattern's cell, a mask's group, a glyph procedure: with its own resources, else its caller's. */
  form(stream: PdfStream, inherited: Resources): Drawing {
    const resources = this.dictionary(stream.dictionary.get('Resources')) ?? inherited
    return this.stream(stream, resources, boxArea(this.resolve(stream.dictionary.get('BBox'))) ?? Number.NaN)
  }

  /**
   * What a content stream draws with `resources`: its objects and glyphs and what it draws by name, as units; the
   * areas no walk of PDFium's objects sees (glyphs; soft-mask groups, pattern cells and Type 3 glyphs drawn again),
   * in boxes of `clip` (the area its drawing is clipped to in its own space: a page's box, a form's /BBox; NaN:
   * unknown); and the area all it draws covers, in its own space (paint).
   */
  stream(stream: PdfStream, resources: Resources, clip: number): Drawing {
    const key = `${stream.object} ${stream.generation}`
    const summary = this.summaries.get(key)
    if (!summary) return nothing()
    this.counted.add(key)
    const memo = `${key}|${resources ? this.idOf(resources) : 0}|${clip}`
    const known = this.costs.get(memo)
    if (known !== undefined) return known
    // A stream drawn inside itself: PDFium does not draw it again.
    if (this.drawing.has(key) || this.drawing.size >= MAX_NESTING) return nothing()
    this.drawing.add(key)
    const total: Drawing = {
      units: summary.objects + summary.glyphs,
      // Without a box of its own (a form without /BBox), its glyphs are measured against a Letter page.
      boxes: Math.min(summary.glyphs, summary.glyphArea / (clip > 0 ? clip : LETTER_AREA)),
      paint: summary.area,
      pixels: 0,
    }
    try {
      for (const [name, use] of summary.uses) {
        const category = CATEGORIES[name[0] as keyof typeof CATEGORIES]
        const entries = this.dictionary(resources?.get(category))
        if (!entries) continue
        const label = name.slice(1)
        const most = nothing()
        for (const value of label === '*' ? entries.values() : [entries.get(label)])
          mostOf(most, this.entry(name[0]!, value, use, resources, clip))
        addTo(total, most)
      }
    } finally {
      this.drawing.delete(key)
    }
    this.costs.set(memo, total)
    return total
  }

  /**
   * A shading drawn for `use` (within the areas it records, in boxes of `clip`): a function shading runs its function
   * for each pixel (a PostScript function's operators each a pixel of work, bench:pdf-draw-cost); an axial or radial
   * one for each of 256 samples; a mesh draws each of its triangles, which its data's size bounds (a vertex each).
   */
  private shading(value: PdfValue | undefined, use: Use, clip: number): Drawing {
    const mesh = this.streamOf(value)
    const dictionary = mesh?.dictionary ?? this.dictionary(value)
    if (!dictionary) return nothing()
    const type = dictionary.get('ShadingType')
    const operators = Math.max(1, this.functionOperators(dictionary.get('Function'), 0))
    const covered = clip > 0 ? Math.min(use.times, use.within / clip) : use.times
    const { shadingPixel, shadingOperator, tintOperator, meshVertex } = FUNCTION_WEIGHTS
    if (type === 1)
      return { units: 0, boxes: (shadingPixel + shadingOperator * operators) * covered, paint: 0, pixels: 0 }
    if (type === 2 || type === 3)
      return { units: 0, boxes: 0, paint: 0, pixels: use.times * 256 * tintOperator * operators }
    if (!mesh || !isMesh(dictionary)) return nothing()
    const bits = ['BitsPerFlag', 'BitsPerCoordinate', 'BitsPerComponent'].map((key) => dictionary.get(key))
    const [flag, coordinate, component] = bits.map((bit) => (typeof bit === 'number' && bit > 0 ? bit : 1))
    const vertexBits = (type === 5 ? 0 : flag!) + 2 * coordinate! + component!
    const vertices = ((this.dataSizes.get(`${mesh.object} ${mesh.generation}`) ?? 0) * 8) / vertexBits
    // A lattice's vertex is two triangles; each may cover the shading's whole area.
    return { units: 0, boxes: meshVertex * vertices * operators * covered, paint: 0, pixels: 0 }
  }

  /** Operators a function runs for each value: a PostScript function's, 1 for others, a stitching's costliest. */
  private functionOperators(value: PdfValue | undefined, depth: number): number {
    if (depth > MAX_NESTING) return 0
    const resolved = this.resolve(value)
    if (Array.isArray(resolved))
      return resolved.reduce<number>((sum, item) => sum + this.functionOperators(item, depth + 1), 0)
    const stream = this.streamOf(value)
    const dictionary = stream?.dictionary ?? (resolved instanceof Map ? resolved : undefined)
    const type = dictionary?.get('FunctionType')
    if (type === 4 && stream) return this.dataSizes.get(`${stream.object} ${stream.generation}`) ?? 0
    if (type === 3) {
      let most = 1
      for (const item of asArray(this.resolve(dictionary?.get('Functions'))))
        most = Math.max(most, this.functionOperators(item, depth + 1))
      return most
    }
    return dictionary ? 1 : 0
  }

  /**
   * What an image's colour space costs, in pixels of an opaque fill: a DeviceN space of two inks or more converts
   * each pixel through its tint transform (`perPixel`); a Separation or one-ink DeviceN space makes a palette of 256
   * (`once`).
   */
  private tintCost(space: PdfValue | undefined, resources: Resources): { perPixel: number; once: number } {
    let resolved = this.resolve(space)
    const name = nameOf(resolved)
    if (name !== undefined) resolved = this.resolve(this.dictionary(resources?.get('ColorSpace'))?.get(name))
    const family = Array.isArray(resolved) ? nameOf(this.resolve(resolved[0])) : undefined
    if (!Array.isArray(resolved) || (family !== 'DeviceN' && family !== 'Separation')) return { perPixel: 0, once: 0 }
    const operators = this.functionOperators(resolved[3], 0)
    const { deviceNPixel, tintOperator } = FUNCTION_WEIGHTS
    const inks = family === 'DeviceN' ? asArray(this.resolve(resolved[1])).length : 1
    return inks > 1
      ? { perPixel: deviceNPixel + tintOperator * operators, once: 0 }
      : { perPixel: 0, once: 256 * tintOperator * operators }
  }

  private idOf(resources: object): number {
    let id = this.resourceIds.get(resources)
    if (id === undefined) {
      id = ++this.lastResourceId
      this.resourceIds.set(resources, id)
    }
    return id
  }

  /** What one resource adds for its uses (`kind` and `use` from the summary), in the drawing stream's terms. */
  private entry(kind: string, value: PdfValue | undefined, use: Use, resources: Resources, clip: number): Drawing {
    const { times, scale } = use
    if (kind === 'X') {
      const form = this.streamOf(value)
      if (!form) return nothing()
      // An image covers its unit square (the scales of the `Do`s that draw it); a PostScript function that makes its
      // colours (DeviceN, Separation) runs for each of its pixels.
      if (nameOf(form.dictionary.get('Subtype')) !== 'Form') {
        const { dictionary } = form
        const [width, height] = [dictionary.get('Width'), dictionary.get('Height')]
        const pixels = typeof width === 'number' && typeof height === 'number' ? Math.abs(width * height) : 0
        const tint = this.tintCost(dictionary.get('ColorSpace') ?? dictionary.get('CS'), resources)
        return { units: 0, boxes: 0, paint: scale, pixels: times * (pixels * tint.perPixel + tint.once) }
      }
      // PDFium builds a form's objects for each reference, and the walk sees them: its units and the boxes it
      // holds, mapped onto the caller's by the matrices it is drawn with (each drawing at most the caller's box).
      const drawn = this.form(form, resources)
      const mapped = scale * matrixScale(this.resolve(form.dictionary.get('Matrix')))
      const box = boxArea(this.resolve(form.dictionary.get('BBox')))
      const ratio = box !== undefined && clip > 0 ? (mapped * box) / clip : Number.POSITIVE_INFINITY
      return {
        units: times * drawn.units,
        boxes: drawn.boxes * Math.min(times, ratio),
        paint: mapped * clippedPaint(drawn, box),
        pixels: times * drawn.pixels,
      }
    }
    if (kind === 'S') return this.shading(value, use, clip)
    if (kind === 'P' && !this.streamOf(value)) {
      // A shading pattern paints its shading within each object painted with it.
      return this.shading(this.dictionary(value)?.get('Shading'), use, clip)
    }
    if (kind === 'G' || kind === 'P') {
      // A soft mask's group is drawn for each object drawn under it, in the space of its `gs`; a tiling pattern's
      // cell for each object painted with it, in the stream's own space. Both clipped to their /BBox.
      const container =
        kind === 'G'
          ? this.streamOf(this.dictionary(this.dictionary(value)?.get('SMask'))?.get('G'))
          : this.streamOf(value)
      if (!container) return nothing()
      return this.drawnUnseen(this.form(container, resources), container.dictionary, use, clip)
    }
    // A Type 3 glyph runs its procedure for each glyph (PDFium caches neither `d0` nor `d1` glyphs), in glyph space:
    // its font matrix, then the glyph's em square at its size.
    const font = this.dictionary(value)
    if (nameOf(font?.get('Subtype')) !== 'Type3') return nothing()
    const fontResources = this.dictionary(font?.get('Resources')) ?? resources
    const procedures = nothing()
    let looked = 0
    for (const procedure of this.dictionary(font?.get('CharProcs'))?.values() ?? []) {
      if (++looked > MAX_GLYPH_PROCEDURES) break
      const stream = this.streamOf(procedure)
      if (stream) mostOf(procedures, this.stream(stream, fontResources, Number.NaN))
    }
    return this.drawnUnseen(procedures, font!, use, clip)
  }

  /**
   * What a drawing the walk does not see adds for `use`, drawn at area scales adding up to its scale (the
   * container's /Matrix on top): its units each time; its paint, clipped to its /BBox and to the objects it is drawn
   * for (each of its units covering at most the object), in boxes of the caller's `clip`, each unit at most one box.
   */
  private drawnUnseen(drawn: Drawing, container: ReadonlyMap<string, PdfValue>, use: Use, clip: number): Drawing {
    const matrix = container.get('Matrix') ?? container.get('FontMatrix')
    const mapped = use.scale * matrixScale(this.resolve(matrix))
    const paint = Math.min(
      mapped * clippedPaint(drawn, boxArea(this.resolve(container.get('BBox')))),
      drawn.units * use.within,
    )
    const most = use.times * drawn.units
    return {
      units: most,
      boxes: clip > 0 ? Math.min(most, paint / clip) : most,
      paint,
      pixels: use.times * drawn.pixels,
    }
  }
}

/**
 * What PDFium spends on functions and meshes, in pixels of an opaque fill (1.64 ns each, the walk's unit), measured
 * at 2.1 MP (docs/platform-limits.md, "The content count") and rounded up. A Separation image's tint makes a palette
 * of 256 colours; an axial or radial shading samples its function 256 times.
 */
const FUNCTION_WEIGHTS = {
  /** A pixel of a function shading, whatever its function (53 ns), and each PostScript operator on it (2.1 ns). */
  shadingPixel: 33,
  shadingOperator: 2,
  /** A pixel of an image in a DeviceN space of two inks or more (356 ns), and each operator of its tint (11 ns). */
  deviceNPixel: 240,
  tintOperator: 8,
  /** A vertex of a mesh: each page-sized triangle costs 1.5 areas. */
  meshVertex: 2,
} as const

/** The resource dictionary each kind of use names. */
const CATEGORIES = { X: 'XObject', G: 'ExtGState', P: 'Pattern', F: 'Font', S: 'Shading' } as const

/**
 * What a page or a stream draws: objects and glyphs (units); areas no walk of PDFium's objects sees, in boxes of the
 * area it is clipped to (boxes); the area all it draws covers, in its own space (paint).
 */
export interface Drawing {
  units: number
  boxes: number
  paint: number
  /**
   * Work that is neither objects nor area, in pixels of an opaque fill: a PostScript function's operators for each
   * pixel of an image whose colours it makes, or for each of the 256 samples of an axial or radial shading.
   */
  pixels: number
}

const nothing = (): Drawing => ({ units: 0, boxes: 0, paint: 0, pixels: 0 })

function addTo(total: Drawing, drawing: Drawing): void {
  total.units += drawing.units
  total.boxes += drawing.boxes
  total.paint += drawing.paint
  total.pixels += drawing.pixels
}

function mostOf(most: Drawing, drawing: Drawing): void {
  most.units = Math.max(most.units, drawing.units)
  most.boxes = Math.max(most.boxes, drawing.boxes)
  most.paint = Math.max(most.paint, drawing.paint)
  most.pixels = Math.max(most.pixels, drawing.pixels)
}

/** A drawing's paint within its /BBox: each of its units covers the box at most. */
const clippedPaint = (drawn: Drawing, box: number | undefined) =>
  box === undefined ? drawn.paint : Math.min(drawn.paint, drawn.units * box)

/** The area scale of a /Matrix (1 without one). */
function matrixScale(matrix: PdfValue | undefined): number {
  const numbers = Array.isArray(matrix) ? matrix.filter((item): item is number => typeof item === 'number') : []
  return numbers.length === 6 ? areaScale(numbers) : 1
}

/** US Letter's area in points: a page without a box is drawn on it. */
const LETTER_AREA = 612 * 792

/** A rectangle's area, or undefined when it is not four numbers. */
function boxArea(value: PdfValue | undefined): number | undefined {
  if (!Array.isArray(value) || value.length !== 4 || !value.every((item) => typeof item === 'number')) return undefined
  const [x0, y0, x1, y1] = value as number[]
  const area = Math.abs((x1! - x0!) * (y1! - y0!))
  return area > 0 && Number.isFinite(area) ? area : undefined
}
