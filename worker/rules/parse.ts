// The permission-rule language, parsed into a tree (never evaluated as code):
//   rule       := or
//   or         := and ('|' and)*
//   and        := primary ('&' primary)*
//   primary    := '(' rule ')' | comparison | 'true' | 'false'
//   comparison := operand ('=' | '!=') operand
//   operand    := @user.<_id|email|role|email_verified> | @_user.<field> | 'text' | "text" | number | true | false | word
// `&` binds tighter than `|`. `@user` is the caller; `@_user` is the stored resource the rule is about.

export const USER_FIELDS = ['_id', 'email', 'role', 'email_verified'] as const
export type UserField = (typeof USER_FIELDS)[number]

export type Operand =
  | { kind: 'user'; field: UserField }
  | { kind: 'resource'; field: string }
  | { kind: 'literal'; value: string | number | boolean }

export type Rule =
  | { kind: 'const'; value: boolean }
  | { kind: 'compare'; op: '=' | '!='; left: Operand; right: Operand }
  | { kind: 'and' | 'or'; items: Rule[] }

export class RuleSyntaxError extends Error {
  override readonly name = 'RuleSyntaxError'
}

type Token =
  | { type: 'op'; value: '(' | ')' | '&' | '|' | '=' | '!=' }
  | { type: 'word'; value: string; quoted: boolean }

function tokenize(source: string): Token[] {
  const tokens: Token[] = []
  let i = 0
  while (i < source.length) {
    const char = source[i]!
    if (/\s/.test(char)) {
      i++
    } else if (source.startsWith('!=', i)) {
      tokens.push({ type: 'op', value: '!=' })
      i += 2
    } else if ('()&|='.includes(char)) {
      tokens.push({ type: 'op', value: char as '(' })
      i++
    } else if (char === '"' || char === "'") {
      const end = source.indexOf(char, i + 1)
      if (end < 0) throw new RuleSyntaxError(`unterminated string at position ${i}`)
      tokens.push({ type: 'word', value: source.slice(i + 1, end), quoted: true })
      i = end + 1
    } else {
      const match = /^[^\s()&|=!'"]+/.exec(source.slice(i))
      if (!match) throw new RuleSyntaxError(`unexpected "${char}" at position ${i}`)
      tokens.push({ type: 'word', value: match[0], quoted: false })
      i += match[0].length
    }
  }
  return tokens
}

export function parseOperand(text: string, quoted = false): Operand {
  if (quoted) return { kind: 'literal', value: text }
  if (text.startsWith('@user.')) {
    const field = text.slice('@user.'.length)
    if (!(USER_FIELDS as readonly string[]).includes(field)) {
      throw new RuleSyntaxError(
        `unknown caller field "${text}" (known: ${USER_FIELDS.map((f) => `@user.${f}`).join(', ')})`,
      )
    }
    return { kind: 'user', field: field as UserField }
  }
  if (text.startsWith('@_user.')) {
    const field = text.slice('@_user.'.length)
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(field)) throw new RuleSyntaxError(`bad resource field "${text}"`)
    return { kind: 'resource', field }
  }
  if (text.startsWith('@'))
    throw new RuleSyntaxError(`unknown reference "${text}" (use @user.<field> or @_user.<field>)`)
  if (text === 'true' || text === 'false') return { kind: 'literal', value: text === 'true' }
  if (/^-?\d+(\.\d+)?$/.test(text)) return { kind: 'literal', value: Number(text) }
  return { kind: 'literal', value: text }
}

export function parseRule(source: string | boolean): Rule {
  if (typeof source === 'boolean') return { kind: 'const', value: source }
  const tokens = tokenize(source)
  let position = 0
  const peek = () => tokens[position]
  const isOp = (value: string) => {
    const token = peek()
    return token?.type === 'op' && token.value === value
  }

  function parseOr(): Rule {
    const items = [parseAnd()]
    while (isOp('|')) {
      position++
      items.push(parseAnd())
    }
    return items.length === 1 ? items[0]! : { kind: 'or', items }
  }

  function parseAnd(): Rule {
    const items = [parsePrimary()]
    while (isOp('&')) {
      position++
      items.push(parsePrimary())
    }
    return items.length === 1 ? items[0]! : { kind: 'and', items }
  }

  function parsePrimary(): Rule {
    const token = peek()
    if (!token) throw new RuleSyntaxError('unexpected end of rule')
    if (token.type === 'op' && token.value === '(') {
      position++
      const inner = parseOr()
      if (!isOp(')')) throw new RuleSyntaxError('missing ")"')
      position++
      return inner
    }
    if (token.type !== 'word') throw new RuleSyntaxError(`unexpected "${token.value}"`)
    position++
    const next = peek()
    if (next?.type === 'op' && (next.value === '=' || next.value === '!=')) {
      position++
      const right = peek()
      if (!right || right.type !== 'word')
        throw new RuleSyntaxError(`missing right side of "${token.value}${next.value}"`)
      position++
      return {
        kind: 'compare',
        op: next.value,
        left: parseOperand(token.value, token.quoted),
        right: parseOperand(right.value, right.quoted),
      }
    }
    if (!token.quoted && (token.value === 'true' || token.value === 'false'))
      return { kind: 'const', value: token.value === 'true' }
    throw new RuleSyntaxError(`"${token.value}" is not a comparison (expected <left>=<right> or <left>!=<right>)`)
  }

  const rule = parseOr()
  if (position < tokens.length) throw new RuleSyntaxError(`unexpected "${tokens[position]!.value}" after the rule`)
  return rule
}
