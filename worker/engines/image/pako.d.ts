// Types for the part of pako 1.x (MIT, no bundled types) the PDF stream pre-scan and inflate.ts use.
declare module 'pako' {
  export class Inflate {
    constructor(options: { raw?: boolean; chunkSize?: number })
    onData: (chunk: Uint8Array) => void
    /** `mode`: true or false (finish or not), or a zlib flush mode. */
    push(data: Uint8Array, mode: boolean | number): boolean
    /** zlib's status after a fault (0: none), its message, and whether the stream's end was reached. */
    readonly err: number
    readonly msg: string
    readonly ended: boolean
  }
  const pako: { Inflate: typeof Inflate }
  export default pako
}
