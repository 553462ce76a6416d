// The error table of docs/api-and-client.md is the code table of worker/errors.ts (better-auth's and Unkey's way: one table that
// the handlers, the OpenAPI document and the guide read), and its list of details is the Error schema's (ERROR_DETAILS,
// worker/api.ts). On a mismatch the expected table is printed.
import { z } from '@hono/zod-openapi'
import { describe, expect, it } from 'vitest'
import guide from '../../docs/api-and-client.md?raw'
import { ERROR_DETAILS } from '../../worker/api'
import { ERRORS } from '../../worker/errors'

function errorTableMarkdown(): string {
  const rows = Object.entries(ERRORS).map(([code, entry]) => `| \`${code}\` | ${entry.status} | ${entry.message} |`)
  return ['| Code | Status | Message |', '|---|---|---|', ...rows].join('\n')
}

interface JsonSchema {
  type?: string
  items?: JsonSchema
  properties?: Record<string, unknown>
}

/** A detail's type as a reader of the guide writes it: `integer`, `string[]`, `{ path, message, code }[]`. */
function typeName(schema: JsonSchema): string {
  if (schema.type === 'array') return `${typeName(schema.items ?? {})}[]`
  if (schema.type === 'object') return `{ ${Object.keys(schema.properties ?? {}).join(', ')} }`
  return schema.type ?? 'unknown'
}

function detailsTableMarkdown(): string {
  const rows = Object.entries(ERROR_DETAILS).map(
    ([field, schema]) =>
      `| \`${field}\` | \`${typeName(z.toJSONSchema(schema) as JsonSchema)}\` | ${schema.description} |`,
  )
  return ['| Field | Type | Carried by, and what it means |', '|---|---|---|', ...rows].join('\n')
}

const between = (name: string) =>
  new RegExp(`<!-- ${name}:start -->\\n([\\s\\S]*?)\\n<!-- ${name}:end -->`).exec(guide)?.[1]

describe('the error table', () => {
  it('is in docs/api-and-client.md between the errors markers, row for row', () => {
    expect(between('errors')).toBe(errorTableMarkdown())
  })

  it('names each code in UPPER_SNAKE, with a 4xx or 5xx status and a lower-case public message', () => {
    for (const [code, entry] of Object.entries(ERRORS)) {
      expect(code).toMatch(/^[A-Z]+(_[A-Z]+)*$/)
      expect(entry.status).toBeGreaterThanOrEqual(400)
      expect(entry.message).toMatch(/^[a-z]/)
    }
  })
})

describe('the error details table', () => {
  it('is in docs/api-and-client.md between the error-details markers: the Error schema, field for field', () => {
    expect(between('error-details')).toBe(detailsTableMarkdown())
  })

  it('names only codes of the error table in its descriptions', () => {
    const named = Object.values(ERROR_DETAILS).flatMap((schema) =>
      [...(schema.description ?? '').matchAll(/`([A-Z]+(?:_[A-Z]+)+)`/g)].map((match) => match[1]!),
    )
    expect(named.length).toBeGreaterThan(0)
    expect(named.filter((code) => !(code in ERRORS))).toEqual([])
  })
})
