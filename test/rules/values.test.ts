import { describe, expect, it } from 'vitest'
import {
  buildValueSchemas,
  readableValues,
  validateValuesMap,
  withDefaults,
  type ValuesMap,
} from '../../worker/models/values'

const values: ValuesMap = {
  bio: ['String', 'cru', ''],
  settings: ['Object', 'cru'],
  age: ['Number', 'cr'],
  newsletter: ['Boolean', 'ru', false],
  birthday: ['Date', 'cru'],
  internal_note: ['String', 'c'],
  score: ['Number', 'r', 0],
}

describe('values map', () => {
  const schemas = buildValueSchemas(values)

  it.each([
    [{ bio: 'hi', age: 3, birthday: '2000-01-02' }, true],
    [{ internal_note: 'x' }, true],
    [{ newsletter: true }, false], // no c
    [{ score: 5 }, false], // no c
    [{ age: 'three' }, false],
    [{ settings: 'not an object' }, false],
    [{ birthday: 'yesterday' }, false],
    [{ role: 'admin' }, false],
  ])('create accepts %j: %s', (input, ok) => {
    expect(schemas.create.safeParse(input).success).toBe(ok)
  })

  it.each([
    [{ bio: 'x', newsletter: true, settings: { a: 1 } }, true],
    [{ age: 4 }, false], // no u
    [{ internal_note: 'x' }, false],
  ])('update accepts %j: %s', (input, ok) => {
    expect(schemas.update.safeParse(input).success).toBe(ok)
  })

  it('applies defaults, with {} for an Object without one', () => {
    expect(withDefaults(values, { age: 5 })).toEqual({ bio: '', settings: {}, age: 5, newsletter: false, score: 0 })
  })

  it('returns only fields with r', () => {
    const stored = { bio: 'b', internal_note: 'secret', score: 2, age: 1 }
    expect(readableValues(schemas, stored)).toEqual({ bio: 'b', score: 2, age: 1 })
  })

  it.each([
    [{ x: ['Strng', 'cru'] }, 'unknown type'],
    [{ x: ['String', 'crud'] }, 'letters'],
    [{ x: ['Number', 'r', 'zero'] }, 'default'],
  ])('refuses a malformed map %j', (map, message) => {
    expect(() => validateValuesMap('Users', map as unknown as ValuesMap)).toThrow(message)
  })
})
