// worker/db/schema.ts and migrations/ describe one database twice: the queries are typed from the schema, the
// deployed D1 is built from the migrations. This applies every migration, in order, to a fresh SQLite database (D1
// is SQLite; wrangler applies the files in name order, as here) and compares what SQLite reports (PRAGMA table_info,
// index_list, index_xinfo, foreign_key_list; sqlite_master for expressions and partial indexes) with the schema's
// declarations. A column, index or key in one and not the other fails, named.
import { readdirSync, readFileSync } from 'node:fs'
import { DatabaseSync } from 'node:sqlite'
import { is, SQL } from 'drizzle-orm'
import { getTableConfig, type SQLiteColumn, SQLiteSyncDialect, SQLiteTable } from 'drizzle-orm/sqlite-core'
import { describe, expect, it } from 'vitest'
import * as schema from '../../worker/db/schema.ts'

const migrationsFolder = new URL('../../migrations/', import.meta.url)

/** A fresh database with the migrations applied in order; `before(name)` runs just before that migration. */
function migratedDatabase(before?: { name: string; run: (db: DatabaseSync) => void }): DatabaseSync {
  const db = new DatabaseSync(':memory:')
  for (const name of readdirSync(migrationsFolder)
    .filter((file) => file.endsWith('.sql'))
    .sort()) {
    if (name === before?.name) before.run(db)
    db.exec(readFileSync(new URL(name, migrationsFolder), 'utf8'))
  }
  return db
}

interface ColumnShape {
  type: string
  notNull: boolean
  primaryKey: boolean
  default: string | null
}

interface IndexShape {
  unique: boolean
  on: string[]
  where: string | null
}

interface ForeignKeyShape {
  columns: string[]
  table: string
  references: string[]
  onDelete: string
}

interface TableShape {
  columns: Record<string, ColumnShape>
  indexes: Record<string, IndexShape>
  foreignKeys: ForeignKeyShape[]
}

/** SQL text compared without quotes, case, whitespace or table qualifiers (`"jobs"."status"` is `status`). */
function normalize(text: string): string {
  return text
    .replace(/["`]/g, '')
    .replace(/\b\w+\.(?=\w)/g, '')
    .replace(/\s+/g, '')
    .toLowerCase()
}

/** A default as SQLite prints it (`'{}'`, `0`); booleans are stored as 0 and 1. */
function sqlDefault(value: unknown): string | null {
  if (value === undefined) return null
  if (is(value, SQL)) return normalize(dialect.sqlToQuery(value).sql)
  if (typeof value === 'boolean') return value ? '1' : '0'
  if (typeof value === 'number') return String(value)
  return normalize(`'${String(value).replace(/'/g, "''")}'`)
}

const dialect = new SQLiteSyncDialect()

function declared(table: SQLiteTable): TableShape {
  const config = getTableConfig(table)
  const compositeKey = new Set(config.primaryKeys.flatMap((key) => key.columns.map((column) => column.name)))
  const columns = Object.fromEntries(
    config.columns.map((column) => [
      column.name,
      {
        type: column.getSQLType().toUpperCase(),
        notNull: column.notNull || column.primary || compositeKey.has(column.name),
        primaryKey: column.primary || compositeKey.has(column.name),
        default: sqlDefault(column.default),
      },
    ]),
  )
  const indexes = Object.fromEntries(
    config.indexes.map(({ config: index }) => [
      index.name,
      {
        unique: index.unique,
        on: index.columns.map((column) =>
          is(column, SQL) ? normalize(dialect.sqlToQuery(column).sql) : (column as SQLiteColumn).name,
        ),
        where: index.where ? normalize(dialect.sqlToQuery(index.where).sql) : null,
      },
    ]),
  )
  const foreignKeys = config.foreignKeys.map((key) => {
    const reference = key.reference()
    return {
      columns: reference.columns.map((column) => column.name),
      table: getTableConfig(reference.foreignTable).name,
      references: reference.foreignColumns.map((column) => column.name),
      onDelete: (key.onDelete ?? 'no action').toUpperCase(),
    }
  })
  return { columns, indexes, foreignKeys }
}

/** The top-level comma-separated parts of an index's column list (an expression may hold commas of its own). */
function splitTopLevel(list: string): string[] {
  const parts: string[] = []
  let depth = 0
  let current = ''
  for (const char of list) {
    if (char === '(') depth++
    if (char === ')') depth--
    if (char === ',' && depth === 0) {
      parts.push(current)
      current = ''
    } else current += char
  }
  return [...parts, current].map((part) => part.trim())
}

/** The column list and the WHERE clause of a CREATE INDEX statement. */
function indexParts(statement: string): [string, string | null] {
  const open = statement.search(/\bON\s+\S+\s*\(/i) + statement.slice(statement.search(/\bON\s+\S+\s*\(/i)).indexOf('(')
  let depth = 0
  let close = open
  for (; close < statement.length; close++) {
    if (statement[close] === '(') depth++
    if (statement[close] === ')' && --depth === 0) break
  }
  const where = /^\s*WHERE\s+([\s\S]*)$/i.exec(statement.slice(close + 1))
  return [statement.slice(open + 1, close), where ? where[1]! : null]
}

function migrated(db: DatabaseSync, name: string): TableShape {
  const columns = Object.fromEntries(
    (
      db.prepare(`PRAGMA table_info("${name}")`).all() as {
        name: string
        type: string
        notnull: number
        dflt_value: string | null
        pk: number
      }[]
    ).map((column) => [
      column.name,
      {
        type: column.type.toUpperCase(),
        notNull: column.notnull === 1 || column.pk > 0,
        primaryKey: column.pk > 0,
        default: column.dflt_value === null ? null : normalize(column.dflt_value),
      },
    ]),
  )
  const indexes: Record<string, IndexShape> = {}
  for (const index of db.prepare(`PRAGMA index_list("${name}")`).all() as {
    name: string
    unique: number
    origin: string
  }[]) {
    if (index.origin === 'pk') continue // the table's PRIMARY KEY, compared as the columns' primaryKey
    const { sql } = db
      .prepare('SELECT sql FROM sqlite_master WHERE type = ? AND name = ?')
      .get('index', index.name) as { sql: string }
    const [list, where] = indexParts(sql)
    const keys = (
      db.prepare(`PRAGMA index_xinfo("${index.name}")`).all() as { cid: number; name: string | null; key: number }[]
    ).filter((key) => key.key === 1)
    const expressions = splitTopLevel(list)
    indexes[index.name] = {
      unique: index.unique === 1,
      on: keys.map((key, at) => key.name ?? normalize(expressions[at]!)),
      where: where ? normalize(where) : null,
    }
  }
  const keys = new Map<number, ForeignKeyShape>()
  for (const key of db.prepare(`PRAGMA foreign_key_list("${name}")`).all() as {
    id: number
    table: string
    from: string
    to: string
    on_delete: string
  }[]) {
    const shape = keys.get(key.id) ?? {
      columns: [],
      table: key.table,
      references: [],
      onDelete: key.on_delete.toUpperCase(),
    }
    shape.columns.push(key.from)
    shape.references.push(key.to)
    keys.set(key.id, shape)
  }
  return { columns, indexes, foreignKeys: [...keys.values()] }
}

/**
 * Defaults a migration had to give to ADD a NOT NULL column (SQLite requires one) and the schema leaves out on
 * purpose, so that every insert names its value (0010_upload_engine.sql).
 */
const MIGRATION_ONLY_DEFAULTS: Record<string, Record<string, string>> = {
  uploads: { part_bytes: '5242880', expires_at: '0' },
}

const tables: SQLiteTable[] = Object.values(schema as Record<string, unknown>).filter((value): value is SQLiteTable =>
  is(value, SQLiteTable),
)
const db = migratedDatabase()

describe('worker/db/schema.ts against migrations/', () => {
  it('declares exactly the tables the migrations create', () => {
    const created = (
      db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all() as {
        name: string
      }[]
    )
      .map((row) => row.name)
      .sort()
    expect(tables.map((table) => getTableConfig(table).name).sort()).toEqual(created)
  })

  for (const table of tables) {
    const name = getTableConfig(table).name
    it(`declares ${name} as the migrations leave it: columns, indexes, foreign keys`, () => {
      const byColumns = (a: ForeignKeyShape, b: ForeignKeyShape) => a.columns.join().localeCompare(b.columns.join())
      const ours = declared(table)
      const theirs = migrated(db, name)
      for (const [column, value] of Object.entries(MIGRATION_ONLY_DEFAULTS[name] ?? {})) {
        expect(theirs.columns[column]?.default).toBe(value)
        theirs.columns[column]!.default = null
      }
      expect({ ...ours, foreignKeys: ours.foreignKeys.sort(byColumns) }).toEqual({
        ...theirs,
        foreignKeys: theirs.foreignKeys.sort(byColumns),
      })
    })
  }
})

describe('migrations/0017_error_codes.sql', () => {
  it('gives the jobs failed before it the code their status and message meant, and leaves no table behind', () => {
    const db = migratedDatabase({
      name: '0017_error_codes.sql',
      run: (db) =>
        db.exec(`
          INSERT INTO users (id, email, password_hash, role, security_stamp, created_at, updated_at) VALUES ('u', 'a@example.com', 'h', 'user', 's', 0, 0);
          INSERT INTO jobs (id, user_id, file_id, status, error, error_status, created_at, updated_at) VALUES
            ('j1', 'u', 'f', 'failed', 'x failed: storage quota exceeded: 1 of 2 bytes used', 413, 0, 0),
            ('j2', 'u', 'f', 'failed', 'x is 9 bytes; this conversion takes at most 8', 413, 0, 0),
            ('j3', 'u', 'f', 'failed', 'gave up after 6 attempts', 503, 0, 0),
            ('j4', 'u', 'f', 'failed', 'the input is corrupt', 422, 0, 0),
            ('j5', 'u', 'f', 'done', NULL, NULL, 0, 0);`),
    })
    expect(
      db
        .prepare('SELECT id, error_code FROM jobs ORDER BY id')
        .all()
        .map((row) => ({ ...row })),
    ).toEqual([
      { id: 'j1', error_code: 'QUOTA_EXCEEDED' },
      { id: 'j2', error_code: 'FILE_TOO_LARGE' },
      { id: 'j3', error_code: 'CONVERTER_UNAVAILABLE' },
      { id: 'j4', error_code: 'CONVERSION_FAILED' },
      { id: 'j5', error_code: null },
    ])
    expect(tables.length).toBe(
      (
        db
          .prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
          .get() as { n: number }
      ).n,
    )
  })
})
