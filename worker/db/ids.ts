// Record ids: 24 lower-case hex characters (the shape Basefloor's Mongo ids have), the first 12 the creation
// time in milliseconds, so ids sort by creation and serve as pagination cursors.
export function newId(now = Date.now()): string {
  const random = crypto.getRandomValues(new Uint8Array(6))
  return now.toString(16).padStart(12, '0') + random.toHex()
}

export const ID_PATTERN = /^[0-9a-f]{24}$/
