// The README's error table is the code table of worker/errors.ts (better-auth's and Unkey's way: one table that
// the handlers, the OpenAPI document and the README read). On a mismatch the expected table is printed.
import { describe, expect, it } from 'vitest'
import readme from '../../README.md?raw'
import { ERRORS } from '../../worker/errors'

function errorTableMarkdown(): string {
  const rows = Object.entries(ERRORS).map(([code, entry]) => `| \`${code}\` | ${entry.status} | ${entry.message} |`)
  return ['| Code | Status | Message |', '|---|---|---|', ...rows].join('\n')
}

describe('the error table', () => {
  it('is in the README between the errors markers, row for row', () => {
    const between = /<!-- errors:start -->\n([\s\S]*?)\n<!-- errors:end -->/.exec(readme)?.[1]
    expect(between).toBe(errorTableMarkdown())
  })

  it('names each code in UPPER_SNAKE, with a 4xx or 5xx status and a lower-case public message', () => {
    for (const [code, entry] of Object.entries(ERRORS)) {
      expect(code).toMatch(/^[A-Z]+(_[A-Z]+)*$/)
      expect(entry.status).toBeGreaterThanOrEqual(400)
      expect(entry.message).toMatch(/^[a-z]/)
    }
  })
})
