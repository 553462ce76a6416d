// Writes guarded by a condition inside one D1 batch, so that a chain of dependent writes costs one round trip. A batch
// runs its statements in order in one transaction (D1's batch: "statements are executed sequentially,
// non-concurrently"), and SQLite's changes() is the number of rows the previous INSERT, UPDATE or DELETE changed: a
// statement guarded by it runs only when the one before it changed a row, whatever ran concurrently.
import { and, eq, getTableColumns, is, SQL, type SQLWrapper, sql } from 'drizzle-orm'
import type { SQLiteTable } from 'drizzle-orm/sqlite-core'
import type { Database } from './client'
import { users } from './schema'

/** True in a WHERE clause when the batch's previous write changed a row. */
export const previousChanged: SQL = sql`changes() > 0`

/**
 * INSERT of one row of a user's that happens only while the user exists and `condition` holds. By default the
 * condition is that the batch's previous write changed a row. The SQL is
 * `insert … select <the row> from users where id = ? and <condition>` (`userId` may be a subquery): drizzle batches
 * no raw statement with parameters, so the row is selected from the user's.
 */
export function insertForUser<T extends SQLiteTable>(
  db: Database,
  table: T,
  row: T['$inferInsert'],
  userId: string | SQLWrapper,
  condition: SQL = previousChanged,
) {
  const values = row as Record<string, unknown>
  // drizzle's insert … select takes every column, in the table's order: a column not given gets its default, or null.
  const fields = Object.fromEntries(
    Object.entries(getTableColumns(table)).map(([key, column]) => {
      const value = values[key] !== undefined ? values[key] : (column.defaultFn?.() ?? column.default ?? null)
      return [
        key,
        (is(value, SQL) ? value : sql`${value === null ? null : column.mapToDriverValue(value)}`).as(column.name),
      ]
    }),
  )
  // The selected fields are the table's own columns, built above.
  return db.insert(table).select(
    db
      .select(fields)
      .from(users)
      .where(and(eq(users.id, userId), condition)) as any,
  )
}
