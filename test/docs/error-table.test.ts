// The error table of docs/api-and-client.md is the code table of worker/errors.ts (better-auth's and Unkey's way: one table that
// the handlers, the OpenAPI document and the guide read). On a mismatch the expected table is printed.
import { describe, expect, it } from 'vitest'
import guide from '../../docs/api-and-client.md?raw'
import { ERRORS } from '../../worker/errors'

function errorTableMarkdown(): string {
  const rows = Object.entries(ERRORS).map(([code, entry]) => `| \`${code}\` | ${entry.status} | ${entry.message} |`)
  return ['| Code | Status | Message |', '|---|---|---|', ...rows].join('\n')
}

describe('the error table', () => {
  it('is in docs/api-and-client.md between the errors markers, row for row', () => {
    const between = /<!-- errors:start -->\n([\s\S]*?)\n<!-- errors:end -->/.exec(guide)?.[1]
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
