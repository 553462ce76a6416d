// A stored file as a converter's input: bytes read from R2 on demand, streamed or (for engines that need the
// whole file) read once within a size limit checked before reading.
import { ConversionError, type ConversionInput } from '../converters/converter'
import type { FileRow } from '../files/records'

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
      if (file.size > maxBytes) throw new ConversionError(`"${file.name}" is ${file.size} bytes; this conversion takes at most ${maxBytes}`, { status: 413 })
      return new Uint8Array(await (await open()).arrayBuffer())
    },
  }
}
