// Which characters a TrueType font has glyphs for, from its cmap table (formats 4 and 12), so characters no
// bundled font covers are drawn as U+FFFD instead of silently disappearing.

export function fontCoverage(font: ArrayBuffer): (codePoint: number) => boolean {
  const view = new DataView(font)
  const tables = view.getUint16(4)
  let cmap = -1
  for (let i = 0; i < tables; i++) {
    const record = 12 + i * 16
    if (view.getUint32(record) === 0x636d6170) cmap = view.getUint32(record + 8) // 'cmap'
  }
  if (cmap < 0) return () => false
  const ranges: Array<[number, number]> = []
  const subtables = view.getUint16(cmap + 2)
  let best: { offset: number; format: number } | undefined
  for (let i = 0; i < subtables; i++) {
    const platform = view.getUint16(cmap + 4 + i * 8)
    const encoding = view.getUint16(cmap + 6 + i * 8)
    const offset = cmap + view.getUint32(cmap + 8 + i * 8)
    const format = view.getUint16(offset)
    const isUnicode = platform === 0 || (platform === 3 && (encoding === 1 || encoding === 10))
    if (isUnicode && (format === 12 || (format === 4 && best?.format !== 12))) best = { offset, format }
  }
  if (!best) return () => false
  if (best.format === 12) {
    const groups = view.getUint32(best.offset + 12)
    for (let g = 0; g < groups; g++)
      ranges.push([view.getUint32(best.offset + 16 + g * 12), view.getUint32(best.offset + 20 + g * 12)])
  } else {
    const segments = view.getUint16(best.offset + 6) / 2
    const ends = best.offset + 14
    const starts = ends + segments * 2 + 2
    for (let s = 0; s < segments; s++) {
      const end = view.getUint16(ends + s * 2)
      const start = view.getUint16(starts + s * 2)
      if (start !== 0xffff) ranges.push([start, end])
    }
  }
  ranges.sort((a, b) => a[0] - b[0])
  return (codePoint) => {
    let low = 0
    let high = ranges.length - 1
    while (low <= high) {
      const mid = (low + high) >> 1
      const [start, end] = ranges[mid]!
      if (codePoint < start) high = mid - 1
      else if (codePoint > end) low = mid + 1
      else return true
    }
    return false
  }
}
