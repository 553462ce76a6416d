// The drizzle client over the D1 binding, with the schema, made once per request by the app.
import { drizzle } from 'drizzle-orm/d1'
import * as schema from './schema'

export type Database = ReturnType<typeof openDatabase>

export function openDatabase(d1: D1Database) {
  return drizzle(d1, { schema })
}
