// Every field an error answer carries beside `{ message, code }` is declared in the OpenAPI document's Error schema
// (ERROR_DETAILS, worker/api.ts), so typed clients see it. This reads every worker/ source, as the cycle and
// folder-order tests do, and collects the fields the Worker sets: the keys of each ApiError's `details: { … }`, of a
// zod refinement's `params` that names its error code, and of an error answer built by `Response.json({ …, code })`.
// A detail set but not declared fails here (the compiler refuses it too: ApiError's `details` has the declared type);
// so does a declared detail nothing sets any more.
import { describe, expect, it } from 'vitest'
import { ERROR_DETAILS } from '../worker/api'
import { sources } from './support/import-graph'

const OPENERS = '([{'
const CLOSERS = ')]}'

/** The index just past the string or template literal that opens at `start` (template placeholders included). */
function skipLiteral(source: string, start: number): number {
  const quote = source[start]!
  let at = start + 1
  while (at < source.length && source[at] !== quote) {
    if (source[at] === '\\') at += 2
    else if (quote === '`' && source.startsWith('${', at)) at = expressionEnd(source, at + 2, true) + 1
    else at += 1
  }
  return at + 1
}

/**
 * Where the expression that starts at `start` ends: at a comma, or the bracket that closes the one it is in (only the
 * bracket when `throughCommas`).
 */
function expressionEnd(source: string, start: number, throughCommas = false): number {
  let depth = 0
  for (let at = start; at < source.length; ) {
    const char = source[at]!
    if (char === "'" || char === '"' || char === '`') {
      at = skipLiteral(source, at)
      continue
    }
    if (OPENERS.includes(char)) depth += 1
    else if (CLOSERS.includes(char)) {
      if (depth === 0) return at
      depth -= 1
    } else if (char === ',' && depth === 0 && !throughCommas) return at
    at += 1
  }
  return source.length
}

/**
 * The keys of the object literals an expression may evaluate to (`{ a, b: 1 }`, `x ? { a } : {}`, `{ ...rest, a }`),
 * not of the objects nested in them (an issue's `path` inside `issues: [{ … }]`).
 */
function objectKeys(expression: string): string[] {
  const keys: string[] = []
  let depth = 0
  for (let at = 0; at < expression.length; ) {
    const char = expression[at]!
    if (char === "'" || char === '"' || char === '`') {
      at = skipLiteral(expression, at)
      continue
    }
    if (char === '{' && depth === 0) {
      const close = expressionEnd(expression, at + 1, true)
      for (let entry = at + 1; entry < close; ) {
        const end = expressionEnd(expression, entry)
        const key = /^\s*([A-Za-z_$][\w$]*)\s*(?::|$)/.exec(expression.slice(entry, Math.min(end, close)))?.[1]
        if (key) keys.push(key)
        entry = end + 1
      }
      at = close + 1
      continue
    }
    if (OPENERS.includes(char)) depth += 1
    else if (CLOSERS.includes(char)) depth -= 1
    at += 1
  }
  return keys
}

/** Each field the Worker sets on an error answer, with the files that set it. */
function detailsSet(): Map<string, Set<string>> {
  const found = new Map<string, Set<string>>()
  const add = (key: string, file: string) => found.set(key, (found.get(key) ?? new Set()).add(file))
  for (const [file, source] of Object.entries(sources)) {
    if (!file.startsWith('worker/') || file.endsWith('.d.ts')) continue
    for (const match of source.matchAll(/\bdetails:\s*/g)) {
      const start = match.index + match[0].length
      for (const key of objectKeys(source.slice(start, expressionEnd(source, start)))) add(key, file)
    }
    for (const match of source.matchAll(/\bparams:\s*(?=\{\s*errorCode\b)/g)) {
      const start = match.index + match[0].length
      for (const key of objectKeys(source.slice(start, expressionEnd(source, start))))
        if (key !== 'errorCode') add(key, file)
    }
    for (const match of source.matchAll(/\bResponse\.json\(\s*(?=\{)/g)) {
      const start = match.index + match[0].length
      const keys = objectKeys(source.slice(start, expressionEnd(source, start)))
      if (keys.includes('code')) for (const key of keys) if (key !== 'message' && key !== 'code') add(key, file)
    }
  }
  return found
}

describe('the details an error carries', () => {
  const set = detailsSet()
  const declared = Object.keys(ERROR_DETAILS)

  it('are found where the Worker sets them, in every form it sets them', () => {
    expect([...(set.get('retry_after') ?? [])]).toContain('worker/auth/rate-limit.ts') // details: { retry_after }
    expect([...(set.get('offset') ?? [])]).toContain('worker/files/tus.ts') // details: x ? {} : { offset }
    expect([...(set.get('issues') ?? [])]).toContain('worker/api.ts') // details: { ...details, issues }
    expect([...(set.get('character') ?? [])]).toContain('worker/models/values.ts') // params: { errorCode, character }
    expect([...(set.get('request_id') ?? [])]).toEqual(['worker/errors.ts']) // Response.json({ …, request_id })
    // An issue's own fields (`issues: [{ path, message, code }]`) are not details.
    expect(set.has('path')).toBe(false)
  })

  it('are each declared in the Error schema (ERROR_DETAILS, worker/api.ts)', () => {
    const undeclared = [...set].filter(([key]) => !declared.includes(key)).map(([key, files]) => [key, [...files]])
    expect(undeclared).toEqual([])
  })

  it('leave no declared detail that nothing sets', () => {
    expect(declared.filter((key) => !set.has(key))).toEqual([])
  })

  it('each say in their description which errors carry them', () => {
    for (const [key, schema] of Object.entries(ERROR_DETAILS)) {
      expect(schema.description, key).toMatch(/`[A-Z]+(_[A-Z]+)*`/)
    }
  })
})
