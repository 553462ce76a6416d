// Types for the part of pako 1.x (MIT, no bundled types) the PDF stream pre-scan uses.
declare module 'pako' {
  export class Inflate {
    constructor(options: { raw?: boolean; chunkSize?: number })
    onData: (chunk: Uint8Array) => void
    push(data: Uint8Array, last: boolean): boolean
  }
  const pako: { Inflate: typeof Inflate }
  export default pako
}
