// The one way tests wait (in workerd and in Node): read until a condition holds, and fail loudly at a deadline,
// naming what never happened and the last value read. Deadlines are sized for a loaded 2-core machine; a test
// that waits this long has failed, it never passes by waiting less.

/** Deadline for what waits on the queue, LibreOffice or a loopback server on a busy machine. */
export const LOADED_DEADLINE_MS = 90_000

export interface UntilOptions {
  readonly timeoutMs?: number
  readonly intervalMs?: number
}

/**
 * Reads until `done(value)` holds and answers that value; throws after `timeoutMs` with `what` and the last
 * value read. `done` defaults to truthiness.
 */
export async function until<T>(
  what: string,
  read: () => T | Promise<T>,
  done: (value: T) => boolean = Boolean,
  options: UntilOptions = {},
): Promise<T> {
  const { timeoutMs = LOADED_DEADLINE_MS, intervalMs = 50 } = options
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await read()
    if (done(value)) return value
    if (Date.now() > deadline)
      throw new Error(`${what} did not happen within ${timeoutMs} ms; last seen: ${describe(value)}`)
    await new Promise((resolve) => setTimeout(resolve, intervalMs))
  }
}

function describe(value: unknown): string {
  try {
    return JSON.stringify(value)?.slice(0, 500) ?? String(value)
  } catch {
    return String(value)
  }
}
