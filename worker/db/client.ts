// The drizzle client over the D1 binding, with the schema: one per binding and isolate, since building it maps the
// relations of every table (a measurable share of a small request), and it keeps no per-request state.
import { drizzle } from 'drizzle-orm/d1'
import * as schema from './schema'

export type Database = ReturnType<typeof drizzle<typeof schema, D1Database>>

const clients = new WeakMap<D1Database, Database>()

export function openDatabase(d1: D1Database): Database {
  let client = clients.get(d1)
  if (!client) {
    client = drizzle(d1, { schema })
    clients.set(d1, client)
  }
  return client
}
