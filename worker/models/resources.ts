// The models and resource routes of this deployment: edit this file to extend the built-in Users model (its
// `values` map: [type, letters, default]), to add models, or to change who may do what. Everything here is
// parsed and checked when the Worker starts (compile.ts): a typo stops it with a message naming the route.
import { buildValueSchemas, validateValuesMap, type ValuesMap } from './values'

export interface ModelDefinition {
  readonly values: ValuesMap
}

/** One operation of a route: who may do it, and (create/update) fields set by the server. */
export interface OperationDefinition {
  /** true = any valid token; false or a missing entry = nobody; a string = a rule (see docs/rules.md). */
  readonly allow: boolean | string
  /** field → expression (`@user._id`, `@_user.<field>` or a literal); overrides what the client sent. */
  readonly inject?: Readonly<Record<string, string>>
}

export interface RouteDefinition {
  /** `path(Model)`: `/users(Users)` for a collection, `/users/posts(Posts)` for the Posts of one user. */
  readonly _id: string
  readonly _create?: OperationDefinition
  readonly _read?: OperationDefinition
  readonly _readAll?: OperationDefinition
  readonly _update?: OperationDefinition
  readonly _delete?: OperationDefinition
  /** Users only: who may set `role`, `email` and `email_verified` (on create and update). Missing = nobody. */
  readonly _privileged?: Pick<OperationDefinition, 'allow'>
}

export interface ResourceConfig {
  readonly models: Readonly<Record<string, ModelDefinition>>
  readonly routes: readonly RouteDefinition[]
}

export const models = {
  Users: {
    values: {
      avatar_url: ['Url', 'cru'],
      preferences: ['Object', 'cru', {}],
    },
  },
} as const satisfies Record<string, ModelDefinition>

for (const [name, model] of Object.entries(models)) validateValuesMap(name, model.values)

export const userValueSchemas = buildValueSchemas(models.Users.values)

const ADMIN = '@user.role=admin'
const ADMIN_OR_SELF = '@user.role=admin | @_user._id=@user._id'

/** Admins manage every account; a user reads and updates their own (name and custom `u` fields only). */
export const usersRoute: RouteDefinition = {
  _id: '/users(Users)',
  _create: { allow: ADMIN },
  _readAll: { allow: ADMIN },
  _read: { allow: ADMIN_OR_SELF },
  _update: { allow: ADMIN_OR_SELF },
  _delete: { allow: ADMIN },
  _privileged: { allow: ADMIN },
}

export const resources: ResourceConfig = {
  models,
  routes: [usersRoute],
}

/**
 * An example of a custom model and a relation route, enabled in the tests. To enable it in a deployment, add
 * `Posts` to `models` and `postsRoute` to `routes` above. `/users/posts(Posts)` serves the Posts of one user at
 * /users/:id/posts (their `user_id` is that user) and /users/:id/posts/:postId.
 */
export const postsModel: ModelDefinition = {
  values: {
    title: ['String', 'cru'],
    body: ['String', 'cru', ''],
    published: ['Boolean', 'cru', false],
    user_id: ['String', 'r'],
    author_email: ['String', 'r'],
  },
}

export const postsRoute: RouteDefinition = {
  _id: '/users/posts(Posts)',
  // Only under your own id (the foreign key comes from the URL), or an admin anywhere.
  _create: { allow: '@_user.user_id=@user._id | @user.role=admin', inject: { author_email: '@user.email' } },
  // Published posts are readable by everyone signed in; drafts only by their author and admins.
  _readAll: { allow: '@_user.published=true | @_user.user_id=@user._id | @user.role=admin' },
  _read: { allow: '@_user.published=true | @_user.user_id=@user._id | @user.role=admin' },
  _update: { allow: '@_user.user_id=@user._id | @user.role=admin' },
  _delete: { allow: '@_user.user_id=@user._id | @user.role=admin' },
}

export const resourcesWithPosts: ResourceConfig = {
  models: { ...models, Posts: postsModel },
  routes: [usersRoute, postsRoute],
}
