import { describe, expect, it } from 'vitest'
import type { AuthUser } from '../../worker/auth/users'
import { evaluate, specialise } from '../../worker/rules/evaluate'
import { parseRule } from '../../worker/rules/parse'

const alice: AuthUser = {
  id: 'a1',
  email: 'alice@example.com',
  name: 'Alice',
  role: 'user',
  emailVerified: true,
  securityStamp: 's1',
}
const admin: AuthUser = {
  id: 'z9',
  email: 'root@example.com',
  name: 'Root',
  role: 'admin',
  emailVerified: false,
  securityStamp: 's9',
}

describe('rule evaluation', () => {
  it.each([
    ['@user._id=a1', alice, undefined, true],
    ['@user.email=alice@example.com', alice, undefined, true],
    ['@user.role=admin', alice, undefined, false],
    ['@user.role=admin', admin, undefined, true],
    ['@user.email_verified=true', alice, undefined, true],
    ['@user.email_verified=true', admin, undefined, false],
    ['@user.email_verified="true"', alice, undefined, false], // types are strict
    ['@_user.user_id=@user._id', alice, { user_id: 'a1' }, true],
    ['@_user.user_id=@user._id', alice, { user_id: 'b2' }, false],
    ['@_user.user_id!=@user._id', alice, { user_id: 'b2' }, true],
    ['@_user.user_id!=@user._id', alice, {}, false], // a missing field never grants
    ['@_user.user_id=@user._id', alice, { user_id: null }, false],
    ['@_user.stars=5', alice, { stars: 5 }, true],
    ['@_user.stars=5', alice, { stars: '5' }, false],
    ['@_user.meta=x', alice, { meta: { x: 1 } }, false],
    ['@user.role=admin | @_user.user_id=@user._id', alice, { user_id: 'a1' }, true],
    ['@user.role=admin & @_user.user_id=@user._id', alice, { user_id: 'a1' }, false],
    [true, alice, undefined, true],
    [false, admin, undefined, false],
  ] as const)('%j for %o on %j → %s', (source, user, resource, expected) => {
    expect(evaluate(parseRule(source), user, resource)).toBe(expected)
  })

  it('specialises caller parts into constants', () => {
    expect(specialise(parseRule('@user.role=admin | @_user.user_id=@user._id'), admin)).toEqual({
      kind: 'const',
      value: true,
    })
    expect(specialise(parseRule('@user.role=admin & @_user.user_id=@user._id'), alice)).toEqual({
      kind: 'const',
      value: false,
    })
    expect(specialise(parseRule('@user.role=admin | @_user.user_id=@user._id'), alice)).toEqual({
      kind: 'compare',
      op: '=',
      left: { kind: 'resource', field: 'user_id' },
      right: { kind: 'literal', value: 'a1' },
    })
  })
})
