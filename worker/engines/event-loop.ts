// Giving the isolate back between slices of a long conversion. One isolate runs many requests at once (locally
// the fetch handler and the queue consumer share it; on Cloudflare they may): a synchronous call holds all of
// them, and so does a chain of microtasks (a resolved await lets nothing else in). Engines call `workTurns` in
// their loops so that no stretch between two turns does more than a few tens of milliseconds of work.

/**
 * A macrotask turn of the event loop: other requests' I/O and timers run before it resolves. A timer, not the
 * clock: workerd's clock does not advance during synchronous work, so the budget below counts work, not time.
 */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0))
}

/**
 * Work counted in units the caller chooses (bytes filtered and compressed, pixels drawn): each call adds to the
 * count and yields a turn once `budget` units have been done since the last one.
 */
export function workTurns(budget: number): (units: number) => Promise<void> | undefined {
  let done = 0
  return (units) => {
    done += units
    if (done < budget) return undefined
    done = 0
    return yieldToEventLoop()
  }
}

/** The return value of a generator that pauses (yields nothing) between slices of its work, a turn at each pause. */
export async function inTurns<T>(slices: Generator<void, T>): Promise<T> {
  for (;;) {
    const step = slices.next()
    if (step.done) return step.value
    await yieldToEventLoop()
  }
}
