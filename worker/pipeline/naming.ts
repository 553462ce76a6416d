// Names of converted files: "<source name without extension> (<n> of <m>)<target extension>".

export function outputName(sourceName: string, position: number, total: number, extension: string): string {
  const dot = sourceName.lastIndexOf('.')
  const base = dot > 0 ? sourceName.slice(0, dot) : sourceName
  return `${base} (${position} of ${total})${extension}`
}
