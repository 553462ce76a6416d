// Squoosh's PNG decoder (Rust's png crate in WASM, @jsquash/png) for the PNGs png.ts does not read (palette, 16-bit,
// fewer bits, interlaced, tRNS), in a fresh instance per image, dropped with it. wasm-bindgen's glue keeps one
// instance per isolate (its `wasm` is module state, and its init refuses a second), which stayed at its largest
// picture's heap (86 MiB after a 12 MP image) for every later step. These are the glue's imports for `decode`
// alone, each instance with its own table of objects; the pixels stay in the instance's heap (no copy out of it).
// The package's own .d.ts for this file describes the instance exports; the bundler gives the module.
import * as pngWasmImport from '@jsquash/png/codec/pkg/squoosh_png_bg.wasm'
import type { RawImage } from '../png/encode'

const pngWasm = (pngWasmImport as unknown as { default: WebAssembly.Module }).default

interface SquooshPngExports {
  readonly memory: WebAssembly.Memory
  __wbindgen_malloc(size: number, align: number): number
  decode(pointer: number, length: number): number
}

/** wasm-bindgen's table of the JavaScript values the module holds: indices below 132 are its constants. */
class ObjectTable {
  private readonly slots: unknown[] = [...new Array(128).fill(undefined), undefined, null, true, false]
  private next = this.slots.length

  add(value: unknown): number {
    if (this.next === this.slots.length) this.slots.push(this.slots.length + 1)
    const index = this.next
    this.next = this.slots[index] as number
    this.slots[index] = value
    return index
  }
  get(index: number): unknown {
    return this.slots[index]
  }
  take(index: number): unknown {
    const value = this.slots[index]
    if (index >= 132) {
      this.slots[index] = this.next
      this.next = index
    }
    return value
  }
}

/** The decoded picture as the module hands it over: where its RGBA bytes are in the heap. */
interface HeapPixels {
  readonly pointer: number
  readonly length: number
  readonly width: number
  readonly height: number
}

/**
 * The imports the module names, matched on their names without wasm-bindgen's hash suffix. The pixels' block is
 * neither copied nor freed (the glue copied it out, then freed it): it stays allocated, so nothing the decoder frees
 * afterwards writes over it, and goes with the instance.
 */
function importsFor(objects: ObjectTable, exports: () => SquooshPngExports): WebAssembly.Imports {
  const memory = () => exports().memory
  const handlers: Record<string, (...args: number[]) => unknown> = {
    __wbindgen_memory: () => objects.add(memory()),
    __wbg_buffer: (value) => objects.add((objects.get(value) as WebAssembly.Memory).buffer),
    __wbg_newwithbyteoffsetandlength: (buffer, offset, length) =>
      objects.add(new Uint16Array(objects.get(buffer) as ArrayBuffer, offset! >>> 0, length! >>> 0)),
    __wbindgen_object_drop_ref: (value) => {
      objects.take(value)
    },
    __wbg_newwithownedu8clampedarrayandsh: (pointer, length, width, height) =>
      objects.add({ pointer: pointer! >>> 0, length: length! >>> 0, width: width! >>> 0, height: height! >>> 0 }),
    __wbindgen_throw: (pointer, length) => {
      throw new Error(new TextDecoder().decode(new Uint8Array(memory().buffer, pointer, length)))
    },
  }
  const wbg: Record<string, (...args: number[]) => unknown> = {}
  for (const { module, name } of WebAssembly.Module.imports(pngWasm)) {
    if (module !== 'wbg') continue
    const handler = handlers[name] ?? handlers[name.replace(/_[0-9a-f]{16}$/, '')]
    wbg[name] =
      handler ??
      (() => {
        throw new Error(`${name} is not available to the PNG decoder`)
      })
  }
  return { wbg }
}

/** Decodes a PNG to 8-bit RGBA in a fresh instance; the pixels are a view of its heap, which goes with the image. */
export function decodePngSquoosh(bytes: Uint8Array): RawImage {
  const objects = new ObjectTable()
  let exports: SquooshPngExports | undefined
  const instance = new WebAssembly.Instance(
    pngWasm,
    importsFor(objects, () => exports!),
  )
  exports = instance.exports as unknown as SquooshPngExports
  const pointer = exports.__wbindgen_malloc(bytes.byteLength, 1) >>> 0
  new Uint8Array(exports.memory.buffer, pointer, bytes.byteLength).set(bytes)
  const decoded = objects.take(exports.decode(pointer, bytes.byteLength)) as HeapPixels | undefined
  if (!decoded?.width) throw new Error('the PNG image cannot be decoded')
  const data = new Uint8Array(exports.memory.buffer, decoded.pointer, decoded.length)
  // The closures above reach the instance through this variable: emptied, as the rows' are (PixelRows, png/encode.ts).
  exports = undefined
  return { width: decoded.width, height: decoded.height, channels: 4, data }
}
