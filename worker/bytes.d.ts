// Types for the platform's byte encoders (TC39 "Uint8Array to/from base64 and hex", in workerd; TypeScript 5.9's lib
// does not declare them yet). Node 22 lacks them: code that runs on Node (sidecar/) must not call them.
interface Uint8Array<TArrayBuffer extends ArrayBufferLike = ArrayBufferLike> {
  toHex(): string
  toBase64(options?: { alphabet?: 'base64' | 'base64url'; omitPadding?: boolean }): string
}

interface Uint8ArrayConstructor {
  fromHex(text: string): Uint8Array<ArrayBuffer>
  fromBase64(
    text: string,
    options?: { alphabet?: 'base64' | 'base64url'; lastChunkHandling?: 'loose' | 'strict' | 'stop-before-partial' },
  ): Uint8Array<ArrayBuffer>
}
