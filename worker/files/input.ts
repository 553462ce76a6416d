// What converters read from R2, through the files module: a stored file as a converter's input (bytes read on
// demand, streamed or, for engines that need the whole file, read once within a size limit checked before reading),
// and the read-only resources under a prefix (fonts).
import { ConversionError, type ConversionInput, type ResourceReader } from '../converters/converter'
import type { FileRow } from './records'

export function storedInput(bucket: R2Bucket, file: FileRow): ConversionInput {
  const open = async () => {
    const object = await bucket.get(file.key)
    if (!object) throw new ConversionError(`the bytes of "${file.name}" are missing from storage`)
    return object
  }
  return {
    name: file.name,
    extension: file.extension,
    contentType: file.contentType,
    size: file.size,
    stream() {
      const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>()
      open()
        .then((object) => object.body.pipeTo(writable))
        .catch((error) => writable.abort(error).catch(() => {}))
      return readable
    },
    async bytes(maxBytes) {
      if (file.size > maxBytes)
        throw new ConversionError(`"${file.name}" is ${file.size} bytes; this conversion takes at most ${maxBytes}`, {
          code: 'FILE_TOO_LARGE',
        })
      return new Uint8Array(await (await open()).arrayBuffer())
    },
  }
}

/** A read-only view of the files under `prefix`; undefined when the prefix is empty (it would be every file). */
export function resourceReader(bucket: R2Bucket, prefix: string): ResourceReader | undefined {
  if (!prefix) return undefined
  return {
    list: async (limit) => (await bucket.list({ prefix, limit })).objects.map(({ key, size }) => ({ key, size })),
    read: async (key) => (key.startsWith(prefix) ? (await bucket.get(key))?.arrayBuffer() : undefined),
  }
}
