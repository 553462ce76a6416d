import { describe, expect, it } from 'vitest'
import { parseRule, RuleSyntaxError } from '../../worker/rules/parse'

describe('rule parser', () => {
  it.each([
    [true, { kind: 'const', value: true }],
    [false, { kind: 'const', value: false }],
    ['true', { kind: 'const', value: true }],
    [
      '@user.role=admin',
      { kind: 'compare', op: '=', left: { kind: 'user', field: 'role' }, right: { kind: 'literal', value: 'admin' } },
    ],
    [
      '@user.email_verified=true',
      {
        kind: 'compare',
        op: '=',
        left: { kind: 'user', field: 'email_verified' },
        right: { kind: 'literal', value: true },
      },
    ],
    [
      '@_user.user_id != @user._id',
      {
        kind: 'compare',
        op: '!=',
        left: { kind: 'resource', field: 'user_id' },
        right: { kind: 'user', field: '_id' },
      },
    ],
    [
      '@_user.stars=5',
      { kind: 'compare', op: '=', left: { kind: 'resource', field: 'stars' }, right: { kind: 'literal', value: 5 } },
    ],
    [
      '@_user.title="a b"',
      {
        kind: 'compare',
        op: '=',
        left: { kind: 'resource', field: 'title' },
        right: { kind: 'literal', value: 'a b' },
      },
    ],
    [
      "@_user.code='true'",
      {
        kind: 'compare',
        op: '=',
        left: { kind: 'resource', field: 'code' },
        right: { kind: 'literal', value: 'true' },
      },
    ],
  ])('parses %j', (source, tree) => {
    expect(parseRule(source)).toEqual(tree)
  })

  it('binds & tighter than |', () => {
    const rule = parseRule('@user.role=admin | @user.role=editor & @user.email_verified=true')
    expect(rule).toMatchObject({
      kind: 'or',
      items: [{ kind: 'compare' }, { kind: 'and', items: [{ kind: 'compare' }, { kind: 'compare' }] }],
    })
  })

  it('lets parentheses group', () => {
    const rule = parseRule('(@user.role=admin | @user.role=editor) & @user.email_verified=true')
    expect(rule).toMatchObject({ kind: 'and', items: [{ kind: 'or' }, { kind: 'compare' }] })
  })

  it.each([
    ['', 'unexpected end of rule'],
    ['@user.role', 'is not a comparison'],
    ['@user.rol=admin', 'unknown caller field "@user.rol"'],
    ['@users.role=admin', 'unknown reference'],
    ['@user.role=', 'missing right side'],
    ['(@user.role=admin', 'missing ")"'],
    ['@user.role=admin)', 'unexpected ")" after the rule'],
    ['@user.role=admin &', 'unexpected end of rule'],
    ['@user.role="admin', 'unterminated string'],
    ['@user.role==admin', 'missing right side'],
    ['@_user.a-b=1', 'bad resource field'],
    ['@user.role=admin ; drop', 'unexpected ";"'],
  ])('refuses %j with a message', (source, message) => {
    expect(() => parseRule(source)).toThrow(RuleSyntaxError)
    expect(() => parseRule(source)).toThrow(message)
  })
})
