// The drizzle client over the D1 binding, with the schema. One per binding and isolate: building it maps the
// relations of every table (docs/benchmarks.md, "Accounts"), and it keeps no per-request state.
// Each request runs its statements in its own D1 session (D1's Sessions API, read replication, db/sessions.ts): a
// statement goes to the session of the request running it, or to the binding outside any (the queue consumer, the
// sweeps).
import { drizzle } from 'drizzle-orm/d1'
import * as schema from './schema'
import { currentSession } from './sessions'

export type Database = ReturnType<typeof drizzle<typeof schema, D1Database>>

/**
 * A statement that picks its target when it runs: drizzle prepares a statement once and keeps it (the auth check is
 * prepared once per isolate), while the session belongs to the request that runs it.
 */
class RoutedStatement {
  constructor(
    private readonly binding: D1Database,
    readonly query: string,
    private readonly values: unknown[] = [],
  ) {}

  bind(...values: unknown[]): RoutedStatement {
    return new RoutedStatement(this.binding, this.query, values)
  }

  /** The real statement on `target` (the request's session, or the binding). */
  on(target: D1Database | D1DatabaseSession): D1PreparedStatement {
    const statement = target.prepare(this.query)
    return this.values.length > 0 ? statement.bind(...this.values) : statement
  }

  private get target(): D1Database | D1DatabaseSession {
    return currentSession() ?? this.binding
  }

  first<T>(column?: string): Promise<T | null> {
    return column === undefined ? this.on(this.target).first<T>() : this.on(this.target).first<T>(column)
  }

  all<T>(): Promise<D1Result<T>> {
    return this.on(this.target).all<T>()
  }

  run<T>(): Promise<D1Result<T>> {
    return this.on(this.target).run<T>()
  }

  raw<T>(options?: { columnNames?: boolean }): Promise<T[] | [string[], ...T[]]> {
    return options?.columnNames ? this.on(this.target).raw<T>({ columnNames: true }) : this.on(this.target).raw<T>()
  }
}

/** The binding as drizzle sees it: statements routed to the running request's session. */
function routedBinding(binding: D1Database): D1Database {
  const routed = {
    prepare: (query: string) => new RoutedStatement(binding, query),
    batch: <T>(statements: RoutedStatement[]) => {
      const target = currentSession() ?? binding
      return target.batch<T>(statements.map((statement) => statement.on(target)))
    },
    exec: (query: string) => binding.exec(query),
    withSession: (constraint?: string) => binding.withSession(constraint),
    dump: () => binding.dump(),
  }
  return routed as unknown as D1Database
}

const clients = new WeakMap<D1Database, Database>()

export function openDatabase(d1: D1Database): Database {
  let client = clients.get(d1)
  if (!client) {
    client = drizzle(routedBinding(d1), { schema })
    clients.set(d1, client)
  }
  return client
}
