// Names people read (account names, file names): no Unicode format characters (general category Cf), which are
// invisible and can make a name show as something else (U+202E RIGHT-TO-LEFT OVERRIDE shows "\u202Egnp.exe" as
// "exe.png"). The one exception: U+200C ZERO WIDTH NON-JOINER and U+200D ZERO WIDTH JOINER between two visible
// characters, which Persian and Indic words and emoji sequences (👩‍💻) need; at either end they only hide.
import { ApiError } from './errors'

const FORMAT = /\p{Cf}/gu
const JOINERS = new Set(['\u200c', '\u200d'])
/** What may stand beside a joiner: anything visible (not a format character, not white space). */
const VISIBLE = /^[^\p{Cf}\s]$/u

/** The first format character the name may not hold, as `U+XXXX`, or undefined (the name is judged trimmed). */
export function forbiddenFormatCharacter(raw: string): string | undefined {
  const name = raw.trim()
  for (const match of name.matchAll(FORMAT)) {
    const char = match[0]
    const at = match.index
    if (JOINERS.has(char) && at > 0) {
      // Neighbours as code points: a surrogate pair (an emoji) is one character.
      const before = Array.from(name.slice(0, at)).at(-1) ?? ''
      const after = Array.from(name.slice(at + 1, at + 3))[0] ?? ''
      if (VISIBLE.test(before) && VISIBLE.test(after)) continue
    }
    return `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`
  }
  return undefined
}

export function formatCharacterMessage(field: string, codePoint: string): string {
  return `${field} may not contain ${codePoint}: invisible format characters (bidi controls, zero-width characters at the ends, …) are refused; a zero-width joiner or non-joiner may stand between two visible characters`
}

/** 400 NAME_FORMAT_CHARACTER for a name with a format character it may not hold. */
export function checkName(field: string, name: string): void {
  const codePoint = forbiddenFormatCharacter(name)
  if (codePoint)
    throw new ApiError('NAME_FORMAT_CHARACTER', {
      message: formatCharacterMessage(field, codePoint),
      details: { character: codePoint },
    })
}
