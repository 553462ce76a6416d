// A counting wrapper of the D1 binding: every statement run (first, all, run, raw) and every batch is one round trip
// to D1, and a round trip's depth is one more than the deepest one that had finished when it started. The deepest is
// the number of *sequential* round trips a request waited for: two statements in flight together (one batch, or
// Promise.all) cost one. Counts, not times: the same for the same code on any machine.

export interface RoundTrip {
  depth: number
  /** The SQL of the statements (a batch has several), for the message of a failing test. */
  statements: string[]
  /** How the session that ran it was opened: a constraint, a bookmark, or `binding` outside any session. */
  session: string
}

export class D1Recorder {
  trips: RoundTrip[] = []
  /** The constraint or bookmark each session was opened with, in order. */
  sessions: string[] = []
  isRecording = false
  private finishedDepth = 0

  start(): void {
    this.trips = []
    this.sessions = []
    this.finishedDepth = 0
    this.isRecording = true
  }

  stop(): { sequential: number; trips: RoundTrip[]; sessions: string[] } {
    this.isRecording = false
    return {
      sequential: Math.max(0, ...this.trips.map((trip) => trip.depth)),
      trips: this.trips,
      sessions: this.sessions,
    }
  }

  private async count<T>(session: string, statements: string[], run: () => Promise<T>): Promise<T> {
    if (!this.isRecording) return run()
    const trip = { depth: this.finishedDepth + 1, statements, session }
    this.trips.push(trip)
    try {
      return await run()
    } finally {
      this.finishedDepth = Math.max(this.finishedDepth, trip.depth)
    }
  }

  private statement(inner: D1PreparedStatement, query: string, session: string): D1PreparedStatement {
    const wrapped = {
      inner,
      query,
      bind: (...values: unknown[]) => this.statement(inner.bind(...values), query, session),
      first: (column?: string) =>
        this.count(session, [query], () => (column === undefined ? inner.first() : inner.first(column))),
      all: () => this.count(session, [query], () => inner.all()),
      run: () => this.count(session, [query], () => inner.run()),
      raw: (options?: { columnNames?: boolean }) =>
        this.count(session, [query], () => (options?.columnNames ? inner.raw({ columnNames: true }) : inner.raw())),
    }
    return wrapped as unknown as D1PreparedStatement
  }

  private target<T extends D1Database | D1DatabaseSession>(inner: T, session: string) {
    const unwrap = (statements: D1PreparedStatement[]) =>
      statements.map((statement) => (statement as unknown as { inner: D1PreparedStatement }).inner)
    const queries = (statements: D1PreparedStatement[]) =>
      statements.map((statement) => (statement as unknown as { query: string }).query)
    return {
      prepare: (query: string) => this.statement(inner.prepare(query), query, session),
      batch: (statements: D1PreparedStatement[]) =>
        this.count(session, queries(statements), () => inner.batch(unwrap(statements))),
    }
  }

  /** The binding, counted; its sessions are counted too. */
  wrap(binding: D1Database): D1Database {
    const wrapped = {
      ...this.target(binding, 'binding'),
      exec: (query: string) => this.count('binding', [query], () => binding.exec(query)),
      dump: () => binding.dump(),
      withSession: (constraint?: string) => {
        if (this.isRecording) this.sessions.push(constraint ?? 'first-unconstrained')
        const session = binding.withSession(constraint)
        return {
          ...this.target(session, constraint ?? 'first-unconstrained'),
          getBookmark: () => session.getBookmark(),
        }
      },
    }
    return wrapped as unknown as D1Database
  }
}
