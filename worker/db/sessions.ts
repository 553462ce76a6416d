// The D1 session of the request running (D1's Sessions API, read replication): `runInSession` puts it in an
// AsyncLocalStorage, and the drizzle client's statements (db/client.ts) go to whichever session the request running
// them is in. Apart from the client, so that the shell's D1 session middleware (db/replicas.ts) loads no drizzle.
import { AsyncLocalStorage } from 'node:async_hooks'

const sessions = new AsyncLocalStorage<D1DatabaseSession>()

/** Runs `work` with every statement of the request in `session` (its reads see its writes, its bookmark grows). */
export function runInSession<T>(session: D1DatabaseSession, work: () => Promise<T>): Promise<T> {
  return sessions.run(session, work)
}

/** The session of the request running, or undefined outside any (the queue consumer, the sweeps). */
export function currentSession(): D1DatabaseSession | undefined {
  return sessions.getStore()
}
