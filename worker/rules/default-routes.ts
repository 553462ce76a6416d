// The resource routes of the shipped models (worker/models/resources.ts), compiled once per isolate by whichever
// route group first needs them.
import { resources } from '../models/resources'
import { compileResources } from './compile'

export const defaultResourceRoutes = compileResources(resources)

/** The first path segments the resource routes take: `users` for /users, /users/:id and /users/:id/posts. */
export const resourceSegments = new Set(defaultResourceRoutes.map((route) => route.collectionPath.split('/')[1]!))
