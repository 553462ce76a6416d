// Counting the event loop's turns while some work runs: a 0 ms timer fires only when the work gives the loop a
// turn (a chain of resolved promises does not), so the count says whether other requests could have run.

/**
 * `work`'s result and how many 0 ms timers fired while it ran (each re-arms itself until the work is done);
 * `onTurn` is called at each.
 */
export async function turnsDuring<T>(work: () => Promise<T>, onTurn?: () => void): Promise<{ result: T; turns: number }> {
  let turns = 0
  let running = true
  const tick = () => {
    if (!running) return
    turns++
    onTurn?.()
    setTimeout(tick, 0)
  }
  setTimeout(tick, 0)
  try {
    const result = await work()
    return { result, turns }
  } finally {
    running = false
  }
}
