// Names of converted files, the seed's rule: "<name> (<n> of <m>)", where <name> is the uploaded file's name
// without its extension (at every step of a chain) and the extension lives only in the record's `extension`.

export function outputName(baseName: string, position: number, total: number): string {
  return `${baseName} (${position} of ${total})`
}
