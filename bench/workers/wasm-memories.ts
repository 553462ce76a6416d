// Every WebAssembly.Memory the isolate makes, for `npm run check:deploy` (bench/workers/deploy-memory.ts imports this
// first, before any engine). Memories are held weakly: an engine that drops its instance lets its memory go, and the
// check must see that. Bench only: the Workers themselves do not do this.
const memories: WeakRef<WebAssembly.Memory>[] = []
/** Memories made since the step began, held until it ends: their sizes then are the step's peak (they never shrink). */
let held: WebAssembly.Memory[] = []

/** A module's memory is one of its exports (most builds) or one of its imports (`env.memory`). */
function record(instance: WebAssembly.Instance, imports: WebAssembly.Imports | undefined): void {
  const imported = Object.values(imports ?? {}).flatMap((namespace) =>
    Object.values(namespace as Record<string, unknown>),
  )
  for (const value of [...Object.values(instance.exports), ...imported]) {
    if (!(value instanceof WebAssembly.Memory) || held.includes(value)) continue
    memories.push(new WeakRef(value))
    held.push(value)
  }
}

// A Proxy, not a subclass: engines check `instanceof WebAssembly.Instance` and must keep getting true.
WebAssembly.Instance = new Proxy(WebAssembly.Instance, {
  construct(target, args) {
    const instance = Reflect.construct(target, args) as WebAssembly.Instance
    record(instance, args[1] as WebAssembly.Imports | undefined)
    return instance
  },
})
const instantiate = WebAssembly.instantiate
WebAssembly.instantiate = (async (source: WebAssembly.Module, imports?: WebAssembly.Imports) => {
  const result = await instantiate(source, imports)
  record(('instance' in result ? result.instance : result) as WebAssembly.Instance, imports)
  return result
}) as typeof WebAssembly.instantiate

/**
 * A full collection from a fresh task, twice: V8 may scan the stack conservatively, and a stale word on a deep
 * stack kept a dropped PDFium instance (69 MiB) alive through one collection in some runs and not in others.
 */
async function collect(): Promise<void> {
  for (let i = 0; i < 2; i++) {
    await new Promise((resolve) => setTimeout(resolve, 0))
    ;(globalThis as { gc?: () => void }).gc?.()
  }
}

/** Bytes of every memory still alive (after a collection, when the isolate exposes gc). */
export async function liveWasmBytes(): Promise<number> {
  await collect()
  let bytes = 0
  for (const ref of memories) bytes += ref.deref()?.buffer.byteLength ?? 0
  return bytes
}

/**
 * Runs a step and answers its peak WASM bytes: the memories alive when it began plus every one it made, each at its
 * size when the step ends (a memory never shrinks), as if none had been collected during the step; and each one's.
 */
export async function measureStep<T>(
  step: () => Promise<T>,
): Promise<{ result: T; peakWasmBytes: number; wasmMemoryBytes: number[] }> {
  await collect()
  held = memories.map((ref) => ref.deref()).filter((memory) => memory !== undefined)
  try {
    const result = await step()
    const wasmMemoryBytes = held.map((memory) => memory.buffer.byteLength)
    return { result, peakWasmBytes: wasmMemoryBytes.reduce((sum, bytes) => sum + bytes, 0), wasmMemoryBytes }
  } finally {
    held = []
  }
}
