// Counting the event loop's turns while some work runs: a 0 ms timer fires only when the work gives the loop a
// turn (a chain of resolved promises does not), so the count says whether other requests could have run.

/**
 * `work`'s result and how many 0 ms timers fired while it ran (each re-arms itself until the work is done);
 * `onTurn` is called at each.
 */
export async function turnsDuring<T>(
  work: () => Promise<T>,
  onTurn?: () => void,
): Promise<{ result: T; turns: number }> {
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

/**
 * `work`'s result, the turns taken, and the most units of work done between two turns: the work (or a spy on what it
 * calls) reports its units through `count`; each turn turnsDuring counts closes a stretch.
 */
export async function longestStretchDuring<T>(
  work: (count: (units: number) => void) => Promise<T>,
): Promise<{ result: T; turns: number; longest: number }> {
  let units = 0
  let atLastTurn = 0
  let longest = 0
  const closeStretch = () => {
    longest = Math.max(longest, units - atLastTurn)
    atLastTurn = units
  }
  const { result, turns } = await turnsDuring(() => work((done) => (units += done)), closeStretch)
  closeStretch()
  return { result, turns, longest }
}
